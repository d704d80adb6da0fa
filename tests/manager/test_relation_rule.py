"""The relation rule on synthetic version sets: what a state read and produced decides
progress / combine / branch / invalidate / init; adding a column never invalidates."""

from __future__ import annotations

import re

import pytest

from stateguard.checks import Step
from stateguard.lineage import CellRecord, ReadRecord, VariableVersion
from stateguard.manager.binding import (
    infer_relations,
    is_bookkeeping,
    span_record,
    superseded,
)
from stateguard.state import AnalyticalState, VariableRef

_PART = re.compile(r"\[[^\]]*\]")


class Versions:
    """A stand-in for the lineage graph: versions made by hand, in creation order."""

    def __init__(self) -> None:
        self.by_key: dict[str, VariableVersion] = {}
        self.count: dict[str, int] = {}

    def add(
        self, name: str, kind: str = "bind", parents: tuple[str, ...] = (), summary: str = ""
    ) -> str:
        root = name.split("[", 1)[0]
        parts = tuple(_PART.findall(name[len(root) :]))
        self.count[name] = self.count.get(name, 0) + 1
        v = VariableVersion(
            name=name, version=self.count[name], cell=len(self.by_key), statement=0,
            kind=kind, parents=parents, summary=summary, root=root, parts=parts,
            seq=len(self.by_key) + 1,
        )  # fmt: skip
        self.by_key[v.key] = v
        return v.key

    def version(self, key: str) -> VariableVersion:
        return self.by_key[key]

    def versions(self, name: str) -> tuple[VariableVersion, ...]:
        return tuple(v for v in self.by_key.values() if v.name == name)

    def parts_of(self, name: str) -> tuple[str, ...]:
        names = (v.name for v in self.by_key.values() if v.root == name.split("[", 1)[0])
        return tuple(dict.fromkeys(n for n in names if n.startswith(name) and n != name))


def ref(key: str, role: str | None) -> VariableRef:
    name, _, version = key.rpartition("@v")
    return VariableRef(name=name, version=int(version), role=role)  # type: ignore[arg-type]


def state(sid: str, read: tuple[str, ...] = (), produced: tuple[str, ...] = ()) -> AnalyticalState:
    refs = [ref(k, "read") for k in read] + [ref(k, "produced") for k in produced]
    return AnalyticalState(id=sid, issue=sid, used_variables=tuple(refs))


def relations(g: Versions, new: AnalyticalState, committed: list[AnalyticalState]) -> list[str]:
    return [r.summary for r in infer_relations(new.used_variables, committed, g)]  # type: ignore[arg-type]


def frame_with_columns() -> tuple[Versions, dict[str, str]]:
    """S1 loads df; S2 adds df['net'] (a column store and a "part" version of df)."""
    g = Versions()
    k: dict[str, str] = {}
    k["df1"] = g.add("df", summary="DataFrame 10x3 [a, b, k]")
    k["a"] = g.add("df['a']", "derived", (k["df1"],))
    k["net"] = g.add("df['net']", "store", (k["a"],))
    k["df2"] = g.add("df", "part", (k["df1"], k["net"]))
    return g, k


def test_init_without_committed_states_or_shared_versions() -> None:
    g, k = frame_with_columns()
    assert relations(g, state("S1", produced=(k["df1"],)), []) == ["init"]
    other = g.add("x")
    s1 = state("S1", produced=(k["df1"],))
    assert relations(g, state("S2", produced=(other,)), [s1]) == ["init"]


def test_progress_when_reading_a_column_of_the_latest_states_frame() -> None:
    g, k = frame_with_columns()
    s1 = state("S1", produced=(k["df1"],))
    # df['a'] was first read from df@v1: the state that produced df@v1 is the source
    assert relations(g, state("S2", read=(k["a"],), produced=(k["net"],)), [s1]) == ["progress→S1"]


def test_combine_when_reading_from_two_states() -> None:
    g, k = frame_with_columns()
    rate = g.add("rate", summary="0.42")
    s1 = state("S1", produced=(k["df1"],))
    s2 = state("S2", read=(k["a"],), produced=(k["net"],))
    s3 = state("S3", produced=(rate,))
    total = g.add("total", parents=(k["net"], rate))
    new = state("S4", read=(k["net"], rate), produced=(total,))
    assert relations(g, new, [s1, s2, s3]) == ["combine→S2", "combine→S3"]


