"""Code whose value is fixed by its own form, whatever the data: ``x - x``, ``a / a``,
``df.k < df.k``, ``df[['a', 'a']]``, a tuple or list holding the same computed value twice
(``(df.a.idxmin(), df.a.idxmin())``), a column correlated with itself (``df.a.corr(df.a)``),
a term added and taken away again (``a * q + t - t``), a group key aggregated within its
own groups (``df.groupby('k')['k'].mean()``: each group holds one value of it). No analyst
means them; a mistyped or swapped operand does (``apple.index.min() - apple.index.min()``
for ``max() - min()``).

``x == x`` and ``x != x`` are left alone: they are the idiom for testing NaN.

`self_products` finds a weaker sign of the same slip: a column multiplied by itself
(``df['quantity'] * df['quantity']`` for ``quantity * item_price``) when the question
speaks of no square. Its value is not fixed, so it is a doubt, not a verdict.

`unvaried_rows` finds another: a value computed inside a comprehension that reads none of
its loop variables (``[{'g': g, 'median': df.s.median()} for g in groups]``), so every row
gets the same number. It is a doubt (a total repeated on each row can be meant).

`averaged_twice` finds another: a mean divided by a count (``df.groupby('g').x.mean() /
df.g.value_counts()``). The mean has already divided by the count; dividing again gives
a number per row per row. It is a doubt too (a mean over a size can mean something)."""

from __future__ import annotations

import ast

from stateguard.question import aggregate_words

_SAME_OPS = (ast.Sub, ast.Div, ast.FloorDiv, ast.Mod, ast.BitXor)
_SAME_CMPS = (ast.Lt, ast.Gt, ast.LtE, ast.GtE)
# statistics of two series that are fixed when both are one series (1, or its variance)
_PAIRED = frozenset({"corr", "corrwith"})
# aggregations fixed when a group's values are all its key: the key (or 1 for nunique);
# ``count``, ``size`` and ``sum`` are not (the first two are the idiom for group sizes)
_FIXED_WITHIN_KEY = frozenset(
    {"mean", "median", "min", "max", "first", "last", "mode", "nunique", "unique", "idxmax"}
)


def _is_literal(node: ast.AST) -> bool:
    return all(isinstance(n, ast.Constant | ast.UnaryOp | ast.unaryop) for n in ast.walk(node))


def _same(a: ast.AST, b: ast.AST) -> bool:
    return not _is_literal(a) and ast.dump(a) == ast.dump(b)


def _is_column(node: ast.AST) -> bool:
    """``df['a']`` or ``df.a``: a column of a named frame."""
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)


def _binops(code: str, op: type[ast.operator]) -> list[ast.BinOp]:
    """Every binary operation ``op`` of ``code`` (none when it does not parse)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    return [n for n in ast.walk(tree) if isinstance(n, ast.BinOp) and isinstance(n.op, op)]


def self_products(code: str, question: str) -> list[str]:
    """Each column of ``code`` multiplied by itself, unless the question speaks of squares."""
    if aggregate_words(question).square:
        return []
    return [
        f"`{ast.unparse(node)}` multiplies a column by itself, and the question asks for no square"
        for node in _binops(code, ast.Mult)
        if _is_column(node.left) and _same(node.left, node.right)
    ]


_COUNTS = frozenset({"value_counts", "count", "size", "nunique", "len"})


def _last_call(node: ast.AST) -> str | None:
    """The name of the call an expression ends with (``a.b.mean()`` → ``mean``,
    ``len(x)`` → ``len``), through a subscript of its result."""
    while isinstance(node, ast.Subscript):
        node = node.value
    if not isinstance(node, ast.Call):
        return None
    return getattr(node.func, "attr", None) or getattr(node.func, "id", None)


def averaged_twice(code: str) -> list[str]:
    """Each mean of ``code`` divided by a count (see the module)."""
    return [
        f"`{ast.unparse(node)}` divides a mean by a count, and the mean has already divided by it"
        for node in _binops(code, ast.Div)
        if _last_call(node.left) == "mean" and _last_call(node.right) in _COUNTS
    ]


def _shown_displays(tree: ast.Module) -> list[ast.AST]:
    """The tuples and lists a cell shows: its last expression, and what it prints (a
    tuple bound to names, ``a, b = df.copy(), df.copy()``, is not shown)."""
    out: list[ast.AST] = []
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        out.append(tree.body[-1].value)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print":
            out.extend(node.args)
    return [n for n in out if isinstance(n, ast.Tuple | ast.List)]


def _computed(node: ast.AST) -> bool:
    """An expression that calls something (``df['a'].max()``, ``df.loc[df.a.idxmax(), 'b']``)."""
    return any(isinstance(n, ast.Call) for n in ast.walk(node))


def _signed_terms(node: ast.AST, sign: int = 1) -> list[tuple[int, ast.AST]]:
    """The terms of a chain of ``+`` and ``-``, with their signs (``a + b - c`` → +a, +b, -c)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
        right = sign if isinstance(node.op, ast.Add) else -sign
        return _signed_terms(node.left, sign) + _signed_terms(node.right, right)
    return [(sign, node)]


