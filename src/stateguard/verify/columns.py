"""Does a result step read the column the question is about? (no model, no reference)

A question names a column when every word of the column's name is a word of the
question, up to a plural (``occupation`` in "How many different occupations…",
``item_price`` in "the mean item price"), or when it quotes the name exactly (`the
"Total" column`). A result step that takes its value from
other columns of the same table and from none that the question names has most likely
taken the wrong one: "How many different occupations?" answered by
``users.zip_code.nunique()``.

Names made only of generic words (``id``, ``name``, ``value``…) never count as named:
the question uses those words for other things. A step that names no column (a whole
table, positions) is not judged; nor is one that builds a column the question names.

When the question names no column so, a column can still be named by its own words
alone, generic ones aside, used as a noun right after a word that ranges over kinds of
things ("different items" → ``item_name``, "per order" → ``order_id``), or, for an
identifier, one that counts them ("How many orders" → ``order_id``; "how many items
were ordered" counts units, so it names no ``item_name``). "Someone order…" uses the
word as a verb and names nothing. This weaker naming only raises a doubt (0.5).

A step that shows two opposite extremes side by side (``(df.loc[df.a.idxmax(), 'n'],
df.loc[df.b.idxmin(), 'n'])``, `dual_part_mismatch`) has parts written alike but for the
extreme taken and one column. "The highest and the lowest a" takes both over one column;
when the question names one of the two columns and not the other, the part over the
unnamed one most likely read the wrong column.

Which columns the question names is read in `stateguard.question.columns`; this module
reads the code's side.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import NamedTuple

from stateguard.audit.filterchecks import probe_json
from stateguard.kernel import ProbeResult, namespace
from stateguard.question import (
    named_columns,
    noun_named_columns,
    quoted_columns,
    speaks_of_columns,
)
from stateguard.question import stem as stem  # re-exported: the words of a name
from stateguard.question import words as words
from stateguard.verify.environment import Environment

# Runs in a fork: the column names of every data frame of the namespace, by variable.
_FRAMES_PROBE = """
{k: [str(c) for c in list(v.columns)[:500]]
 for k, v in list(globals().items())[:2000]
 if not k.startswith('_') and type(v).__name__ == 'DataFrame'}
"""


def column_of(node: ast.AST) -> tuple[str, str] | None:
    """``(variable, column)`` of ``df.col``, ``df['col']``, or a chain ending so
    (``df.groupby('a').col``): the variable the chain starts from, and the last name."""
    if isinstance(node, ast.Attribute):
        name = node.attr
    elif (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Constant)
        and isinstance(node.slice.value, str)
    ):
        name = node.slice.value
    else:
        return None
    root: ast.AST = node.value
    while not isinstance(root, ast.Name):
        if isinstance(root, ast.Attribute | ast.Subscript):
            root = root.value
        elif isinstance(root, ast.Call):
            root = root.func
        else:
            return None
    return root.id, name


def _query_names(node: ast.Call) -> set[str]:
    arg = node.args[0] if node.args else None
    if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
        return set()
    try:
        tree = ast.parse(arg.value.replace("`", ""), mode="eval")
    except SyntaxError:
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def used_columns(code: str, columns: Iterable[str]) -> set[str] | None:
    """The columns ``code`` names: string constants and attributes equal to a column name,
    names in ``.query`` strings. None when the code does not parse."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    known = set(columns)
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in known:
            out.add(node.value)
        elif isinstance(node, ast.Attribute) and node.attr in known:
            out.add(node.attr)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "query":
            out |= _query_names(node) & known
    return out


def _frames_read(code: str, frames: Mapping[str, Sequence[str]]) -> list[str]:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    return [f for f in frames if f in names]


