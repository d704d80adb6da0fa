"""Code whose value is fixed by its own form, whatever the data: ``x - x``, ``a / a``,
``df.k < df.k``, ``df[['a', 'a']]``, a tuple or list holding the same computed value twice
(``(df.a.idxmin(), df.a.idxmin())``). No analyst means them; a mistyped or swapped
operand does (``apple.index.min() - apple.index.min()`` for ``max() - min()``).

The same holds for a value set against itself (``s.corr(s)``, ``pearsonr(a, a)``: 1 or
no test at all), for a sum whose term is added and taken away again (``a * b + c - c``:
``c`` drops out), and for a grouping key aggregated within its own groups
(``df.groupby('k')['k'].max()``: each group's key again; ``nunique`` gives 1).

``x == x`` and ``x != x`` are left alone: they are the idiom for testing NaN.

`self_products` finds a weaker sign of the same slip: a column multiplied by itself
(``df['quantity'] * df['quantity']`` for ``quantity * item_price``) when the question
speaks of no square. Its value is not fixed, so it is a doubt, not a verdict.

`one_sided_ranges` finds another: two bounds on one value from the same side joined by
"and" (``(d < r) & (d <= r + dr)``, ``np.logical_and(d >= r, d > r + dr)``), where the
bounds are two numbers or two expressions of one name. The tighter one alone decides; a
range has a bound on each side, so one of the two comparisons is most likely flipped. A
doubt: the value is not fixed.

`averaged_twice` finds another: a mean divided by a count (``df.groupby('g').x.mean() /
df.g.value_counts()``). The mean has already divided by the count; dividing again gives
a number per row per row. It is a doubt too (a mean over a size can mean something)."""

from __future__ import annotations

import ast

from stateguard.question import aggregate_words

_SAME_OPS = (ast.Sub, ast.Div, ast.FloorDiv, ast.Mod, ast.BitXor)
_SAME_CMPS = (ast.Lt, ast.Gt, ast.LtE, ast.GtE)


def _is_literal(node: ast.AST) -> bool:
    return all(isinstance(n, ast.Constant | ast.UnaryOp | ast.unaryop) for n in ast.walk(node))


def _same(a: ast.AST, b: ast.AST) -> bool:
    return not _is_literal(a) and ast.dump(a) == ast.dump(b)


def _is_column(node: ast.AST) -> bool:
    """``df['a']`` or ``df.a``: a column of a named frame."""
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)


def _tree(code: str) -> ast.Module:
    """``code`` parsed; an empty module when it does not parse (nothing to find)."""
    try:
        return ast.parse(code)
    except SyntaxError:
        return ast.Module(body=[], type_ignores=[])


def _binops(code: str, op: type[ast.operator]) -> list[ast.BinOp]:
    """Every binary operation ``op`` of ``code`` (none when it does not parse)."""
    return [n for n in ast.walk(_tree(code)) if isinstance(n, ast.BinOp) and isinstance(n.op, op)]


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


_PAIRED_METHODS = frozenset({"corr", "cov", "corrwith"})
"""Methods that set a value against their argument."""
_PAIRED_FUNCTIONS = frozenset(
    {
        "pearsonr", "spearmanr", "kendalltau", "pointbiserialr", "corrcoef", "cov",
        "ttest_ind", "ttest_rel", "mannwhitneyu", "wilcoxon", "ks_2samp", "linregress",
    }
)  # fmt: skip
"""Functions (numpy, scipy.stats) that set their first argument against their second."""


def _self_paired(node: ast.Call) -> bool:
    """``s.corr(s)`` or ``pearsonr(a, a)``: one value set against itself."""
    name = getattr(node.func, "attr", None) or getattr(node.func, "id", None)
    if isinstance(node.func, ast.Attribute) and name in _PAIRED_METHODS and node.args:
        return _same(node.func.value, node.args[0])
    return name in _PAIRED_FUNCTIONS and len(node.args) >= 2 and _same(*node.args[:2])


