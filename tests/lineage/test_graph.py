"""Table tests of `LineageGraph` fed hand-built `CellReport`s (no kernel).

A case lists cells in; the graph must produce the expected versions, parents,
cells that read a stale version, and stale live versions. A cell given as a
plain string gets the report a well-behaved runtime pass would send when every
name the cell writes is rebound to a new object; anything else (mutations,
unchanged rebindings, deletions, function globals, aliases, failures) is
spelled out with `cell(...)`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from stateguard.lineage.graph import LineageGraph
from stateguard.lineage.report import CellReport
from stateguard.lineage.static import analyze_cell

RESTART = "<restart>"


def cell(
    source: str,
    *,
    rebound: list[str] | None = None,
    mutated: tuple[str, ...] = (),
    deleted: tuple[str, ...] = (),
    unchanged: tuple[str, ...] = (),
    fg: dict[str, tuple[str, ...]] | None = None,
    aliases: dict[str, tuple[str, ...]] | None = None,
    failed: int | None = None,
) -> CellReport:
    """A report for `source`; by default every written name is rebound."""
    analysis = analyze_cell(source)
    if rebound is None:
        rebound = [n for n in analysis.writes if n not in unchanged and n not in deleted]
    return CellReport(
        source=source,
        analysis=analysis,
        failed_statement=failed,
        rebound={n: f"<{n}>" for n in rebound},
        mutated={n: f"<{n}>" for n in mutated},
        deleted=deleted,
        unchanged=unchanged,
        function_globals=fg or {},
        aliases=aliases or {},
    )


def replay(cells: list[str | CellReport]) -> LineageGraph:
    """Feed `cells` to a new graph (RESTART records a kernel restart)."""
    g = LineageGraph()
    for c in cells:
        if c == RESTART:
            g.record_restart()
        else:
            g.record_cell(cell(c) if isinstance(c, str) else c)
    return g


@dataclass
class GraphCase:
    """Cells in; versions, edges and stale sets out."""

    id: str
    cells: list[str | CellReport]
    created: dict[int, tuple[str, ...]] = field(default_factory=dict)
    """Graph cell index -> versions it created (restarts are not cells)."""
    parents: dict[str, tuple[str, ...]] = field(default_factory=dict)
    parent_sets: dict[str, set[str]] = field(default_factory=dict)
    """Versions whose parents must include (at least) these keys."""
    kinds: dict[str, str] = field(default_factory=dict)
    stale_reads: set[int] = field(default_factory=set)
    """Indices of cells that read a version stale at the time (always checked)."""
    stale_live: set[str] = field(default_factory=set)
    """Current versions of live names that are stale at the end (always checked)."""
    live: tuple[str, ...] | None = None


CASES = [
    GraphCase(
        id="versions-parents-and-one-stale-read",
        cells=["a = 1", "b = a + 1", "a = 2", "print(b)"],
        created={0: ("a@v1",), 1: ("b@v1",), 2: ("a@v2",), 3: ()},
        parents={"a@v1": (), "b@v1": ("a@v1",), "a@v2": ()},
        kinds={"a@v2": "bind"},
        stale_reads={3},
        stale_live={"b@v1"},
        live=("a", "b"),
    ),
    GraphCase(
        id="unrelated-result-stays-fresh",
        cells=["a = 1", "t = 7 * 2", "a = 2", "print(t)"],
        stale_live=set(),
    ),
    GraphCase(
        id="transitive-chain",
        cells=["a = 1", "b = a + 1", "c = b * 10", "d = c - 3", "a = 5", "print(d)"],
        parents={"d@v1": ("c@v1",), "c@v1": ("b@v1",)},
        stale_reads={5},
        stale_live={"b@v1", "c@v1", "d@v1"},
    ),
    GraphCase(
        id="recompute-clears-staleness",
        cells=[
            "rate = 0.1",
            "cost = 200 * rate",
            "rate = 0.2",
            "print(cost)",
            "cost = 200 * rate",
            "print(cost)",
        ],
        parents={"cost@v2": ("rate@v2",)},
        stale_reads={3},
        stale_live=set(),
    ),
    GraphCase(
        id="partial-recompute-leaves-downstream-stale",
        cells=["a = 1", "b = a + 1", "c = b * 2", "a = 2", "b = a + 1", "print(b)", "print(c)"],
        stale_reads={6},
        stale_live={"c@v1"},
    ),
    GraphCase(
        id="refinement-does-not-stale-itself",
        cells=["df = make()", "m = df.mean()", "df = df.dropna()", "print(df)", "print(m)"],
        parents={"df@v2": ("df@v1",)},
        stale_reads={4},
        stale_live={"m@v1"},
    ),
    GraphCase(
        id="augmented-refinements",
        cells=["total = 1", "total += 2", "total *= 3", "x = total", "print(x)"],
        parents={"total@v2": ("total@v1",), "total@v3": ("total@v2",), "x@v1": ("total@v3",)},
        stale_live=set(),
    ),
    GraphCase(
        id="mixing-old-derived-with-new-is-stale",
        cells=["a = 1", "b = a * 2", "a = 5", "c = a + b", "print(c)"],
        parents={"c@v1": ("a@v2", "b@v1")},
        stale_reads={3, 4},
        stale_live={"b@v1", "c@v1"},
    ),
    GraphCase(
        id="multi-parent-combine",
        cells=[
            "a = 2",
            "b = 3",
            "c = a * b",
            "b = 4",
            "print(c)",
            "c = a * b",
            "a = 1",
            "print(c)",
        ],
        stale_reads={4, 7},
        stale_live={"c@v2"},
    ),
    GraphCase(
        id="unchanged-rebinding-creates-no-version",
        cells=["x = 1", "y = x + 1", cell("x = 1", rebound=[], unchanged=("x",)), "print(y)"],
        created={2: ()},
        stale_live=set(),
    ),
    GraphCase(
        id="deletion-is-not-a-revision-but-rebinding-after-is",
        cells=[
            "a = 1",
            "b = a + 1",
            cell("del a", deleted=("a",)),
            "print(b)",
            "a = 3",
            "print(b)",
        ],
        created={2: (), 4: ("a@v2",)},
        stale_reads={5},
        stale_live={"b@v1"},
        live=("a", "b"),
    ),
    GraphCase(
        id="in-cell-provisional-binding",
        cells=["a = 1", "t = a * 2\nt = t + 1\nr = t", "a = 9", "print(r)"],
        created={1: ("t@v1", "r@v1")},
        parents={"t@v1": ("a@v1",), "r@v1": ("t@v1",)},
        stale_reads={3},
        stale_live={"t@v1", "r@v1"},
    ),
    GraphCase(
        id="provisional-read-by-other-name",
        cells=["a = 1", "u = a + 1\nw = u * 2\nu = 0", "a = 9", "print(u)", "print(w)"],
        created={1: ("w@v1", "u@v1")},
        parents={"w@v1": ("a@v1",), "u@v1": ()},
        stale_reads={4},
        stale_live={"w@v1"},
    ),
    GraphCase(
        # the runtime pass reports neither rebound nor deleted for a temporary
        # created and deleted within one cell; `res` still derives from `base`
        id="temporary-deleted-in-same-cell-keeps-derivation",
        cells=[
            "base = 4",
            cell("tmp = base + 1\nres = tmp * 2\ndel tmp", rebound=["res"]),
            "base = 5",
            "print(res)",
        ],
        parents={"res@v1": ("base@v1",)},
        stale_reads={3},
        stale_live={"res@v1"},
    ),
    GraphCase(
        # a name created in a cell and then changed in place by later statements of
        # the same cell is reported as rebound only; its version must still carry
        # the inputs of those later statements
        id="created-then-appended-in-same-cell",
        cells=[
            "thresholds = [0.1, 0.2]",
            cell(
                "hits = []\nfor t in thresholds:\n    hits.append(t * 100)", rebound=["hits", "t"]
            ),
            cell("thresholds[0] = 0.15", mutated=("thresholds",)),
            "print(hits)",
        ],
        parent_sets={"hits@v1": {"thresholds@v1"}},
        stale_reads={3},
        stale_live={"hits@v1", "t@v1"},
    ),
    GraphCase(
        id="created-then-column-added-in-same-cell",
        cells=[
            "FACTOR = 2.0",
            "raw = make()",
            cell("df = raw.copy()\ndf['adj'] = df['v'] * FACTOR", rebound=["df"]),
            "FACTOR = 3.0",
            "print(df)",
        ],
        parent_sets={"df@v1": {"raw@v1", "FACTOR@v1"}},
        stale_reads={4},
        stale_live={"df@v1"},
    ),
    GraphCase(
        id="column-recomputed-in-place-refreshes",
        cells=[
            "FX = 1.1",
            "df = make()",
            cell("df['usd'] = df['eur'] * FX", mutated=("df",)),
            "FX = 1.2",
            cell("df['usd'] = df['eur'] * FX", mutated=("df",)),
            "print(df)",
        ],
        kinds={"df@v2": "mutate", "df@v3": "mutate"},
        stale_reads={4},
        stale_live=set(),
    ),
    GraphCase(
        # the recompute overwrites 'usd' but 'k' still holds a value from the old FX
        id="one-of-two-derived-columns-recomputed",
        cells=[
            "FX = 1.1",
            "df = make()",
            cell("df['usd'] = df['eur'] * FX", mutated=("df",)),
            cell("df['k'] = df['eur'] * FX", mutated=("df",)),
            "FX = 1.2",
            cell("df['usd'] = df['eur'] * FX", mutated=("df",)),
            "print(df)",
        ],
        stale_reads={5, 6},
        stale_live={"df@v4"},
    ),
    GraphCase(
        # 'usd_x2' was computed from the old 'usd': recomputing 'usd' alone does not
        # refresh it
        id="column-derived-from-recomputed-column-stays-stale",
        cells=[
            "FX = 1.1",
            "df = make()",
            cell("df['usd'] = df['eur'] * FX", mutated=("df",)),
            cell("df['usd_x2'] = df['usd'] * 2", mutated=("df",)),
            "FX = 1.2",
            cell("df['usd'] = df['eur'] * FX", mutated=("df",)),
            "print(df)",
        ],
        stale_reads={5, 6},
        stale_live={"df@v4"},
    ),
    GraphCase(
        id="mutation-creates-mutate-version",
        cells=[
            "xs = [1]",
            "k = 5",
            "n = len(xs)",
            cell("xs.append(k)", mutated=("xs",)),
            "print(n)",
            "print(xs)",
        ],
        created={3: ("xs@v2",)},
        kinds={"xs@v2": "mutate", "xs@v1": "bind"},
        stale_reads={4},
        stale_live={"n@v1"},
    ),
    GraphCase(
        id="mutation-inside-cell-splits-readers",
        cells=[
            "xs = [1]",
            cell("n = len(xs)\nxs.append(2)\nm = len(xs)", rebound=["n", "m"], mutated=("xs",)),
        ],
        created={1: ("n@v1", "xs@v2", "m@v1")},
        parents={"n@v1": ("xs@v1",), "m@v1": ("xs@v2",)},
        stale_reads=set(),
        # a value is not made stale by a later write in the cell that computed it
        stale_live=set(),
    ),
    GraphCase(
        id="function-global-is-a-parent",
        cells=[
            "tax = 0.2",
            "def net(x):\n    return x * (1 - tax)",
            cell("p = net(100)", fg={"net": ("tax",)}),
            "tax = 0.25",
            "print(p)",
        ],
        parents={"p@v1": ("net@v1", "tax@v1"), "net@v1": ()},
        stale_reads={4},
        stale_live={"p@v1"},
    ),
    GraphCase(
        id="function-redefined",
        cells=[
            "def score(x):\n    return x * 2",
            "s = score(21)",
            "def score(x):\n    return x * 3",
            "print(s)",
        ],
        stale_reads={3},
        stale_live={"s@v1"},
    ),
    GraphCase(
        id="global-rebound-by-called-function",
        cells=[
            "counter = 0",
            "def bump():\n    global counter\n    counter += 1",
            "d = counter * 2",
            cell("bump()", rebound=["counter"], fg={"bump": ("counter",)}),
            "print(d)",
        ],
        created={3: ("counter@v2",)},
        stale_reads={4},
        stale_live={"d@v1"},
    ),
    GraphCase(
        id="alias-mutation-versions-both-names",
        cells=[
            "xs = [1]",
            cell("ys = xs", rebound=["ys"]),
            "total = sum(xs)",
            cell("ys.append(10)", mutated=("xs", "ys"), aliases={"xs": ("ys",), "ys": ("xs",)}),
            "print(total)",
        ],
        created={3: ("xs@v2", "ys@v2")},
        stale_reads={4},
        stale_live={"total@v1"},
    ),
    GraphCase(
        id="failed-statement-limits-reads-and-writes",
        cells=[
            "a = 1",
            "z = 3",
            cell("b = a + 1\nraise ValueError('x')\nc = z", rebound=["b"], failed=1),
            "z = 4",
        ],
        created={2: ("b@v1",)},
        stale_live=set(),
    ),
    GraphCase(
        id="same-cell-revision-then-stale-read",
        cells=["rate = 0.1", "fee = 100 * rate", "rate = 0.2\nprint(fee)"],
        stale_reads={2},
        stale_live={"fee@v1"},
    ),
    GraphCase(
        id="same-cell-read-before-revision-is-fresh",
        cells=["rate = 0.1", "fee = 100 * rate", "print(fee)\nrate = 0.2"],
        stale_reads=set(),
        stale_live={"fee@v1"},
    ),
    GraphCase(
        id="restart-leaves-nothing-live",
        cells=["a = 1", "b = a + 1", RESTART, "print(b)", "a = 2"],
        created={2: (), 3: ("a@v2",)},
        stale_reads=set(),
        stale_live=set(),
        live=("a",),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_graph_case(case: GraphCase) -> None:
    g = replay(case.cells)
    for idx, keys in case.created.items():
        assert g.cells[idx].created == keys, f"cell {idx} created"
    for key, parents in case.parents.items():
        assert g.derived_from(key) == parents, f"parents of {key}"
    for key, required in case.parent_sets.items():
        assert required <= set(g.derived_from(key)), f"parents of {key}"
    for key, kind in case.kinds.items():
        assert g.version(key).kind == kind, f"kind of {key}"
    assert {c.cell for c in g.cells_with_stale_reads()} == case.stale_reads
    assert set(g.stale_live_versions()) == case.stale_live
    if case.live is not None:
        assert g.live_names() == case.live


# ---------------------------------------------------------------------------
# individual queries


def test_version_keys_and_numbering() -> None:
    g = replay(["x = 1", "x = 2", "y = x", "x = 3"])
    assert [v.key for v in g.versions("x")] == ["x@v1", "x@v2", "x@v3"]
    assert [v.cell for v in g.versions("x")] == [0, 1, 3]
    latest = g.latest("x")
    assert latest is not None and latest.key == "x@v3" and latest.version == 3
    assert g.latest("nope") is None
    assert g.versions("nope") == ()
    with pytest.raises(KeyError):
        g.version("nope@v1")


def test_version_summary_comes_from_report() -> None:
    g = LineageGraph()
    g.record_cell(CellReport(source="x = 1", analysis=analyze_cell("x = 1"), rebound={"x": "1"}))
    assert g.version("x@v1").summary == "1"
    assert g.version("x@v1").statement == 0


def test_ancestors_are_transitive() -> None:
    g = replay(["a = 1", "b = 2", "c = a + b", "d = c * 2", "e = d + a"])
    assert g.ancestors("e@v1") == frozenset({"d@v1", "c@v1", "a@v1", "b@v1"})
    assert g.ancestors("a@v1") == frozenset()


def test_why_stale_names_chain_and_first_superseding_write() -> None:
    g = replay(["a = 1", "b = a + 1", "c = b * 10", "a = 2", "a = 3"])
    reason = g.why_stale("c@v1")
    assert reason is not None
    assert reason.version == "c@v1"
    assert reason.outdated == "a@v1"
    assert reason.used_by == "b@v1"
    assert reason.superseded_by == "a@v2"
    assert reason.superseding_cell == 3
    assert reason.current == "a@v3"
    assert reason.chain == ("a@v1", "b@v1", "c@v1")
    text = reason.describe()
    assert "c@v1" in text and "a@v1" in text and "cell 3" in text and "now a@v3" in text
    assert g.why_stale("a@v3") is None
    assert not g.is_stale("a@v1") and g.is_stale("b@v1")


def test_why_stale_describe_without_later_versions() -> None:
    g = replay(["a = 1", "b = a", "a = 2"])
    reason = g.why_stale("b@v1")
    assert reason is not None and reason.current == reason.superseded_by == "a@v2"
    assert "now" not in reason.describe()


def test_stale_live_versions_reasons_and_only_live_names() -> None:
    g = replay(["a = 1", "b = a + 1", "c = a * 3", "k = 5", "a = 2", cell("del c", deleted=("c",))])
    stale = g.stale_live_versions()
    assert set(stale) == {"b@v1"}
    assert stale["b@v1"].version == "b@v1" and stale["b@v1"].outdated == "a@v1"
    assert g.is_stale("c@v1")  # its version is stale, but the name is gone


def test_read_records_statement_and_version() -> None:
    g = replay(["a = 1", "b = 2", "a = 3", "x = a + 1\ny = b"])
    reads = g.cells[3].reads
    assert [(r.name, r.version, r.statement) for r in reads] == [
        ("a", "a@v2", 0),
        ("b", "b@v1", 1),
    ]
    assert all(r.stale is None for r in reads)
    assert not g.cells[3].read_stale and g.cells[3].stale_reads == ()


def test_stale_read_carries_reason() -> None:
    g = replay(["a = 1", "b = a + 1", "a = 2", "print(b)"])
    rec = g.cells[3]
    assert rec.read_stale
    (read,) = rec.stale_reads
    assert read.name == "b" and read.version == "b@v1"
    assert read.stale is not None and read.stale.outdated == "a@v1"


def test_reads_of_deleted_names_are_not_recorded() -> None:
    g = replay(["a = 1", "b = 2", cell("del a", deleted=("a",)), "c = a + b"])
    assert [r.name for r in g.cells[3].reads] == ["b"]
    assert g.live_names() == ("b", "c")


def test_mutation_version_parents_include_previous_and_inputs() -> None:
    g = replay(["xs = [1]", "k = 5", cell("xs.append(k)", mutated=("xs",))])
    v = g.version("xs@v2")
    assert v.kind == "mutate"
    assert set(v.parents) == {"xs@v1", "k@v1"}


def test_syntax_error_cell_changes_nothing() -> None:
    g = replay(["a = 1"])
    rec = g.record_cell(CellReport(source="a = (", analysis=analyze_cell("a = (")))
    assert rec.syntax_error is not None
    assert rec.created == () and rec.reads == ()
    assert [v.key for v in g.versions("a")] == ["a@v1"]
    assert len(g.cells) == 2 and g.cells[1].cell == 1


def test_failed_cell_record_keeps_failed_statement() -> None:
    g = replay(["a = 1", cell("b = a\nraise KeyError\nc = b", rebound=["b"], failed=1)])
    rec = g.cells[1]
    assert rec.failed_statement == 1
    assert rec.created == ("b@v1",)
    assert g.latest("c") is None


def test_record_restart_then_new_values() -> None:
    g = replay(["a = 1", "b = a + 1"])
    g.record_restart()
    assert g.live_names() == ()
    assert g.stale_live_versions() == {}
    g.record_cell(cell("a = 10"))
    g.record_cell(cell("b = a * 2"))
    assert g.live_names() == ("a", "b")
    assert g.derived_from("b@v2") == ("a@v2",)
    assert g.stale_live_versions() == {}
