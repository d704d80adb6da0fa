"""Does the code do what the question says? Checks that need no reference solution.

- `contradictions`: a comparison in the code that goes against the question: the
  question asks for "more than 6" and the code keeps ``x <= 6``; the question names a
  value ("a Veggie Salad Bowl", "in the year of 2015") and the code keeps ``!= "Veggie
  Salad Bowl"`` (``year != 2015``), or the question excludes it ("not named Dragoons")
  and the code keeps ``== "Dragoons"``.
  Negations in the code (``~``, ``not``) are followed; ``.query`` strings are parsed.
- `ignored_names`: thresholds and quoted values of the question, and the columns and
  values of the data it names (read by a fork probe), that no code so far uses. A
  result that ignores a condition of the question is doubtful, not proven wrong (the
  condition may be met another way), so this is a warning, not a verdict.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from stateguard.question import (
    QuestionSpec,
    aggregate_words,
    kept_years,
    quoted_values,
    value_mentions,
)
from stateguard.question import row_condition as row_condition
from stateguard.verify.environment import Environment
from stateguard.verify.readings import OPPOSITE, Reading

_CMP = {ast.Gt: "up", ast.GtE: "up", ast.Lt: "down", ast.LtE: "down"}
_FLIP = {"up": "down", "down": "up"}
_WORDS = {"up": "more than", "down": "less than"}


def thresholds(question: str) -> list[tuple[float, str, bool]]:
    """``(value, "up"|"down", percent)`` of every "more than N" / "less than N" of the question."""
    return [(t.value, t.direction, t.percent) for t in QuestionSpec.parse(question).thresholds]


def _const(node: ast.AST) -> float | str | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _const(node.operand)
        return -inner if isinstance(inner, float) else None
    if isinstance(node, ast.Constant) and not isinstance(node.value, bool):
        if isinstance(node.value, int | float):
            return float(node.value)
        if isinstance(node.value, str):
            return node.value
    return None


def number_of(node: ast.AST) -> float | None:
    """The value of a numeric literal (``6``, ``-2.5``; not a bool), else None."""
    c = _const(node)
    return c if isinstance(c, float) else None


def _comparisons(node: ast.AST, negated: bool = False) -> Iterator[tuple[ast.Compare, bool]]:
    """Every single-operator comparison with whether an odd number of negations wraps it."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert | ast.Not):
        yield from _comparisons(node.operand, not negated)
        return
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        yield node, negated
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "query"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        try:
            parsed: ast.AST | None = ast.parse(node.args[0].value, mode="eval")
        except SyntaxError:
            parsed = None
        if parsed is not None:
            yield from _comparisons(parsed, negated)
    for child in ast.iter_child_nodes(node):
        yield from _comparisons(child, negated)