def test_a_whole_frame_read_combines_the_states_its_columns_came_from() -> None:
    g, k = frame_with_columns()
    s1 = state("S1", produced=(k["df1"],))
    s2 = state("S2", read=(k["a"],), produced=(k["net"],))
    # df@v2 is a "part" version: df@v1 (S1) and df['net']@v1 (S2)
    assert relations(g, state("S3", read=(k["df2"],)), [s1, s2]) == ["combine→S1", "combine→S2"]


def test_branch_when_reading_from_an_older_state_only() -> None:
    g, k = frame_with_columns()
    rate = g.add("rate")
    s1 = state("S1", produced=(k["df1"],))
    s2 = state("S2", produced=(rate,))
    assert relations(g, state("S3", read=(k["a"],)), [s1, s2]) == ["branch→S1"]


def test_a_revised_rate_invalidates_the_states_that_read_or_produced_the_old_one() -> None:
    g, k = frame_with_columns()
    rate1 = g.add("rate", summary="0.42")
    cost1 = g.add("df['cost']", "store", (k["a"], rate1))
    s1 = state("S1", produced=(k["df1"],))
    s2 = state("S2", produced=(rate1,))
    s3 = state("S3", read=(k["a"], rate1), produced=(cost1,))
    s4 = state("S4", read=(k["a"],))  # never used the rate
    rate2 = g.add("rate", summary="0.47")
    new = state("S5", produced=(rate2,))
    assert relations(g, new, [s1, s2, s3, s4]) == ["invalidate→S2", "invalidate→S3"]


def test_a_recomputed_column_invalidates_and_the_other_sources_still_count() -> None:
    g, k = frame_with_columns()
    s1 = state("S1", produced=(k["df1"],))
    s2 = state("S2", read=(k["a"],), produced=(k["net"],))
    mean = g.add("mean_net", parents=(k["net"],))
    s3 = state("S3", read=(k["net"],), produced=(mean,))
    net2 = g.add("df['net']", "store", (k["a"],))
    g.add("df", "part", (k["df1"], net2))
    new = state("S4", read=(k["a"],), produced=(net2,))
    assert relations(g, new, [s1, s2, s3]) == [
        "invalidate→S2",
        "invalidate→S3",
        "branch→S1",
    ]


def test_adding_a_column_never_invalidates() -> None:
    g, k = frame_with_columns()
    s1 = state("S1", produced=(k["df1"],))
    s2 = state("S2", read=(k["a"],), produced=(k["net"],))
    s3 = state("S3", read=(k["df2"],))  # read the whole frame
    b = g.add("df['b']", "derived", (k["df1"],))
    ratio = g.add("df['ratio']", "store", (k["net"], b))
    df3 = g.add("df", "part", (k["df1"], k["net"], ratio))
    # even if a caller counts the frame's "part" version as produced, nothing is superseded
    new = state("S4", read=(k["net"], b), produced=(ratio, df3))
    rels = relations(g, new, [s1, s2, s3])
    assert not [r for r in rels if r.startswith("invalidate")], rels
    assert rels == ["combine→S1", "combine→S2"]
    assert superseded(g, [ratio, df3], [k["df1"], k["a"], k["net"], k["df2"]]) == []  # type: ignore[arg-type]


def test_a_whole_frame_read_is_invalidated_by_rewriting_one_of_its_columns() -> None:
    g, k = frame_with_columns()
    s1 = state("S1", produced=(k["df1"],))
    s2 = state("S2", read=(k["a"],), produced=(k["net"],))
    s3 = state("S3", read=(k["df2"],))
    net2 = g.add("df['net']", "store", (k["a"],))
    rels = relations(g, state("S4", read=(k["a"],), produced=(net2,)), [s1, s2, s3])
    assert rels == ["invalidate→S2", "invalidate→S3", "branch→S1"]


def test_rebinding_the_whole_frame_invalidates_readers_of_its_columns() -> None:
    g, k = frame_with_columns()
    s1 = state("S1", produced=(k["df1"],))
    s2 = state("S2", read=(k["a"],), produced=(k["net"],))
    df3 = g.add("df", "bind", (k["df2"],))  # df = df.dropna()
    rels = relations(g, state("S3", read=(k["df2"],), produced=(df3,)), [s1, s2])
    assert rels == ["invalidate→S1", "invalidate→S2"]


def test_a_state_recorded_without_roles_counts_as_read_and_produced() -> None:
    g = Versions()
    rate1 = g.add("rate")
    legacy = AnalyticalState(id="S1", issue="old", used_variables=(ref(rate1, None),))
    assert relations(g, state("S2", read=(rate1,)), [legacy]) == ["progress→S1"]
    rate2 = g.add("rate")
    assert relations(g, state("S2", produced=(rate2,)), [legacy]) == ["invalidate→S1"]