def _signed_terms(node: ast.AST) -> list[tuple[int, ast.AST]]:
    """The terms of a chain of ``+`` and ``-`` as written (``a + b - c``), each with its
    sign; a bracketed sum on the right (``a + (b - c)``) is one term."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
        return [*_signed_terms(node.left), (1 if isinstance(node.op, ast.Add) else -1, node.right)]
    return [(1, node)]


def _cancelled(node: ast.BinOp) -> ast.AST | None:
    """A term a chain of three or more terms adds and takes away again (``a + c - c``)."""
    terms = _signed_terms(node)
    if len(terms) < 3:
        return None  # ``x - x`` is found as the same operand on both sides
    for i, (s, t) in enumerate(terms):
        for s2, t2 in terms[i + 1 :]:
            if s != s2 and _same(t, t2):
                return t
    return None


_KEY_AGGREGATES = frozenset(
    {"min", "max", "first", "last", "mean", "median", "mode", "unique", "nunique"}
)
"""Aggregates that give a group's own key back when applied to the grouping column (or,
``nunique``, 1)."""


def _group_keys(node: ast.AST) -> set[str]:
    """The column names a ``groupby`` call groups by (``groupby('k')``, ``groupby(['a', 'b'])``,
    ``groupby(by='k')``); empty for anything else."""
    if not (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "groupby"):
        return set()
    keys = list(node.args[:1]) + [k.value for k in node.keywords if k.arg == "by"]
    out: set[str] = set()
    for k in keys:
        elts = k.elts if isinstance(k, ast.List | ast.Tuple) else [k]
        out |= {e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return out


def _returns_key(call: ast.Call) -> bool:
    """An aggregate that gives a group's value back: a name of `_KEY_AGGREGATES`, as a
    method, a string passed to ``agg``, or a lambda ending in ``value_counts().idxmax()``
    or ``mode()``."""
    name = getattr(call.func, "attr", None)
    if name in _KEY_AGGREGATES:
        return True
    if name not in {"agg", "aggregate", "apply"} or len(call.args) != 1:
        return False
    arg = call.args[0]
    if isinstance(arg, ast.Constant):
        return arg.value in _KEY_AGGREGATES
    if isinstance(arg, ast.Lambda):
        body = arg.body
        while isinstance(body, ast.Subscript):
            body = body.value
        last = _last_call(body)
        func = body.func if isinstance(body, ast.Call) else None
        inner = func.value if isinstance(func, ast.Attribute) else None
        by_counts = (
            last in {"idxmax", "idxmin"}
            and isinstance(inner, ast.Call)
            and getattr(inner.func, "attr", None) == "value_counts"
        )
        return by_counts or last == "mode"
    return False


def _key_aggregated(node: ast.Call) -> str | None:
    """The grouping key ``node`` aggregates within its own groups, or None."""
    if not isinstance(node.func, ast.Attribute) or not _returns_key(node):
        return None
    picked = node.func.value
    if isinstance(picked, ast.Subscript) and isinstance(picked.slice, ast.Constant):
        column, grouped = picked.slice.value, picked.value
    elif isinstance(picked, ast.Attribute):
        column, grouped = picked.attr, picked.value
    else:
        return None
    return column if isinstance(column, str) and column in _group_keys(grouped) else None


def degenerate(code: str) -> list[str]:
    """Each expression of ``code`` fixed by its form, as ``shown — why``."""
    tree = _tree(code)
    out: list[str] = []
    inner_sums = {
        id(c)
        for n in ast.walk(tree)
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add | ast.Sub)
        for c in (n.left, n.right)
    }
    shown = {id(n) for n in _shown_displays(tree)}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, _SAME_OPS)
            and _same(node.left, node.right)
        ):
            out.append(f"`{ast.unparse(node)}` has the same operand on both sides")
        elif (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Add | ast.Sub)
            and id(node) not in inner_sums
            and (gone := _cancelled(node)) is not None
        ):
            out.append(
                f"`{ast.unparse(node)[:200]}` adds `{ast.unparse(gone)}` and takes it away "
                "again: it drops out"
            )
        elif isinstance(node, ast.Call) and _self_paired(node):
            out.append(f"`{ast.unparse(node)[:200]}` sets a value against itself")
        elif isinstance(node, ast.Call) and (key := _key_aggregated(node)) is not None:
            out.append(
                f"`{ast.unparse(node)[:200]}` aggregates the grouping key {key!r} within its "
                "own groups: each group gives its key back"
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


_UPPER = (ast.Lt, ast.LtE)
_MIRROR: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.Gt,
    ast.LtE: ast.GtE,
    ast.Gt: ast.Lt,
    ast.GtE: ast.LtE,
}


def _scalar(node: ast.AST) -> bool:
    """A bound that is one number: literals and names combined by arithmetic (``r + dr``),
    not a column, an element or a call."""
    kinds = (ast.Constant, ast.Name, ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop)
    return all(isinstance(n, (*kinds, ast.expr_context)) for n in ast.walk(node))


def _bounds(node: ast.AST) -> list[tuple[str, str, ast.AST]]:
    """(value, side, bound) for each reading of ``a < b`` with a scalar bound: ``a`` bounded
    from above by ``b``, and ``b`` from below by ``a``."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
        return []
    op, left, right = type(node.ops[0]), node.left, node.comparators[0]
    if op not in _MIRROR:
        return []
    out = []
    for value, o, bound in ((left, op, right), (right, _MIRROR[op], left)):
        if _scalar(bound) and not _is_literal(value):
            out.append((ast.dump(value), "above" if o in _UPPER else "below", bound))
    return out


def _conjuncts(node: ast.AST) -> list[ast.AST]:
    """The terms of ``a & b & …``, ``a and b`` or ``np.logical_and(a, b)``."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd):
        return _conjuncts(node.left) + _conjuncts(node.right)
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        return list(node.values)
    if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "logical_and":
        return list(node.args)
    return [node]


def _comparable(a: ast.AST, b: ast.AST) -> bool:
    """Two different bounds whose order the code fixes: two numbers, or two expressions of
    one name (``r`` and ``r + dr``). ``b`` and ``c`` may be arrays, and both bounds meant."""
    if ast.dump(a) == ast.dump(b):
        return False
    return (_is_literal(a) and _is_literal(b)) or bool(_reads(a) & _reads(b))


def one_sided_ranges(code: str) -> list[str]:
    """Each conjunction of two bounds on one value from the same side (see the module)."""
    tree = _tree(code)
    out: list[str] = []
    # ``a & b & c`` is read once, from its top (its inner ``a & b`` is part of it)
    inner = {
        id(c)
        for n in ast.walk(tree)
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.BitAnd)
        for c in (n.left, n.right)
    }
    for node in ast.walk(tree):
        terms = [] if id(node) in inner else _conjuncts(node)
        if len(terms) < 2:
            continue
        readings = [(i, b) for i, term in enumerate(terms) for b in _bounds(term)]
        pair = next(
            (
                (a, b)
                for i, a in readings
                for j, b in readings
                if i < j and a[:2] == b[:2] and _comparable(a[2], b[2])
            ),
            None,
        )
        if pair is not None:
            (_, side, first), (_, _, second) = pair
            out.append(
                f"`{ast.unparse(node)[:160]}` bounds one value from {side} twice "
                f"(by `{ast.unparse(first)}` and `{ast.unparse(second)}`): the tighter "
                "bound alone decides, and a range has a bound on each side"
            )
    return out