def number_text(value: float) -> str:
    """A number as a question writes it: ``2015``, ``1234567``, ``2.5`` (not ``1.23457e+06``)."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def contradictions(question: str, code: str) -> list[str]:
    """Comparisons of ``code`` that go against the question (see the module docstring)."""
    return [c.message for c in contradicting(question, code)]


def contradicting(question: str, code: str) -> list[Reading]:
    """`contradictions` with, for each, the comparison as written and as the question reads
    it, as a `Reading` (``(x <= 6) == False`` for "more than 6"), for a probe to corroborate
    on the data."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    spec = QuestionSpec.parse(question)
    asked = [(t.value, t.direction, t.percent) for t in spec.thresholds]
    # the side each threshold keeps rows on; a threshold whose side is not stated
    # ("keep … and remove …" in one clause) contradicts nothing
    kept = [(t.value, t.keeps, t.percent) for t in spec.thresholds if t.keeps is not None]
    out: list[Reading] = []
    for cmp, negated in _comparisons(tree):
        op, left, right = cmp.ops[0], cmp.left, cmp.comparators[0]
        lc, rc = _const(left), _const(right)
        shown = ast.unparse(cmp)
        other = f"({shown}) == False"  # the other side of the comparison, mask or bool
        if type(op) in _CMP and isinstance(lc, float) != isinstance(rc, float):
            value = rc if isinstance(rc, float) else lc
            direction = _CMP[type(op)]
            if isinstance(lc, float):  # 6 < x: the constant on the left mirrors the operator
                direction = _FLIP[direction]
            if negated:
                direction = _FLIP[direction]
            same = [d for v, d, pct in kept if value in (v, v / 100 if pct else v)]
            if same and direction not in same:
                out.append(
                    Reading(
                        f"the question keeps rows {_WORDS[same[0]]} {value:g} but the code "
                        f"keeps `{shown}`" + (" (negated)" if negated else ""),
                        shown,
                        other,
                    )
                )
        elif isinstance(op, ast.Eq | ast.NotEq) and (lc is None) != (rc is None):
            value = rc if rc is not None else lc
            assert value is not None
            if isinstance(value, str):
                hits = value_mentions(question, value) if len(value.strip()) >= 2 else []
            elif any(value in (v, v / 100 if pct else v) for v, _, pct in asked):
                continue  # "more than 6" kept as `x != 6` is not a value the question names
            else:
                value = number_text(value)
                hits = value_mentions(question, value)
            if not hits:
                continue
            keeps_it = isinstance(op, ast.Eq) != negated
            excluded = all(m.negated for m in hits)
            if keeps_it and excluded:
                message = f"the question excludes {value!r} but the code keeps `{shown}`"
                out.append(Reading(message, shown, other))
            elif not keeps_it and not excluded:
                message = (
                    f"the question asks about {value!r} but the code excludes it with `{shown}`"
                )
                out.append(Reading(message, shown, other))
    return out


# Runs in a fork: the columns and string values of the session's frames that the question
# names (whole words, case as written; values of text columns only, object or pandas' str
# dtype, each with its column), and the columns of the frames the step bound (``own``).
_NAMED_PROBE = """
def __sg_named(q, own):
    import re
    found, mine, outside = [], [], {}
    def named(s):
        return len(s) >= 3 and re.search(r'(?<!\\w)' + re.escape(s) + r'(?!\\w)', q) is not None
    for k, v in list(globals().items()):
        if k.startswith('_') or type(v).__name__ != 'DataFrame':
            continue
        if k in own:
            mine.extend(str(c) for c in v.columns)
        for c in v.columns:
            if isinstance(c, str) and named(c) and ['column', c] not in found:
                found.append(['column', c])
            try:
                col = v[c]
                kind = getattr(getattr(col, 'dtype', None), 'kind', None)
                if kind in ('O', 'S', 'U') and getattr(col, 'ndim', 2) == 1:
                    values = col.dropna().astype(str).unique()[:5000]
                    hits = [x for x in values if named(x)]
                    for x in hits:
                        if ['value', x, str(c)] not in found:
                            found.append(['value', x, str(c)])
                    if len(hits) >= 2:
                        rest = outside.setdefault(str(c), [])
                        rest.extend(x for x in values[:5000] if not named(x) and x not in rest)
            except Exception:
                pass
        if len(found) > 40:
            break
    return {'found': found, 'own': mine, 'outside': {c: o[:5] for c, o in outside.items()}}
__sg_named(%r, %r)
"""


def _constants(tree: ast.AST) -> set[float]:
    """Numeric constants of the code, those in ``.query`` strings included."""
    out = {c for n in ast.walk(tree) if isinstance(c := _const(n), float)}
    for cmp, _ in _comparisons(tree):
        out.update(c for n in (cmp.left, *cmp.comparators) if isinstance(c := _const(n), float))
    return out


_BOUND_METHODS = {"gt": "up", "ge": "up", "lt": "down", "le": "down"}