@pytest.mark.parametrize(
    ("summary", "version", "noise"),
    [
        ("module pandas", 1, True),
        ("function helper", 1, True),
        ("type Order", 1, True),
        ("<built-in function sqrt>", 1, True),
        ("function helper", 2, False),  # a redefinition is kept
        ("0.42", 1, False),
        ("'module x'", 1, False),  # a string that says "module"
        ("DataFrame 10x3 [a, b, k]", 1, False),
    ],
)
def test_bookkeeping_versions(summary: str, version: int, noise: bool) -> None:
    v = VariableVersion(
        name="x", version=version, cell=0, statement=0, kind="bind", summary=summary
    )
    assert is_bookkeeping(v) is noise


def _step(step: int, reads: tuple[str, ...], created: tuple[str, ...]) -> Step:
    rec = CellRecord(
        cell=step,
        source="",
        reads=tuple(ReadRecord(name=k.rpartition("@v")[0], version=k, statement=0) for k in reads),
        created=created,
    )
    return Step(turn=1, step=step, code="", cell=rec)


def test_span_record_reads_parts_produces_columns_and_drops_bookkeeping() -> None:
    g, k = frame_with_columns()
    pd1 = g.add("pd", summary="module pandas")
    rate = g.add("rate", summary="0.42")
    # a turn: imports pandas, reads df['a'] and rate, adds df['cost'], then reads df whole
    cost = g.add("df['cost']", "store", (k["a"], rate))
    df3 = g.add("df", "part", (k["df1"], k["net"], cost))
    steps = [
        _step(0, (), (pd1,)),
        _step(1, (pd1, k["a"], rate), (cost, df3)),
        _step(2, (df3,), ()),
    ]
    reads, produced = span_record(steps, g)  # type: ignore[arg-type]
    # not pd (bookkeeping); df@v3 the span made, but reading it whole read the columns it
    # holds from before the span (df@v1, df['net']@v1)
    assert reads == [k["a"], rate, df3]
    assert produced == [cost]  # not df@v3 (a "part" version), not pd@v1


def test_span_record_keeps_the_last_covering_version_per_symbol() -> None:
    g = Versions()
    df1 = g.add("df")
    df2 = g.add("df", "bind", (df1,))
    net = g.add("df['net']", "store", ())
    df3 = g.add("df", "part", (df2, net))
    a = g.add("df['a']", "derived", (df2,))  # a column of the frame the span made
    steps = [_step(0, (), (df1,)), _step(1, (df1,), (df2, net, df3)), _step(2, (a,), ())]
    reads, produced = span_record(steps, g)  # type: ignore[arg-type]
    assert reads == []
    assert produced == [df2, net]


def test_rewriting_a_loaded_column_invalidates_whole_readers_not_the_loader() -> None:
    g, k = frame_with_columns()
    s1 = state("S1", produced=(k["df1"],))  # loaded the frame
    total = g.add("total", parents=(k["df1"],))
    s2 = state("S2", read=(k["df1"],), produced=(total,))  # summed the whole frame
    s3 = state("S3", read=(k["net"],))
    # df['a'] (read somewhere as df@v1 held it) is rewritten in place
    a2 = g.add("df['a']", "store", (k["a"],))
    rels = relations(g, state("S4", read=(k["a"],), produced=(a2,)), [s1, s2, s3])
    assert rels == ["invalidate→S2", "branch→S1"]


def test_a_version_already_superseded_is_not_invalidated_again() -> None:
    g, k = frame_with_columns()
    s1 = state("S1", produced=(k["df1"],))
    s2 = state("S2", read=(k["a"],))
    df3 = g.add("df", "bind", (k["df2"],))  # df = df.drop(columns=...)
    s3 = state("S3", read=(k["df2"],), produced=(df3,))
    assert relations(g, s3, [s1, s2]) == ["invalidate→S1", "invalidate→S2"]
    b = g.add("df['b']", "derived", (df3,))
    s4 = state("S4", read=(b,))
    df4 = g.add("df", "bind", (df3,))  # df = pd.get_dummies(df)
    # S1 and S2 used df@v1, which S3 had already replaced: only S3 and S4 are superseded now
    assert relations(g, state("S5", read=(df3,), produced=(df4,)), [s1, s2, s3, s4]) == [
        "invalidate→S3",
        "invalidate→S4",
    ]
