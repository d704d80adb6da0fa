"""Validation of the analytical-state models."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from stateguard.errors import StoreError
from stateguard.state import (
    AnalyticalState,
    Constraint,
    Relation,
    StaleMark,
    StateIndexEntry,
    VariableRef,
)


def test_variable_ref_key() -> None:
    assert VariableRef(name="margin", version=2, value_summary="0.38").key == "margin@v2"


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"name": "", "version": 1}, "name"),
        ({"name": "x", "version": -1}, "version"),
    ],
)
def test_variable_ref_rejects_bad_fields(kwargs: dict, fragment: str) -> None:
    with pytest.raises(ValidationError, match=fragment):
        VariableRef(**kwargs)


def test_relation_init_has_no_target() -> None:
    assert Relation(type="init").related_state_id is None
    with pytest.raises(ValidationError, match="'init' relation has no target"):
        Relation(type="init", related_state_id="S1")


@pytest.mark.parametrize("rtype", ["progress", "branch", "invalidate", "combine"])
def test_non_init_relation_needs_target(rtype: str) -> None:
    with pytest.raises(ValidationError, match="needs a non-empty related_state_id"):
        Relation(type=rtype)
    with pytest.raises(ValidationError, match="needs a non-empty related_state_id"):
        Relation(type=rtype, related_state_id="")
    assert Relation(type=rtype, related_state_id="S1").summary == f"{rtype}→S1"


def test_unknown_relation_type_rejected() -> None:
    with pytest.raises(ValidationError):
        Relation(type="follows", related_state_id="S1")


def test_init_excludes_other_relations(mk) -> None:
    with pytest.raises(ValidationError, match="excludes other relations"):
        mk("S2", rels=(("init", None), ("progress", "S1")))


def test_self_relation_rejected(mk) -> None:
    with pytest.raises(ValidationError, match="targets itself"):
        mk("S2", rels=(("progress", "S2"),))


def test_identical_relations_deduped_in_order(mk) -> None:
    state = mk("S3", rels=(("progress", "S1"), ("combine", "S2"), ("progress", "S1")))
    assert [r.summary for r in state.relations] == ["progress→S1", "combine→S2"]
    assert state.related_ids == ("S1", "S2")


def test_init_relation_deduped_is_valid(mk) -> None:
    state = mk("S1", rels=(("init", None), ("init", None)))
    assert state.relations == (Relation(type="init"),)


def test_source_interval(mk) -> None:
    assert mk("S1", source_step_start=2, source_step_end=2).source_step_end == 2
    assert mk("S1", source_step_start=4).source_step_end is None
    with pytest.raises(ValidationError, match="source_step_start=5 is after source_step_end=3"):
        mk("S1", source_step_start=5, source_step_end=3)


def test_committed_needs_issue(mk) -> None:
    assert mk("S1", issue="  ").status == "draft"
    with pytest.raises(ValidationError, match="non-empty issue"):
        mk("S1", issue="  ", status="committed")


def test_id_must_be_nonblank_token(mk) -> None:
    with pytest.raises(ValidationError):
        mk("")
    with pytest.raises(ValidationError):
        mk("S 1")


def test_models_are_frozen_and_strict(mk) -> None:
    state = mk("S1")
    with pytest.raises(ValidationError):
        state.issue = "changed"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        AnalyticalState(id="S1", issue="x", bogus=1)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        Constraint(text="")


def test_with_changes_returns_validated_copy(mk) -> None:
    state = mk("S1", issue="old", variables=(("x", 1, "1"),))
    changed = state.with_changes(issue="new", conclusions=["c1"])
    assert (changed.issue, changed.conclusions) == ("new", ("c1",))
    assert state.issue == "old"
    assert changed.used_variables == state.used_variables
    with pytest.raises(ValidationError, match="targets itself"):
        state.with_changes(relations=[Relation(type="branch", related_state_id="S1")])


def test_with_changes_rejects_unknown_field(mk) -> None:
    with pytest.raises(StoreError, match=r"S1.*unknown field.*'colour'"):
        mk("S1").with_changes(colour="red")


def test_with_changes_on_committed_raises(mk) -> None:
    committed = mk("S7", status="committed", committed_at=1.0)
    with pytest.raises(StoreError, match=r"S7.*immutable"):
        committed.with_changes(issue="rewritten")


def test_json_round_trip(mk) -> None:
    state = mk(
        "S4",
        rels=(("combine", "S1"), ("combine", "S2")),
        variables=(("m", 3, "0.5"),),
        conclusions=("a", "b"),
        constraints=(Constraint(text="no refunds", code="assert (df.refund == 0).all()"),),
        turn=2,
    )
    assert AnalyticalState.model_validate_json(state.model_dump_json()) == state


def test_index_entry_of(mk) -> None:
    state = mk("S2", issue="why", rels=(("progress", "S1"),), variables=(("m", 2, "x"),), turn=1)
    entry = StateIndexEntry.of(state)
    assert entry == StateIndexEntry(
        id="S2", issue="why", variables=("m@v2",), relations=("progress→S1",), turn=1
    )


def test_a_version_1_store_is_migrated_on_open(tmp_path) -> None:
    """Files written before `unverified_steps` existed open, gain the column, and keep rows."""
    import sqlite3

    from stateguard.state import store as store_mod

    v1 = "\n".join(
        line
        for line in store_mod._SCHEMA.splitlines()
        if "unverified_steps" not in line and "stale_marks" not in line
    )
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(v1 + "\nINSERT INTO schema_version (version) VALUES (1);")
    conn.execute(
        "INSERT INTO states (id, status, issue, constraints, used_variables, conclusions,"
        " relations) VALUES ('S1', 'draft', 'old', '[]', '[]', '[]', '[]')"
    )
    conn.commit()
    conn.close()
    with store_mod.StateStore(path) as st:
        assert st.get("S1").issue == "old" and st.get("S1").unverified_steps == ()
        done = st.commit(st.get("S1").with_changes(unverified_steps=(3,)))
        assert st.get("S1").unverified_steps == (3,) == done.unverified_steps


def test_a_version_2_store_is_migrated_on_open(tmp_path) -> None:
    """Files written before `stale_marks` existed open, gain the column, and keep rows."""
    import sqlite3

    from stateguard.state import StaleMark
    from stateguard.state import store as store_mod

    v2 = "\n".join(line for line in store_mod._SCHEMA.splitlines() if "stale_marks" not in line)
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(v2 + "\nINSERT INTO schema_version (version) VALUES (2);")
    conn.execute(
        "INSERT INTO states (id, status, issue, constraints, used_variables, conclusions,"
        " relations) VALUES ('S1', 'draft', 'old', '[]', '[]', '[]', '[]')"
    )
    conn.commit()
    conn.close()
    with store_mod.StateStore(path) as st:
        assert st.get("S1").stale_marks == ()
        st.commit(st.get("S1"))
        mark = StaleMark(state_id="S1", version="a@v1", outdated="a@v1", superseded_by="a@v2")
        st.save_draft(AnalyticalState(id="S2", issue="new", stale_marks=(mark,)))
        assert st.commit(st.get("S2")).stale_marks == (mark,)
    raw = sqlite3.connect(path)
    assert raw.execute("SELECT version FROM schema_version").fetchall() == [(3,)]
    raw.close()


def test_a_stale_mark_names_versions_and_another_state() -> None:
    with pytest.raises(ValidationError, match="version key"):
        StaleMark(state_id="S1", version="rate", outdated="rate@v1", superseded_by="rate@v2")
    mark = StaleMark(state_id="S1", version="rate@v1", outdated="rate@v1", superseded_by="rate@v2")
    assert mark.summary == "rate@v1 superseded by rate@v2"
    derived = mark.model_copy(update={"version": "cost@v1"})
    assert derived.summary == "cost@v1 ← rate@v1 superseded by rate@v2"
    with pytest.raises(ValidationError, match="names the state itself"):
        AnalyticalState(id="S1", issue="x", stale_marks=(mark,))