def _applies(tree: ast.AST, numbers: set[float], value: float, direction: str, pct: bool) -> bool:
    """Whether the code applies "more/less than ``value``": a comparison in that direction
    with the number (``x > 6``, ``6 < x``, ``x >= 7`` for a whole number, ``x.gt(6)``,
    ``.query('x > 6')``), or ``between``/``clip`` given it. A comparison the other way or an
    equality with the same number (``quantity == 1`` for "more than one") does not count;
    the number used otherwise (not in a comparison) counts, as the code may apply it in a
    way this cannot read."""
    forms = {value, value / 100} if pct else {value}
    seen_in_comparison = False
    for cmp, negated in _comparisons(tree):
        op, lc, rc = cmp.ops[0], _const(cmp.left), _const(cmp.comparators[0])
        c = rc if isinstance(rc, float) else lc if isinstance(lc, float) else None
        if c is None:
            continue
        if c in forms:
            seen_in_comparison = True
        if type(op) not in _CMP:
            continue
        d = _CMP[type(op)]
        if isinstance(lc, float) and not isinstance(rc, float):
            d = _FLIP[d]
        if negated:
            d = _FLIP[d]
        strict = isinstance(op, ast.Gt | ast.Lt) != negated
        if d == direction and (
            c in forms
            or (not strict and value == int(value) and c == value + (1 if d == "up" else -1))
        ):
            return True
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        args = {a for a in map(_const, node.args) if isinstance(a, float)}
        if not args & forms:
            continue
        if _BOUND_METHODS.get(node.func.attr) == direction or node.func.attr in ("between", "clip"):
            return True
    return not seen_in_comparison and bool(numbers & forms)


PART_OF_A_LIST = "part of the list"
"""How `ignored_names` begins the note on a list of values the code applies only in part."""


