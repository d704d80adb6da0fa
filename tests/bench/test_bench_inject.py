"""Fault injectors on code and on lineage facts (pure: no kernel)."""

from __future__ import annotations

import ast

import pytest

from stateguard.audit.joinfaults import FAULT_KINDS
from stateguard.bench.inject import (
    Candidate,
    TurnFacts,
    VersionFact,
    alias_for,
    candidates,
    choose,
    snapshot_code,
    substitute_name,
)
from stateguard.bench.mutations import ast_candidates

CODE = """# keep the comment
sel = orders[(orders.region == "north") & (orders.price > 10)]
n = len(sel)
avg = round(orders.price.mean(), 2)
top = orders.loc[orders.region.isin(["north", "south", "east"]), "price"].round(1)
"""


def facts(code: str = CODE, turn_id: int = 3, **kw) -> TurnFacts:
    return TurnFacts(turn_id=turn_id, code=code, ok=True, rerunnable=True, **kw)


def changed_lines(before: str, after: str) -> list[str]:
    old = before.splitlines()
    return [line for line in after.splitlines() if line not in old]


def test_flipped_comparison_negates_each_operator_once() -> None:
    found = ast_candidates("flipped-comparison", facts())
    assert [c.description for c in found] == ["== -> !=", "> -> <="]
    assert changed_lines(CODE, found[1].faulty_code) == [
        'sel = orders[(orders.region == "north") & (orders.price <= 10)]'
    ]
    for c in found:
        ast.parse(c.faulty_code)
        assert "# keep the comment" in c.faulty_code  # a splice, not a re-render
        assert c.node is not None and c.node["line"] == 2


@pytest.mark.parametrize(("op", "flipped"), [("<", ">="), ("<=", ">"), (">=", "<"), ("!=", "==")])
def test_flipped_comparison_operator_table(op: str, flipped: str) -> None:
    code = f"x = [v for v in values if v {op} 3]\n"
    (c,) = ast_candidates("flipped-comparison", facts(code))
    assert c.faulty_code == f"x = [v for v in values if v {flipped} 3]\n"


def test_scope_change_flips_category_equality_and_narrows_lists() -> None:
    found = ast_candidates("scope-change", facts())
    descriptions = [c.description for c in found]
    assert descriptions == ["== -> !=", 'drop "east" from the category list']
    assert changed_lines(CODE, found[1].faulty_code) == [
        'top = orders.loc[orders.region.isin(["north", "south"]), "price"].round(1)'
    ]
    # numeric comparisons are not category filters
    assert all("10" not in str(c.node) for c in found)
    (c,) = ast_candidates("scope-change", facts("ok = kind in ('a', 'b')\n"))
    assert c.faulty_code == "ok = kind in ('a',)\n"


def test_dropped_constraint_removes_filters_and_rounding() -> None:
    found = ast_candidates("dropped-constraint", facts())
    changed = {c.description: changed_lines(CODE, c.faulty_code) for c in found}
    assert changed["drop rounding"] in (
        ["avg = (orders.price.mean())"],
        ['top = (orders.loc[orders.region.isin(["north", "south", "east"]), "price"])'],
    )
    lines = [line for c in found for line in changed_lines(CODE, c.faulty_code)]
    assert "sel = (orders)" in lines
    assert 'sel = orders[orders.region == "north"]' in lines
    assert 'top = orders.loc[:, "price"].round(1)' in lines
    assert "avg = (orders.price.mean())" in lines
    (q,) = ast_candidates("dropped-constraint", facts("r = df.query('a > 1').b.sum()\n"))
    assert q.faulty_code == "r = (df).b.sum()\n"


def test_ast_injection_skips_turns_that_are_not_rerunnable_or_failed() -> None:
    not_rerunnable = TurnFacts(turn_id=2, code=CODE, ok=True, rerunnable=False)
    assert ast_candidates("flipped-comparison", not_rerunnable) == []
    assert ast_candidates("flipped-comparison", TurnFacts(turn_id=2, code=CODE, ok=False)) == []
    assert ast_candidates("flipped-comparison", facts("x = (\n")) == []
    with pytest.raises(ValueError, match="not an AST injection kind"):
        ast_candidates("stale-reuse", facts())


def test_substitute_name_replaces_global_loads_only() -> None:
    code = "f = lambda orders: orders + 1\nn = len(orders)  # orders\n[o for orders in x]\n"
    assert substitute_name(code, "orders", "orders_orig") == (
        "f = lambda orders: orders + 1\nn = len(orders_orig)  # orders\n[o for orders in x]\n"
    )
    assert substitute_name("orders = 1\nprint(orders)", "orders", "o2") is None  # rebinds it
    assert substitute_name("print(x)", "orders", "o2") is None  # never read
    assert alias_for("df", {"df_orig", "df_orig2"}) == "df_orig3"
    assert snapshot_code("df", "df_orig") == "import copy\ndf_orig = copy.deepcopy(df)"


