"""Table tests of `analyze_cell`: one cell of source in, per-statement def/use facts out.

Each case names the facts it pins, by statement index. Tuple-valued fields are
compared exactly (order matters: reads are in first-use order); a field whose
key ends in ``_set`` is compared as a set. ``functions`` maps a function name to
``(global_reads, global_writes)`` compared as sets.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stateguard.lineage.static import CellAnalysis, analyze_cell

Expect = dict[int, dict[str, Any]]


def _case(source: str, expect: Expect, *, id: str) -> Any:
    return pytest.param(source, expect, id=id)


def _check(analysis: CellAnalysis, expect: Expect) -> None:
    assert analysis.syntax_error is None, analysis.syntax_error
    for idx, fields in expect.items():
        st = analysis.statements[idx]
        for key, want in fields.items():
            if key == "functions":
                got = {f.name: (set(f.global_reads), set(f.global_writes)) for f in st.functions}
                assert got == {k: (set(r), set(w)) for k, (r, w) in want.items()}, (
                    f"statement {idx}: functions"
                )
            elif key.endswith("_set"):
                field = key.removesuffix("_set")
                assert set(getattr(st, field)) == set(want), f"statement {idx}: {field}"
            else:
                assert getattr(st, key) == want, f"statement {idx}: {key}"


# ---------------------------------------------------------------------------
# plain statements, order, augmented and in-place stores

BASICS = [
    _case("a = b + c", {0: {"reads": ("b", "c"), "writes": ("a",), "mutates": ()}}, id="assign"),
    _case("r = y * x + y", {0: {"reads": ("y", "x")}}, id="reads-first-use-order"),
    _case(
        "a, (b, *c) = d",
        {0: {"reads": ("d",), "writes": ("a", "b", "c")}},
        id="nested-tuple-unpack-with-star",
    ),
    _case("a = b = k", {0: {"reads": ("k",), "writes": ("a", "b")}}, id="chained-assign"),
    _case("x += 1", {0: {"reads": ("x",), "writes": ("x",), "mutates": ()}}, id="augassign-name"),
    _case(
        "total -= step",
        {0: {"reads": ("step", "total"), "writes": ("total",)}},
        id="augassign-value-read-before-target",
    ),
    _case(
        "x[i] += 1",
        {0: {"reads_set": {"x", "i"}, "writes": (), "mutates": ("x",)}},
        id="augassign-subscript-mutates",
    ),
    _case(
        "x.a = v",
        {0: {"reads_set": {"x", "v"}, "writes": (), "mutates": ("x",)}},
        id="attribute-store-mutates",
    ),
    _case(
        "cfg.model.layers[k].size = 3",
        {0: {"reads_set": {"cfg", "k"}, "writes": (), "mutates": ("cfg",)}},
        id="deep-store-mutates-root",
    ),
    _case(
        "d[key] = val",
        {0: {"reads_set": {"d", "key", "val"}, "writes": (), "mutates": ("d",)}},
        id="item-store-mutates",
    ),
    _case(
        "del x[k]",
        {0: {"reads_set": {"x", "k"}, "mutates": ("x",), "deletes": (), "writes": ()}},
        id="del-item-mutates",
    ),
    _case("del x.attr", {0: {"reads": ("x",), "mutates": ("x",)}}, id="del-attribute-mutates"),
    _case("del x, y", {0: {"deletes": ("x", "y"), "reads": (), "mutates": ()}}, id="del-names"),
    _case(
        "df.loc[df['a'] > lim, 'b'] = 0",
        {0: {"reads_set": {"df", "lim"}, "mutates": ("df",), "writes": ()}},
        id="loc-store",
    ),
    _case(
        "xs.append(v)",
        {
            0: {
                "reads": ("xs", "v"),
                "inplace_calls": ("xs",),
                "method_receivers": ("xs",),
                "writes": (),
                "mutates": (),
            }
        },
        id="list-append-inplace",
    ),
    _case(
        "df.dropna(inplace=True)",
        {0: {"inplace_calls": ("df",), "method_receivers": ("df",), "writes": ()}},
        id="inplace-kwarg",
    ),
    _case(
        "clean = df.dropna()",
        {0: {"inplace_calls": (), "method_receivers": ("df",), "writes": ("clean",)}},
        id="non-inplace-method",
    ),
    _case(
        "s = df.groupby(key).sum()",
        {0: {"reads": ("df", "key"), "method_receivers": ("df",), "inplace_calls": ()}},
        id="method-chain-root",
    ),
    _case(
        "print(margin)",
        {0: {"reads": ("print", "margin"), "calls": ("print",), "writes": ()}},
        id="print-is-a-read",
    ),
    _case(
        "logging.info(f'{x:.2f} and {y}')",
        {0: {"reads": ("logging", "x", "y"), "method_receivers": ("logging",)}},
        id="logging-fstring",
    ),
    _case("y = f(g(x))", {0: {"calls": ("f", "g"), "reads": ("f", "g", "x")}}, id="nested-calls"),
    _case(
        "global x\nx = 1",
        {0: {"reads": (), "writes": ()}, 1: {"writes": ("x",)}},
        id="module-level-global-is-noop",
    ),
]


# ---------------------------------------------------------------------------
# imports

IMPORTS = [
    _case("import os.path", {0: {"writes": ("os",)}}, id="dotted-import-binds-top"),
    _case("import numpy as np", {0: {"writes": ("np",)}}, id="aliased-import"),
    _case("import os.path as osp, sys", {0: {"writes": ("osp", "sys")}}, id="multi-import"),
    _case("from a.b import c as d, e", {0: {"writes": ("d", "e"), "reads": ()}}, id="from-import"),
    _case("from m import *", {0: {"star_import": True, "writes": ()}}, id="star-import"),
    _case("import m", {0: {"star_import": False}}, id="plain-import-not-star"),
]


# ---------------------------------------------------------------------------
# compound statements binding names

COMPOUND = [
    _case(
        "for k, v in items.items():\n    total += v",
        {0: {"reads": ("items", "total"), "writes": ("k", "v", "total")}},
        id="for-targets",
    ),
    _case(
        "with open(p) as fh:\n    data = fh.read()",
        {0: {"reads": ("open", "p"), "writes": ("fh", "data")}},
        id="with-as",
    ),
    _case(
        "with ctx() as (a, b):\n    c = a + b",
        {0: {"reads": ("ctx",), "writes": ("a", "b", "c")}},
        id="with-as-tuple",
    ),
    _case(
        "try:\n    r = f(x)\nexcept ValueError as e:\n    msg = str(e)\nfinally:\n    done = r",
        {0: {"reads": ("f", "x", "ValueError", "str"), "writes": ("r", "e", "msg", "done")}},
        id="try-except-as",
    ),
    _case(
        "while n > 0:\n    n = n - 1",
        {0: {"reads": ("n",), "writes": ("n",)}},
        id="while-reads-before-write",
    ),
    _case(
        "if flag:\n    t = 1\n    u = t + base",
        {0: {"reads": ("flag", "base"), "writes": ("t", "u")}},
        id="earlier-write-in-same-statement-not-read",
    ),
    _case(
        "if c:\n    x = 1\nelse:\n    y = x",
        {0: {"reads": ("c", "x"), "writes": ("x", "y")}},
        id="write-in-exclusive-branch-does-not-hide-read",
    ),
    _case(
        "if (n := len(xs)) > 3:\n    big = n",
        {0: {"reads": ("len", "xs"), "writes": ("n", "big")}},
        id="walrus-top-level",
    ),
    _case(
        "match cmd:\n"
        "    case {'k': v, **rest}:\n"
        "        out = v\n"
        "    case [first, *others]:\n"
        "        out = first\n"
        "    case Point(x=px) as p:\n"
        "        out = px\n"
        "    case Color.RED:\n"
        "        out = 0\n"
        "    case _:\n"
        "        out = default",
        {
            0: {
                "reads_set": {"cmd", "Point", "Color", "default"},
                "writes_set": {"v", "rest", "out", "first", "others", "px", "p"},
            }
        },
        id="match-statement",
    ),
]


# ---------------------------------------------------------------------------
# functions, lambdas, classes

FUNCTIONS = [
    _case(
        "def f(a):\n    b = a + c\n    return b",
        {0: {"reads": (), "writes": ("f",), "functions": {"f": (("c",), ())}}},
        id="def-body-reads-deferred",
    ),
    _case(
        "def f():\n    print(x)\n    x = 1",
        {0: {"functions": {"f": (("print",), ())}}},
        id="def-local-bound-later-is-local",
    ),
    _case(
        "def f(a, b=base_rate, *, c=other):\n    return a + b + c + g",
        {0: {"reads": ("base_rate", "other"), "functions": {"f": (("g",), ())}}},
        id="def-defaults-read-at-def",
    ),
    _case(
        "def f(a: T) -> R:\n    return a",
        {0: {"reads_set": {"T", "R"}, "functions": {"f": ((), ())}}},
        id="def-annotations-read-at-def",
    ),
    _case(
        "@deco(level)\ndef f():\n    return z",
        {0: {"reads": ("deco", "level"), "writes": ("f",), "functions": {"f": (("z",), ())}}},
        id="decorator-read-at-def",
    ),
    _case(
        "def outer():\n    y = 1\n    def inner():\n        return y + g\n    return inner()",
        {0: {"reads": (), "writes": ("outer",), "functions": {"outer": (("g",), ())}}},
        id="nested-function-enclosing-local",
    ),
    _case(
        "def outer():\n"
        "    n = 0\n"
        "    def inc():\n"
        "        nonlocal n\n"
        "        n += 1\n"
        "    inc()\n"
        "    return n",
        {0: {"functions": {"outer": ((), ())}}},
        id="nonlocal-not-global",
    ),
    _case(
        "def bump():\n    global counter\n    counter = counter + step",
        {
            0: {
                "reads": (),
                "writes": ("bump",),
                "functions": {"bump": (("counter", "step"), ("counter",))},
            }
        },
        id="global-in-function",
    ),
    _case(
        "def outer():\n    def inner():\n        global g\n        g = 1\n    inner()",
        {0: {"functions": {"outer": ((), ("g",))}}},
        id="global-in-nested-function",
    ),
    _case(
        "def f():\n    return [v * k for v in data]",
        {0: {"functions": {"f": (("data", "k"), ())}}},
        id="comprehension-inside-function",
    ),
    _case(
        "f = lambda x: x * k",
        {0: {"reads": (), "writes": ("f",), "functions": {"f": (("k",), ())}}},
        id="named-lambda-deferred",
    ),
    _case(
        "f = lambda x, s=scale: x * s",
        {0: {"reads": ("scale",), "functions": {"f": ((), ())}}},
        id="lambda-default-read-at-def",
    ),
    _case(
        "ys = sorted(xs, key=lambda v: v * w)",
        {0: {"reads": ("sorted", "xs", "w"), "writes": ("ys",), "functions": {}}},
        id="inline-lambda-runs-now",
    ),
    _case(
        "class C(Base, metaclass=Meta):\n"
        "    k = factor * 2\n"
        "    def m(self):\n"
        "        return self.k + offset",
        {
            0: {
                "reads": ("Base", "Meta", "factor"),
                "writes": ("C",),
                "functions": {"C": (("offset",), ())},
            }
        },
        id="class-body-now-methods-deferred",
    ),
    _case(
        "class C:\n    t = 1\n    def m(self):\n        return t",
        {0: {"reads": (), "functions": {"C": (("t",), ())}}},
        id="class-scope-invisible-to-methods",
    ),
    _case(
        "class Model:\n"
        "    def __init__(self, df):\n"
        "        self.df = df\n"
        "    def fit(self):\n"
        "        return self.df[target].mean() * scale",
        {0: {"reads": (), "functions": {"Model": (("target", "scale"), ())}}},
        id="method-bodies",
    ),
    _case(
        "@dataclass\nclass P:\n    x: int = default_x",
        {0: {"reads": ("dataclass", "default_x"), "writes": ("P",)}},
        id="decorated-class-field-default",
    ),
    _case(
        "class C:\n    limit = limit * 2",
        {0: {"reads": ("limit",), "writes": ("C",)}},
        id="class-body-name-read-before-bind-is-global",
    ),
]


# ---------------------------------------------------------------------------
# comprehensions

COMPREHENSIONS = [
    _case(
        "vals = [i * k for i in items if i > lo]",
        {0: {"reads_set": {"items", "k", "lo"}, "writes": ("vals",)}},
        id="listcomp-target-local",
    ),
    _case(
        "vals = [i for i in range(3)]",
        {0: {"reads": ("range",), "writes": ("vals",)}},
        id="listcomp-var-not-read",
    ),
    _case(
        "pairs = {a: b for a, b in zip(xs, ys)}",
        {0: {"reads_set": {"zip", "xs", "ys"}, "writes": ("pairs",)}},
        id="dictcomp",
    ),
    _case(
        "s = {x % m for x in xs}",
        {0: {"reads_set": {"xs", "m"}}},
        id="setcomp",
    ),
    _case(
        "t = sum(x for x in xs if x > cut)",
        {0: {"reads_set": {"sum", "xs", "cut"}, "writes": ("t",)}},
        id="genexp",
    ),
    _case(
        "m = [x * y for x in xs for y in ys_of(x)]",
        {0: {"reads_set": {"xs", "ys_of"}}},
        id="nested-generators",
    ),
    _case(
        "fs = [lambda: i for i in r]",
        {0: {"reads": ("r",), "writes": ("fs",)}},
        id="lambda-in-comprehension-sees-comp-var",
    ),
    _case(
        "flags = [y for v in xs if (y := f(v)) > 0]",
        {0: {"reads_set": {"xs", "f"}, "writes_set": {"y", "flags"}}},
        id="walrus-in-comprehension-binds-outside",
    ),
    _case(
        "vals = [i for i in range(3)]\nprint(i)",
        {1: {"reads": ("print", "i")}},
        id="comprehension-var-does-not-leak",
    ),
]


@pytest.mark.parametrize(
    ("source", "expect"), [*BASICS, *IMPORTS, *COMPOUND, *FUNCTIONS, *COMPREHENSIONS]
)
def test_analyze_cell(source: str, expect: Expect) -> None:
    _check(analyze_cell(source), expect)


# ---------------------------------------------------------------------------
# cell-level properties


def test_cell_reads_exclude_names_bound_by_earlier_statements() -> None:
    a = analyze_cell("x = 1\ny = x + z\nw = y + q")
    assert a.statements[1].reads == ("x", "z")
    assert a.reads == ("z", "q")
    assert a.writes == ("x", "y", "w")


def test_cell_reads_keep_name_read_before_it_is_bound() -> None:
    a = analyze_cell("y = x + 1\nx = 2\nz = x")
    assert a.reads == ("x",)


def test_cell_mutates_and_calls_aggregate_in_order() -> None:
    a = analyze_cell("xs[0] = 1\nf(a)\nd.k = 2\ng(b)\nf(c)")
    assert a.mutates == ("xs", "d")
    assert a.calls == ("f", "g")


def test_statement_line_spans() -> None:
    a = analyze_cell("a = 1\n\nif a:\n    b = 2\n    c = 3\nd = 4")
    spans = [(s.index, s.lineno, s.end_lineno) for s in a.statements]
    assert spans == [(0, 1, 1), (1, 3, 5), (2, 6, 6)]


def test_function_lookup_returns_last_definition() -> None:
    a = analyze_cell("def f():\n    return a\ndef g():\n    return b\ndef f():\n    return c")
    f = a.function("f")
    assert f is not None and f.global_reads == ("c",)
    assert a.function("missing") is None


def test_syntax_error_yields_no_statements() -> None:
    a = analyze_cell("x = 1\ny = (")
    assert a.syntax_error is not None and "SyntaxError" in a.syntax_error
    assert a.statements == ()
    assert a.reads == () and a.writes == ()


def test_empty_cell() -> None:
    a = analyze_cell("")
    assert a.syntax_error is None and a.statements == ()


def test_analysis_is_frozen() -> None:
    a = analyze_cell("x = 1")
    with pytest.raises(ValueError):
        a.statements[0].reads = ("y",)  # type: ignore[misc]


_ATOMS = ["a", "b", "x1", "1", "2.5", "'s'"]


@st.composite
def _simple_expr(draw: st.DrawFn, depth: int = 0) -> str:
    if depth > 3 or draw(st.booleans()):
        return draw(st.sampled_from(_ATOMS))
    kind = draw(st.sampled_from(["bin", "neg", "cmp"]))
    left = draw(_simple_expr(depth + 1))
    right = draw(_simple_expr(depth + 1))
    if kind == "bin":
        return f"({left} {draw(st.sampled_from(['+', '-', '*', '/', '%', '**']))} {right})"
    if kind == "neg":
        return f"(-{left})"
    return f"({left} < {right} == {draw(_simple_expr(depth + 1))})"


@given(target=st.sampled_from(["a", "y", "x1"]), value=_simple_expr())
@settings(max_examples=300, deadline=None)
def test_simple_assignment_fast_path_matches_the_visitor(target: str, value: str) -> None:
    """`name = <operators over names and constants>` skips the visitor, with equal facts."""
    import ast

    from stateguard.lineage import static

    stmt = ast.parse(f"{target} = {value}").body[0]
    fast = static._simple_assign(stmt, 0)
    assert fast is not None
    v = static._StatementVisitor()
    v.visit(stmt)
    assert fast.reads == tuple(v.reads) and fast.writes == tuple(v.writes)
    assert fast.accesses == tuple(v.accesses)