def ignored_names(
    question: str,
    code: str,
    env: Environment | None,
    timeout: float = 30.0,
    own: Sequence[str] = (),
) -> list[str]:
    """What the question names (thresholds, quoted values, years it keeps rows to, data
    columns and values) that ``code`` never uses; each as a short description. With an
    environment, a quoted value counts only when the data holds it (a value or a column):
    a quoted name for a column to make ('Most Common MPG Category') or a format is no
    condition on the rows. Values of
    one column that the question lists and the code uses only some of are also noted
    (`PART_OF_A_LIST`).
    Columns of the frames named ``own`` (those the step bound) count as used: the step
    built them."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    numbers = _constants(tree)
    text = code.lower()
    found: list[tuple[str, str]] = []
    of_column: dict[str, list[str]] = {}  # column -> the values of it the question names
    built: set[str] = set()
    settled: set[str] = set()
    probed = False
    if env is not None:
        res = env.probe(_NAMED_PROBE % (question, sorted(set(own))), timeout=timeout)
        if res.ok and isinstance(res.value, dict):
            probed = True
            for k, n, *col in res.value.get("found", []):
                found.append((str(k), str(n)))
                if col and str(n) not in of_column.setdefault(str(col[0]), []):
                    of_column[str(col[0])].append(str(n))
            built = {str(c).lower() for c in res.value.get("own", [])}
            outside = res.value.get("outside", {})
            if isinstance(outside, dict):
                # a column holding only values the question names: what the question lists
                # is there as the question says (the code need not name each one)
                settled = {str(c) for c, rest in outside.items() if not rest}
    used = [text, *built]
    out = []
    for value, direction, pct in thresholds(question):
        if not _applies(tree, numbers, value, direction, pct):
            out.append(f"the threshold {_WORDS[direction]} {value:g}")
    in_data = {name.strip().lower() for _, name in found}
    for quoted in quoted_values(question):
        q = quoted.strip().lower()
        if probed and q not in in_data:
            continue  # no value or column of the data: a name to give, a format, a label
        if q not in text and q not in built:
            out.append(f"the value {quoted!r}")
    for year in kept_years(question):
        if float(year) not in numbers and str(year) not in text:
            out.append(f"the year {year}")
    for kind, name in found:
        n = name.lower()
        if (
            not any(n in u if u is text else n == u for u in used)
            and f"the value {name!r}" not in out
        ):
            out.append(f"the {kind} {name!r} of the data")
    strings = [
        n.value.lower()
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]
    for column, named in of_column.items():
        # a value inside another named one ('Salad' in 'Veggie Salad Bowl') is not an item
        values = [v for v in named if not any(v != w and v.lower() in w.lower() for w in named)]
        kept = [v for v in values if any(v.lower() in x for x in strings)]
        left = [v for v in values if v not in kept]
        if kept and left and column not in settled:
            out.append(
                f"{PART_OF_A_LIST} {', '.join(map(repr, values))} of {column!r}: the code uses "
                f"{', '.join(map(repr, kept))} only"
            )
    return out


_COUNTING = {"sum", "count", "size", "value_counts", "nunique", "len", "shape", "cumsum"}
_WRAPPERS = {"round", "int", "float", "abs", "print", "display", "str"}


def _assigned(body: Sequence[ast.stmt], name: str) -> ast.AST | None:
    """The value of the last ``name = …`` of ``body``, or None."""
    for stmt in reversed(body):
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id == name
        ):
            return stmt.value
    return None


def outer_aggregation(tree: ast.Module) -> str | None:
    """The method a cell's last statement applies last (``x.sum().mean()`` → ``mean``),
    through ``round(…)``, ``int(…)``, ``print(…)``, a subscript of the result, and a name
    the cell assigned before (``r = x.mean()`` then ``np.round(r, 2)``)."""
    if not tree.body or not isinstance(tree.body[-1], ast.Expr | ast.Assign):
        return None
    node: ast.AST = tree.body[-1].value  # type: ignore[attr-defined]
    followed = False
    while True:
        if isinstance(node, ast.Subscript):
            node = node.value
        elif (
            isinstance(node, ast.Call)
            and node.args
            and (getattr(node.func, "id", None) or getattr(node.func, "attr", None)) in _WRAPPERS
        ):
            node = node.args[0]
        elif isinstance(node, ast.Name) and not followed:
            followed = True  # a name the cell assigned: follow it once
            node = _assigned(tree.body[:-1], node.id) or node
        else:
            break
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


_MAXES, _MINS = {"max", "idxmax", "nlargest", "argmax"}, {"min", "idxmin", "nsmallest", "argmin"}


class _CodeFacts:
    """What a cell calls and how it sorts, from its AST."""

    def __init__(self, tree: ast.AST) -> None:
        self.calls: set[str] = set()
        self.sorts: list[bool] = []  # ascending of each sort_values/sort_index call
        self.first = False  # takes the first row/element (.head(), .iloc[0], .index[0], [0])
        self.reverses = False  # reverses an order ([::-1], .tail(), iloc[-1])
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
                if name:
                    self.calls.add(name)
                if name in ("sort_values", "sort_index"):
                    asc = next((k.value for k in node.keywords if k.arg == "ascending"), None)
                    self.sorts.append(not (isinstance(asc, ast.Constant) and asc.value is False))
                    if asc is not None and not isinstance(asc, ast.Constant):
                        self.sorts[-1] = None  # type: ignore[call-overload]
                if name == "head":
                    self.first = True
                if name == "tail":
                    self.reverses = True
            elif isinstance(node, ast.Subscript):
                c = _const(node.slice)
                if c == 0.0:
                    self.first = True
                elif (isinstance(c, float) and c < 0) or (
                    isinstance(node.slice, ast.Slice) and node.slice.step is not None
                ):
                    self.reverses = True


class AggregateConflict(NamedTuple):
    """A statistic, extreme or order against the question, with how the question reads
    it: method names to swap (``median`` -> ``mean``) and whether to flip every sort."""

    message: str
    attrs: dict[str, str]
    flip_sort: bool = False


def aggregate_contradictions(question: str, code: str) -> list[str]:
    """A statistic, extreme or sort order in ``code`` that goes against the question: it asks
    for the mean and the code only takes the median (or the reverse); for a total and the
    code only averages; for the most and the code only takes minima or the first row of an
    ascending sort; for a descending order and the code only sorts ascending (or the
    reverse)."""
    return [c.message for c in aggregate_conflicts(question, code)]


def aggregate_conflicts(question: str, code: str) -> list[AggregateConflict]:
    """`aggregate_contradictions` with, for each, the rewrite the question's reading asks
    for (none for a count asked and a mean taken: a count or a total may be meant)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    facts = _CodeFacts(tree)
    calls: set[str] = facts.calls
    out: list[AggregateConflict] = []
    asked = aggregate_words(question)
    mean, median = asked.mean, asked.median
    if mean and not median and "median" in calls and "mean" not in calls:
        out.append(
            AggregateConflict(
                "the question asks for the mean but the code takes the median", {"median": "mean"}
            )
        )
    if median and not mean and "mean" in calls and "median" not in calls:
        out.append(
            AggregateConflict(
                "the question asks for the median but the code takes the mean", {"mean": "median"}
            )
        )
    if asked.total and not mean and not median and "mean" in calls and not calls & _COUNTING:
        out.append(
            AggregateConflict(
                "the question asks for a total but the code only averages", {"mean": "sum"}
            )
        )
    elif (
        asked.count
        and not mean
        and not median
        and not asked.share
        and (last := outer_aggregation(tree)) in ("mean", "median")
    ):
        out.append(
            AggregateConflict(
                f"the question asks for a count or total but the result is a {last}", {}
            )
        )
    most, least = asked.most, asked.least
    sorts = [a for a in facts.sorts if a is not None]
    for wanted, other, word, own, opposite in (
        (most, least, "the most", _MAXES, _MINS),
        (least, most, "the least", _MINS, _MAXES),
    ):
        if not wanted or other or calls & own:
            continue
        if calls & opposite:
            taken = sorted(calls & opposite)
            out.append(
                AggregateConflict(
                    f"the question asks for {word} but the code takes {', '.join(taken)}",
                    {c: OPPOSITE[c] for c in taken if c in OPPOSITE},
                )
            )
        elif (
            sorts
            and facts.first
            and not facts.reverses
            and all(a == (word == "the most") for a in sorts)
        ):
            order = "ascending" if word == "the most" else "descending"
            out.append(
                AggregateConflict(
                    f"the question asks for {word} but the code takes the first row of an "
                    f"{order} sort",
                    {},
                    flip_sort=True,
                )
            )
    desc, asc = asked.descending, asked.ascending
    if sorts and not facts.reverses and desc != asc:
        if desc and all(sorts):
            out.append(
                AggregateConflict(
                    "the question asks for a descending order but the code sorts ascending",
                    {},
                    flip_sort=True,
                )
            )
        if asc and not any(sorts):
            out.append(
                AggregateConflict(
                    "the question asks for an ascending order but the code sorts descending",
                    {},
                    flip_sort=True,
                )
            )
    return out


