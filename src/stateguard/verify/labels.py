"""Rows built in a loop whose value cannot belong to the row's label (no model, no data).

A table built by a comprehension labels each row with its loop variables and computes a
value for it::

    [{'Gender': g, 'Job Title': j, 'Median': s[(s.Gender == g) & (s.Title == j)].Salary.median()}
     for g in genders for j in jobs[g]]
    {c: df[c].mean() for c in cols}

Two forms of such code give a value that is not the label's, whatever the data:

- **a label the value never uses** (`unused_labels`): no computed part of the row reads the
  loop variable that labels it (``'Median': s[s.Gender == g].Salary.median()`` in a row
  labelled by ``j`` too), so every ``j`` gets the same value. A loop variable counts as
  read when the value reads a name bound with it (``for i, row in df.iterrows()``) or
  one bound by a later loop over something it reads (``for y in years for part in
  [df[df.year == y]]``).
- **a label the value complements** (`complemented_labels`): the value filters on
  ``x != g`` and never on ``x == g``, so the row labelled ``g`` is computed from every
  row that is *not* ``g``.

A row's parts are a dict literal's values, a tuple's or list's items, or a dict
comprehension's key and value; a label is a part that is a bare loop variable, and a
computed part is a statistic of data: a call of ``len`` or of a reducing method
(``sum``, ``mean``, ``median``, ``nunique``…) that reads a name other than the loop
variables and modules. A comprehension with no label or no statistic is not judged: an
empty value set up for each label (``{k: set() for k in keys}``) or a random draw per
label (``{v: rng.random() for v in nodes}``) is meant to be the same, or not to be.
A complement is a comparison of the label with a column (``df['x']``, ``df.x``), not
with another loop variable (``[w for w in nbrs[v] if w != v]``).

Either form can be meant (a group's value set beside each of its members; each group
against all the others), so each is a doubt.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator

_Comp = ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp


def _tree(code: str) -> ast.Module | None:
    try:
        return ast.parse(code)
    except SyntaxError:
        return None


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _parts(comp: _Comp) -> list[ast.expr]:
    """The parts of one row of ``comp`` (see the module)."""
    if isinstance(comp, ast.DictComp):
        return [comp.key, comp.value]
    elt = comp.elt
    if isinstance(elt, ast.Dict):
        return list(elt.values)
    if isinstance(elt, ast.Tuple | ast.List):
        return list(elt.elts)
    return [elt]


_MODULES = frozenset(
    {
        "pd",
        "np",
        "math",
        "stats",
        "scipy",
        "sns",
        "plt",
        "datetime",
        "dt",
        "re",
        "random",
        "statistics",
        "collections",
        "itertools",
        "json",
        "os",
        "time",
    }
)
"""Names that are commonly modules: reading them is reading no data."""


_STATISTICS = frozenset(
    {"sum", "mean", "median", "min", "max", "count", "size", "nunique", "std", "var",
     "sem", "quantile", "mode", "idxmax", "idxmin", "value_counts", "prod", "corr", "cov",
     "agg", "aggregate", "describe", "first", "last", "len"}
)  # fmt: skip
"""Calls that reduce data to a statistic (methods, and the builtin ``len``)."""


_RANDOM = frozenset({"random", "rng", "seed", "generator"})
"""Names of random generators (``np.random``, ``rng``): their draws differ per call."""


def _computed(node: ast.AST, loops: set[str]) -> bool:
    """A statistic of data (see the module)."""
    data = {n for n in _names(node) - loops - _MODULES if not hasattr(builtins, n)}
    if data & _RANDOM or any(
        isinstance(n, ast.Attribute) and n.attr in _RANDOM for n in ast.walk(node)
    ):
        return False  # a draw per label
    return bool(data) and any(
        isinstance(n, ast.Call)
        and (getattr(n.func, "attr", None) or getattr(n.func, "id", None)) in _STATISTICS
        for n in ast.walk(node)
    )


class _Loops:
    """The loop variables of one comprehension: which are bound together, and which a
    later loop's iterable reads."""

    def __init__(self, comp: _Comp) -> None:
        self.group: dict[str, frozenset[str]] = {}
        """loop variable -> every variable bound by the same target."""
        self.feeds: dict[str, set[str]] = {}
        """loop variable -> the variables of earlier loops its iterable reads."""
        for gen in comp.generators:
            bound = frozenset(_names(gen.target))
            earlier = _names(gen.iter) & set(self.group)
            for name in bound:
                self.group[name] = bound
                self.feeds[name] = set(earlier)

    def read_by(self, node: ast.AST) -> set[str]:
        """The loop variables ``node``'s value depends on (see the module)."""
        todo = [n for n in _names(node) if n in self.group]
        seen: set[str] = set()
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            todo.extend(self.group[name] | self.feeds[name])
        return seen


def _rows(code: str) -> Iterator[tuple[_Comp, _Loops, list[str], list[ast.expr]]]:
    """Each comprehension with labels and computed parts: (it, its loops, the labels, the
    computed parts)."""
    tree = _tree(code)
    if tree is None:
        return
    for node in ast.walk(tree):
        if not isinstance(node, _Comp):
            continue
        loops = _Loops(node)
        parts = _parts(node)
        labels = [p.id for p in parts if isinstance(p, ast.Name) and p.id in loops.group]
        computed = [
            p for p in parts if not isinstance(p, ast.Name) and _computed(p, set(loops.group))
        ]
        if labels and computed:
            yield node, loops, list(dict.fromkeys(labels)), computed


def _shown(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 160 else text[:157] + "..."


def unused_labels(code: str) -> list[str]:
    """Each row label no computed part of its row reads (see the module)."""
    out = []
    for _, loops, labels, computed in _rows(code):
        read: set[str] = set()
        for part in computed:
            read |= loops.read_by(part)
        for label in labels:
            if label not in read:
                shown = "`, `".join(_shown(p) for p in computed[:2])
                out.append(
                    f"each row is labelled by `{label}`, but `{shown}` never reads it: "
                    f"the value is the same for every `{label}`"
                )
    return out


def _compared(part: ast.AST, label: str) -> tuple[list[ast.Compare], bool]:
    """The ``x != label`` comparisons in ``part``, and whether it also keeps the label in
    (``x == label``, ``label in x``, ``x.isin([label])``)."""
    unequal, equal = [], False
    for node in ast.walk(part):
        if (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", None) == "isin"
            and any(label in _names(a) for a in node.args)
        ):
            equal = True  # ``df.x.isin([label])``: kept in
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
            continue
        sides = (node.left, node.comparators[0])
        if not any(isinstance(s, ast.Name) and s.id == label for s in sides):
            continue
        if not any(isinstance(s, ast.Subscript | ast.Attribute) for s in sides):
            continue  # the label against a name, not a column
        if isinstance(node.ops[0], ast.NotEq):
            unequal.append(node)
        elif isinstance(node.ops[0], ast.Eq | ast.In):
            equal = True
    return unequal, equal


def complemented_labels(code: str) -> list[str]:
    """Each row label its value keeps out instead of in (see the module): compared with
    a column by ``!=`` in a computed part of the row, and kept in by none."""
    out = []
    for _, _, labels, computed in _rows(code):
        for label in labels:
            found = [_compared(part, label) for part in computed]
            unequal = [c for cs, _ in found for c in cs]
            if unequal and not any(equal for _, equal in found):
                out.append(
                    f"the row labelled `{label}` is computed from the rows where "
                    f"`{ast.unparse(unequal[0])}`: every row but its own label's"
                )
    return out
