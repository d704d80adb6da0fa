"""Silent-error mutations of a reference cell for the labelled step set (no model).

Each mutator takes the reference code and the column names of the data frames in the
session and returns mutated versions (empty when the mutation does not apply):

- ``wrong-column``: one column reference (``df['a']``, ``df[['a', 'b']]``, ``df.a``)
  replaced by another column of the data;
- ``wrong-aggregate``: one aggregation swapped for its counterpart (``max``/``min``,
  ``idxmax``/``idxmin``, ``nlargest``/``nsmallest``, ``mean``/``median``, ``sum``→``mean``);
- ``sort-order``: a sort's direction reversed (``ascending=`` flipped or added);
- `double`: two faults of different kinds at once.

The flipped comparisons, dropped filters, widened scopes and join faults come from the
benchmark's injectors (see ``stateguard verify eval``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping, Sequence

Mutator = Callable[[str, Sequence[str]], list[str]]

_SWAP = {
    "max": "min",
    "min": "max",
    "idxmax": "idxmin",
    "idxmin": "idxmax",
    "nlargest": "nsmallest",
    "nsmallest": "nlargest",
    "mean": "median",
    "median": "mean",
    "sum": "mean",
}
_ALTERNATIVES = 4
"""Other columns tried per column reference."""


def _parse(code: str) -> ast.Module | None:
    try:
        return ast.parse(code)
    except SyntaxError:
        return None


def _variants(code: str, edit_count: int, apply: object) -> list[str]:
    """``apply(tree, i)`` edits the i-th site of a fresh tree; unparse each distinct result."""
    out: list[str] = []
    for i in range(edit_count):
        tree = _parse(code)
        if tree is None or not apply(tree, i):  # type: ignore[operator]
            continue
        text = ast.unparse(tree)
        if text not in out and text != ast.unparse(_parse(code)):  # type: ignore[arg-type]
            out.append(text)
    return out


def _column_sites(tree: ast.AST, columns: set[str]) -> list[ast.AST]:
    sites: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            keys = node.slice.elts if isinstance(node.slice, ast.List) else [node.slice]
            sites.extend(
                k
                for k in keys
                if isinstance(k, ast.Constant) and isinstance(k.value, str) and k.value in columns
            )
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.attr in columns
            and isinstance(node.ctx, ast.Load)
        ):
            sites.append(node)
    return sites


def wrong_column(code: str, columns: Sequence[str]) -> list[str]:
    """Each column reference replaced by up to four other columns of the data."""
    cols = sorted({c for c in columns if c.isidentifier() or c.strip()})
    known = set(cols)
    tree = _parse(code)
    if tree is None or len(cols) < 2:
        return []
    n_sites = len(_column_sites(tree, known))
    out: list[str] = []
    for offset in range(1, _ALTERNATIVES + 1):

        def apply(t: ast.AST, i: int, offset: int = offset) -> bool:
            site = _column_sites(t, known)[i]
            name = site.value if isinstance(site, ast.Constant) else site.attr  # type: ignore[attr-defined]
            other = cols[(cols.index(name) + offset) % len(cols)]
            if other == name:
                return False
            if isinstance(site, ast.Constant):
                site.value = other
            elif other.isidentifier():
                site.attr = other  # type: ignore[attr-defined]
            else:
                return False
            return True

        out.extend(v for v in _variants(code, n_sites, apply) if v not in out)
    return out


def _aggregate_sites(tree: ast.AST) -> list[ast.Attribute]:
    return [
        n.func
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _SWAP
    ]


def wrong_aggregate(code: str, columns: Sequence[str] = ()) -> list[str]:
    """Each aggregation call swapped for its counterpart."""
    tree = _parse(code)
    if tree is None:
        return []

    def apply(t: ast.AST, i: int) -> bool:
        site = _aggregate_sites(t)[i]
        site.attr = _SWAP[site.attr]
        return True

    return _variants(code, len(_aggregate_sites(tree)), apply)


def _sort_sites(tree: ast.AST) -> list[ast.Call]:
    return [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr in ("sort_values", "sort_index")
    ]


def sort_order(code: str, columns: Sequence[str] = ()) -> list[str]:
    """Each sort's direction reversed."""
    tree = _parse(code)
    if tree is None:
        return []

    def apply(t: ast.AST, i: int) -> bool:
        call = _sort_sites(t)[i]
        for kw in call.keywords:
            if kw.arg == "ascending":
                if isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, bool):
                    kw.value = ast.Constant(not kw.value.value)
                    return True
                return False
        call.keywords.append(ast.keyword(arg="ascending", value=ast.Constant(False)))
        return True

    return _variants(code, len(_sort_sites(tree)), apply)


def double(mutators: Mapping[str, Mutator], per_kind: int = 2) -> Mutator:
    """A mutator planting two faults of different kinds: for each ordered pair of kinds, the
    first ``per_kind`` mutants of the first, each mutated by the second (first ``per_kind``)."""

    def plant(code: str, columns: Sequence[str] = ()) -> list[str]:
        out: list[str] = []
        firsts = {k: m(code, columns)[:per_kind] for k, m in mutators.items()}
        for a, once in firsts.items():
            for b, second in mutators.items():
                if a == b:
                    continue
                for v in once:
                    out.extend(
                        w for w in second(v, columns)[:per_kind] if w not in out and w != code
                    )
        return out

    return plant


MUTANTS = {
    "wrong-column": wrong_column,
    "wrong-aggregate": wrong_aggregate,
    "sort-order": sort_order,
}
"""The mutators of this module by kind."""