def averaged_amount(question: str, code: str) -> str | None:
    """The question asks "how much" or for "all the" of something, with no word of a mean,
    median, share or per-thing value, and the cell's result is a mean: most likely a
    total was meant ("How much was the revenue for the period?"). A doubt, not a
    verdict: "how much does an item cost" may well be a mean."""
    asked = aggregate_words(question)
    if asked.amount is None or asked.mean or asked.median:
        return None
    if asked.share or asked.per_thing:
        return None
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    if outer_aggregation(tree) != "mean":
        return None
    return f'the question asks for an amount ("{asked.amount}") but the result is a mean'


_SCALAR = re.compile(r"^(?:np\.\w+\()?\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)\s*\)?$")


def fractional_count(question: str, shown: str) -> str | None:
    """The question asks for a count (how many, the number of) and no mean, share or rate,
    and the value shown is a single number with a fractional part: a count is whole."""
    asked = aggregate_words(question)
    if not asked.how_many or asked.mean or asked.median:
        return None
    if asked.share or asked.not_a_count:
        return None
    m = _SCALAR.match(shown.strip())
    if m is None:
        return None
    value = float(m.group(1))
    if abs(value - round(value)) <= 1e-9 * max(1.0, abs(value)):
        return None
    return f"the question asks for a count, and the result {m.group(1)} is not a whole number"
