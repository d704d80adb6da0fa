"""A rename that renamed nothing: a key the table it was applied to does not hold.

``t.rename(columns={"mpg": "Average MPG"})`` skips every key that is not a column of
``t``, without a word (pandas raises only with ``errors="raise"``). When the table
holds another column than the code assumed (a wrong column selected upstream, a
column already renamed), the result keeps its old name and looks finished.

`column_renames` reads from a cell's code each ``X.rename(columns={...})`` (or
``X.rename({...}, axis=1 | "columns")``) whose table ``X`` can be evaluated again after
the cell with the value it had then: ``X`` reads no name that the cell binds or
changes at or after the rename's statement, and the rename is not inside a loop,
function or comprehension. `unmatched_renames` evaluates each such ``X`` in a
copy-on-write probe of the session after the cell and returns the keys it lacks.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict

from stateguard.audit.filterchecks import probe_json
from stateguard.kernel import ProbeResult, namespace

_MAX_RENAMES = 8
_MUTATING = frozenset(
    {"insert", "pop", "update", "drop", "rename", "fillna", "replace", "set_index"}
    | {"reset_index", "sort_values", "dropna", "clip", "where", "mask", "query", "eval"}
)
"""Methods that change their receiver in place when called with ``inplace=True`` (or,
for ``insert``/``pop``/``update``, always)."""
_ALWAYS_MUTATING = frozenset({"insert", "pop", "update"})


class ColumnRename(BaseModel):
    """``table.rename(columns={key: ...})`` in a cell: the table's source and the keys."""

    model_config = ConfigDict(frozen=True)

    table: str
    """Source of the expression the rename is applied to."""
    keys: tuple[str, ...]
    code: str
    """Source of the whole rename call."""


class UnmatchedRename(BaseModel):
    """Keys of a rename that are not columns of its table; the table's columns."""

    model_config = ConfigDict(frozen=True)

    rename: ColumnRename
    missing: tuple[str, ...]
    columns: tuple[str, ...]


def _mapping(call: ast.Call) -> ast.Dict | None:
    for kw in call.keywords:
        if kw.arg == "columns":
            return kw.value if isinstance(kw.value, ast.Dict) else None
    axis = next((kw.value for kw in call.keywords if kw.arg == "axis"), None)
    if (
        call.args
        and isinstance(call.args[0], ast.Dict)
        and isinstance(axis, ast.Constant)
        and axis.value in (1, "columns")
    ):
        return call.args[0]
    return None


def _root(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call | ast.Starred):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _written(stmt: ast.stmt) -> set[str]:
    """Names a statement binds, deletes or changes (item or attribute assignment, an
    in-place method call)."""
    out: set[str] = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            out.add(node.id)
        elif isinstance(node, ast.Subscript | ast.Attribute) and isinstance(
            node.ctx, ast.Store | ast.Del
        ):
            if (root := _root(node)) is not None:
                out.add(root)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            method = node.func.attr
            inplace = any(
                kw.arg == "inplace"
                and not (isinstance(kw.value, ast.Constant) and not kw.value.value)
                for kw in node.keywords
            )
            changes = method in _ALWAYS_MUTATING or (method in _MUTATING and inplace)
            if changes and (root := _root(node.func.value)) is not None:
                out.add(root)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            out |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
    return out


def _renames_in(stmt: ast.stmt) -> list[ast.Call]:
    """Column renames of a statement, outside loops, functions, lambdas, comprehensions."""
    out: list[ast.Call] = []
    barred = (
        ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
        ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
    )  # fmt: skip

    def visit(node: ast.AST) -> None:
        if isinstance(node, barred):
            return
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "rename"
            and _mapping(node) is not None
        ):
            out.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(stmt)
    return out


def column_renames(code: str) -> list[ColumnRename]:
    """The column renames of ``code`` whose table can be evaluated again after the cell
    (see the module); none when the code does not parse."""
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return []
    written_from = [set[str]() for _ in body]
    later: set[str] = set()
    for i in range(len(body) - 1, -1, -1):
        later |= _written(body[i])
        written_from[i] = set(later)
    out: list[ColumnRename] = []
    for i, stmt in enumerate(body):
        for call in _renames_in(stmt):
            mapping = _mapping(call)
            assert mapping is not None
            keys = tuple(
                k.value
                for k in mapping.keys
                if isinstance(k, ast.Constant) and isinstance(k.value, str)
            )
            if not keys or len(keys) != len(mapping.keys):
                continue
            table = call.func.value  # type: ignore[attr-defined]
            names = {n.id for n in ast.walk(table) if isinstance(n, ast.Name)}
            if not names or names & written_from[i]:
                continue
            if any(isinstance(n, ast.Lambda | ast.NamedExpr) for n in ast.walk(table)):
                continue
            out.append(ColumnRename(table=ast.unparse(table), keys=keys, code=ast.unparse(call)))
    return list(dict.fromkeys(out))[:_MAX_RENAMES]


def unmatched_renames(
    probe: Callable[..., ProbeResult], code: str, timeout: float = 20.0
) -> list[UnmatchedRename]:
    """The renames of ``code`` with a key their table does not hold as a column, the table
    evaluated in a probe after the cell (none when the code renames no column)."""
    renames = column_renames(code)
    if not renames:
        return []
    cell = namespace.call("unmatched_keys", [[r.table, list(r.keys)] for r in renames])
    rows = probe_json(probe, cell, timeout)
    out = []
    try:
        for index, missing, columns in rows or []:
            rename = renames[int(index)]
            out.append(
                UnmatchedRename(
                    rename=rename,
                    missing=tuple(str(k) for k in missing if str(k) in rename.keys),
                    columns=tuple(map(str, columns)),
                )
            )
    except (TypeError, ValueError, IndexError):  # a namespace that forged the output
        return []
    return [f for f in out if f.missing]


def describe_one(found: UnmatchedRename) -> str:
    """One clause naming the rename, the keys it skipped and the table's columns."""
    missing = ", ".join(repr(k) for k in found.missing)
    shown = ", ".join(repr(c) for c in found.columns[:12])
    more = ", …" if len(found.columns) > 12 else ""
    return (
        f"`{found.rename.code[:160]}` renamed nothing for {missing}: the table it is applied"
        f" to has the columns {shown}{more}"
    )


def describe(found: list[UnmatchedRename]) -> str:
    """The note for the model."""
    return (
        "Note: a rename skipped keys. "
        + "; ".join(describe_one(f) for f in found[:3])
        + ". pandas skips a key that is not a column without a word (`errors='raise'` makes it"
        " fail): the table holds other columns than the code assumes."
    )