def _stale_task() -> tuple[list[TurnFacts], dict[str, VersionFact]]:
    versions = {
        k: VersionFact(key=k, name=k.split("@")[0], version=int(k.split("@v")[1]), turn=t)
        for k, t in {"df@v1": 1, "df@v2": 2, "m@v1": 3, "m@v2": 4, "s@v1": 5}.items()
    }
    turns = [
        TurnFacts(turn_id=1, code="df = load()", ok=True, created=("df@v1",), rerunnable=True),
        TurnFacts(turn_id=2, code="df['x'] = 1", ok=True, reads=("df@v1",), created=("df@v2",)),
        TurnFacts(
            turn_id=3,
            code="m = df.x.sum()",
            ok=True,
            reads=("df@v2",),
            created=("m@v1",),
            rerunnable=True,
        ),
        TurnFacts(
            turn_id=4,
            code="m = df.x.mean()",
            ok=True,
            reads=("df@v2",),
            created=("m@v2",),
            rerunnable=True,
        ),
        TurnFacts(
            turn_id=5,
            code="s = m * 2\ns",
            ok=True,
            reads=("m@v2",),
            created=("s@v1",),
            rerunnable=True,
        ),
        TurnFacts(turn_id=6, code="df.x.max()", ok=False, reads=("df@v2",)),
    ]
    return turns, versions


def test_stale_candidates_follow_revisions_in_lineage() -> None:
    turns, versions = _stale_task()
    found = candidates("stale-reuse", turns, versions, {"df", "m", "s"})
    got = {(c.turn_id, c.variable, c.pre_version, c.read_version, c.revision_turn) for c in found}
    assert got == {
        (3, "df", "df@v1", "df@v2", 2),
        (4, "df", "df@v1", "df@v2", 2),
        (5, "m", "m@v1", "m@v2", 4),  # via the derived variable m, re-derived at turn 4
    }
    by_turn = {c.turn_id: c for c in found}
    assert by_turn[3].faulty_code == "m = df_orig.x.sum()"
    assert by_turn[5].alias == "m_orig" and by_turn[5].faulty_code == "s = m_orig * 2\ns"
    # turn 6 failed in the clean run, turn 2 is not rerunnable: never injected


def _cands(n: int) -> list[Candidate]:
    return [
        Candidate(
            kind="flipped-comparison",
            turn_id=2 + i % 3,
            faulty_code=f"x{i}",
            description=f"site {i}",
            node={"line": i, "col": 0},
        )
        for i in range(n)
    ]


def test_choose_is_seeded_prefers_silent_faults_and_spreads_turns() -> None:
    found = _cands(9)
    outcome = {c.ident: "none" for c in found}
    silent = found[4]
    outcome[silent.ident] = "silent"
    outcome[found[5].ident] = "crash"
    assert choose(found, outcome, seed=1, task_id="t") == [silent]
    two = choose(found, outcome, seed=1, task_id="t", max_injections=2)
    assert silent in two and found[5] in two and len({c.turn_id for c in two}) == 2
    assert choose(found, {}, seed=3, task_id="t") == choose(list(reversed(found)), {}, 3, "t")
    draws = {choose(found, {}, seed=s, task_id="t")[0].ident for s in range(20)}
    assert len(draws) > 1  # the seed matters
    assert len(choose(found, {}, 0, "t", max_injections=5)) == 3  # one per turn, 3 turns


JOIN_CODE = (
    "# keep the layout\n"
    "both = pd.merge(data1, data2, on='subject_id', how='outer')\n"
    "tests = all_data.merge(data3, on='subject_id')  # default inner\n"
)


def test_join_faults_splice_one_merge_call_at_a_time() -> None:
    found = ast_candidates("join-fault", facts(JOIN_CODE))
    by = {(c.node["line"], c.description.split(":")[0]): c.faulty_code for c in found}
    assert set(by) == {
        (2, "key_dropped"),
        (2, "how_inner"),
        (2, "how_inner_written"),
        (2, "key_format"),
        (2, "duplicate_key"),
        (3, "key_dropped"),
        (3, "key_format"),
        (3, "duplicate_key"),
    }  # line 3 is already inner: no how to drop
    for code in by.values():
        assert code.startswith("# keep the layout\n")  # a splice, comments kept
        assert code.count("\n") == JOIN_CODE.count("\n")
        assert (
            sum(a != b for a, b in zip(code.splitlines(), JOIN_CODE.splitlines(), strict=True)) == 1
        )
    assert "pd.merge(data1, data2, on='subject_id')" in by[(2, "how_inner")]
    assert "pd.merge(data1, data2, on='subject_id', how='inner')" in by[(2, "how_inner_written")]
    assert "tests = all_data.merge(data3, how='cross')  # default inner" in by[(3, "key_dropped")]
    assert "' ' + _r['subject_id'].astype(str)" in by[(2, "key_format")]
    assert "# default inner" in by[(2, "duplicate_key")]
    assert all(c.kind == "join-fault" for c in found)
    # every fault kind the audit plants has its own description
    assert {c.description.split(":")[0] for c in found} == set(FAULT_KINDS)


def test_join_faults_need_a_merge_and_a_rerunnable_or_restorable_turn() -> None:
    assert ast_candidates("join-fault", facts("x = df.groupby('a').sum()")) == []
    assert all(c.restore == () for c in ast_candidates("join-fault", facts(JOIN_CODE)))
    # not rerunnable, and nothing known to restore: no candidate
    not_rerunnable = TurnFacts(turn_id=2, code=JOIN_CODE, ok=True, rerunnable=False)
    assert ast_candidates("join-fault", not_rerunnable) == []
    # it rebinds `tests` from itself: the replay restores it before the redo
    rebinds = not_rerunnable.model_copy(update={"rebinds": ("tests",)})
    found = ast_candidates("join-fault", rebinds)
    assert found and all(c.restore == ("tests",) for c in found)
    # only join faults are planted that way
    flip = "tests = tests[tests.a > 1]"
    assert ast_candidates("flipped-comparison", facts(flip))
    assert ast_candidates("flipped-comparison", rebinds.model_copy(update={"code": flip})) == []