def assigned_columns(code: str) -> set[str]:
    """Columns the code assigns (``df['c'] = …``, ``df.loc[:, 'c'] = …``)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
            keys = node.slice.elts if isinstance(node.slice, ast.Tuple | ast.List) else [node.slice]
            out |= {
                k.value for k in keys if isinstance(k, ast.Constant) and isinstance(k.value, str)
            }
    return out


class Mismatch(NamedTuple):
    """Named columns a result step does not read, and the other columns it reads instead."""

    missed: tuple[str, ...]
    instead: tuple[str, ...]
    partial: bool
    """The step also reads some named column (weaker evidence than reading none)."""
    projected: bool = False
    """Found in a selected list of columns (`projection_mismatch`)."""
    weak: bool = False
    """The question names the missed columns by their own words alone (a doubt)."""
    built: bool = False
    """The cell builds the missed columns, then shows a value of others (a doubt)."""

    def describe(self) -> str:
        """One line naming both sides."""
        missed = ", ".join(repr(c) for c in self.missed)
        instead = ", ".join(repr(c) for c in self.instead)
        if self.projected:
            return f"the question asks for the column(s) {missed}; the step shows {instead} instead"
        if self.built:
            return (
                f"the step builds {missed}, which the question names, but its last statement "
                f"reads {instead} and not {missed}"
            )
        if self.partial:
            return f"the question names {missed}, which the step does not read; it reads {instead}"
        return f"the question is about {missed} but the step takes its result from {instead} only"


def column_mismatch(
    question: str, code: str, frames: Mapping[str, Sequence[str]]
) -> Mismatch | None:
    """The named columns ``code`` misses while reading others, or None. ``frames``: the
    columns of each data frame after the step."""
    read = _frames_read(code, frames)
    if not read:
        return None
    columns = {c for f in read for c in frames[f]}
    used = used_columns(code, columns)
    named = named_columns(question, columns) | quoted_columns(question, columns)
    weak = not named
    if weak:
        named = noun_named_columns(question, columns)
    if not used or not named:
        return None
    built = named & assigned_columns(code)
    if built:
        return _built_then_unread(code, columns, named, built)
    missed, instead = named - used, used - named
    if not missed or not instead:
        return None
    return Mismatch(
        tuple(sorted(missed)), tuple(sorted(instead)), partial=bool(used & named), weak=weak
    )


def _built_then_unread(
    code: str, columns: set[str], named: set[str], built: set[str]
) -> Mismatch | None:
    """A cell that builds a named column and whose last statement, which builds nothing,
    reads other columns and no named one: the value shown is not the one built."""
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return None
    if len(body) < 2:
        return None
    last = ast.unparse(body[-1])
    read = used_columns(last, columns) or set()
    if not read or read & named or assigned_columns(last):
        return None
    return Mismatch(tuple(sorted(built)), tuple(sorted(read)), partial=True, built=True)


def projection_mismatch(
    question: str, code: str, frames: Mapping[str, Sequence[str]]
) -> Mismatch | None:
    """A question that speaks of columns and names some, and a last statement that selects
    a list of columns of a table (``t[['a', 'b']]``) leaving out a named one for an
    unnamed one: the table shown is not the one asked for. None otherwise."""
    if not speaks_of_columns(question):
        return None
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return None
    if not body:
        return None
    for node in ast.walk(body[-1]):
        if not (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.List)):
            continue
        keys = [k.value for k in node.slice.elts if isinstance(k, ast.Constant)]
        root = node.value
        if not isinstance(root, ast.Name) or root.id not in frames or len(keys) < 2:
            continue
        columns = frames[root.id]
        if not all(isinstance(k, str) and k in columns for k in keys):
            continue
        named = named_columns(question, columns)
        missed = sorted(named - set(keys))
        instead = sorted(set(keys) - named)
        if named & set(keys) and missed and instead:
            return Mismatch(tuple(missed), tuple(instead), partial=False, projected=True)
    return None


_DUALS = {
    "idxmax": "idxmin", "max": "min", "argmax": "argmin", "nlargest": "nsmallest",
    "head": "tail", "first": "last",
}  # fmt: skip
_DUAL = {**_DUALS, **{b: a for a, b in _DUALS.items()}}
"""Methods that take opposite ends of one order."""


class _Masked(ast.NodeTransformer):
    """A part with its column names and its extremes blanked, and what was blanked."""

    def __init__(self, columns: set[str]) -> None:
        self.columns = columns
        self.seen: list[str] = []
        self.duals: list[str] = []

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if isinstance(node.value, str) and node.value in self.columns:
            self.seen.append(node.value)
            return ast.Constant(value="<column>")
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if node.attr in _DUAL:
            self.duals.append(node.attr)
            return ast.Attribute(value=node.value, attr="<extreme>", ctx=node.ctx)
        if node.attr in self.columns:
            self.seen.append(node.attr)
            return ast.Attribute(value=node.value, attr="<column>", ctx=node.ctx)
        return node


def _parts(code: str) -> list[ast.AST]:
    """The computed parts of the tuple, list or dict a cell's last statement shows."""
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return []
    if not body or not isinstance(body[-1], ast.Expr):
        return []
    shown = body[-1].value
    if isinstance(shown, ast.Tuple | ast.List):
        parts = list(shown.elts)
    elif isinstance(shown, ast.Dict):
        parts = list(shown.values)
    else:
        return []
    return [p for p in parts if any(isinstance(n, ast.Call) for n in ast.walk(p))]


def dual_part_mismatch(
    question: str, code: str, frames: Mapping[str, Sequence[str]]
) -> Mismatch | None:
    """Two parts of the shown tuple, list or dict written alike but for opposite extremes
    and one column, of which the question names one and not the other (see the module)."""
    read = _frames_read(code, frames)
    columns = {c for f in read for c in frames[f]}
    if not columns:
        return None
    named = named_columns(question, columns)
    masked = []
    for part in _parts(code):
        m = _Masked(columns)
        shape = ast.dump(m.visit(ast.parse(ast.unparse(part), mode="eval")))
        masked.append((shape, m.seen, m.duals))
    for i, (shape, seen, duals) in enumerate(masked):
        for shape2, seen2, duals2 in masked[i + 1 :]:
            if shape != shape2 or len(seen) != len(seen2) or len(duals) != 1:
                continue
            if _DUAL[duals[0]] != duals2[0]:
                continue
            differ = [(a, b) for a, b in zip(seen, seen2, strict=True) if a != b]
            if len(differ) != 1:
                continue
            a, b = differ[0]
            if (a in named) != (b in named):
                missed, instead = (a, b) if a in named else (b, a)
                return Mismatch((missed,), (instead,), partial=True)
    return None


def frame_columns(env: Environment, timeout: float = 30.0) -> dict[str, list[str]]:
    """The columns of each data frame in ``env`` (empty when the probe fails)."""
    res = env.probe(_FRAMES_PROBE, timeout=timeout)
    if not res.ok or not isinstance(res.value, dict):
        return {}
    return {str(k): [str(c) for c in v] for k, v in res.value.items() if isinstance(v, list)}


def column_kinds(
    probe: Callable[..., ProbeResult], pairs: Sequence[tuple[str, str]], timeout: float = 20.0
) -> dict[tuple[str, str], str]:
    """``(frame, column) -> "number" | "text" | "other"`` for the pairs whose column exists,
    read by a fork probe (`stateguard.kernel.namespace.column_kinds`); empty when the probe
    fails or its output is not what the helper prints."""
    if not pairs:
        return {}
    rows = probe_json(probe, namespace.call("column_kinds", list(pairs)), timeout)
    try:
        return {(str(f), str(c)): str(k) for f, c, k in rows or []}
    except (TypeError, ValueError):  # a namespace that forged the probe's output
        return {}