def _cancelled(node: ast.BinOp, parents: dict[int, ast.AST]) -> str | None:
    """The first term of the outermost ``+``/``-`` chain at ``node`` added and taken away."""
    parent = parents.get(id(node))
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Add | ast.Sub):
        return None  # the chain is read once, from its top
    terms = _signed_terms(node)
    if len(terms) < 3:
        return None  # ``x - x`` alone is the same-operand case
    seen: dict[str, int] = {}
    for sign, term in terms:
        if _is_literal(term):
            continue
        key = ast.dump(term)
        if seen.get(key) == -sign:
            return ast.unparse(term)
        seen.setdefault(key, sign)
    return None


def _grouped_key(node: ast.Call) -> str | None:
    """``df.groupby('k')['k'].mean()``: the key, when a group's own key is aggregated."""
    method = getattr(node.func, "attr", None)
    target = node.func.value if isinstance(node.func, ast.Attribute) else None
    if method in {"agg", "aggregate", "apply"}:
        if not node.args or not any(
            getattr(n, "attr", None) in {"idxmax", "mode"} for n in ast.walk(node.args[0])
        ):
            return None
    elif method not in _FIXED_WITHIN_KEY:
        return None
    if not (isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant)):
        return None
    group = target.value
    if not (isinstance(group, ast.Call) and getattr(group.func, "attr", None) == "groupby"):
        return None
    keys = [a for a in group.args[:1] if isinstance(a, ast.Constant)]
    keys += [k.value for k in group.keywords if k.arg == "by" and isinstance(k.value, ast.Constant)]
    if keys and keys[0].value == target.slice.value and isinstance(keys[0].value, str):
        return keys[0].value
    return None


def degenerate(code: str) -> list[str]:
    """Each expression of ``code`` fixed by its form, as ``shown — why``."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    out: list[str] = []
    shown = {id(n) for n in _shown_displays(tree)}
    parents = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, _SAME_OPS)
            and _same(node.left, node.right)
        ):
            out.append(f"`{ast.unparse(node)}` has the same operand on both sides")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
            term = _cancelled(node, parents)
            if term is not None:
                out.append(f"`{ast.unparse(node)[:200]}` adds `{term}` and takes it away again")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in _PAIRED and node.args and _same(node.func.value, node.args[0]):
                out.append(f"`{ast.unparse(node)}` correlates a column with itself")
            key = _grouped_key(node)
            if key is not None:
                out.append(
                    f"`{ast.unparse(node)[:200]}` aggregates the group key {key!r} within its"
                    " own groups, where it holds one value"
                )
        elif isinstance(node, ast.Compare) and len(node.ops) == 1:
            if isinstance(node.ops[0], _SAME_CMPS) and _same(node.left, node.comparators[0]):
                out.append(f"`{ast.unparse(node)}` compares a value with itself")
        elif isinstance(node, ast.Tuple | ast.List) and id(node) in shown:
            values = [ast.dump(e) for e in node.elts if _computed(e)]
            if len(values) != len(set(values)):
                out.append(f"`{ast.unparse(node)[:200]}` holds the same computed value twice")
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.List):
            keys = [
                k.value
                for k in node.slice.elts
                if isinstance(k, ast.Constant) and isinstance(k.value, str)
            ]
            twice = sorted({k for k in keys if keys.count(k) > 1})
            if twice:
                out.append(
                    f"`{ast.unparse(node)}` selects {', '.join(repr(k) for k in twice)} twice"
                )
    return out


def _reads(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def unvaried_rows(code: str) -> list[str]:
    """Each value computed in a comprehension that reads none of its loop variables, beside
    a field that does (see the module)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    out: list[str] = []
    for comp in ast.walk(tree):
        if not isinstance(comp, ast.ListComp | ast.GeneratorExp) or not isinstance(
            comp.elt, ast.Dict
        ):
            continue
        loop = set().union(*(_reads(g.target) for g in comp.generators))
        fields = [v for v in comp.elt.values if v is not None]
        if not any(_reads(v) & loop for v in fields):
            continue
        out.extend(
            f"`{ast.unparse(v)[:120]}` is computed once for every row: it reads none of "
            f"{', '.join(sorted(loop))}"
            for v in fields
            if _computed(v) and not _reads(v) & loop
        )
    return out
