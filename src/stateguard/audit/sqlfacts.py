"""What a SQL query does, read from DuckDB's own parse tree (`json_serialize_sql`).

No regular expressions over SQL: DuckDB parses the statement and this module
walks the JSON tree for the facts the validation rules need — tables and their
aliases, joins with their type and equality conditions, comparisons of a column
with constants, aggregates and the columns they read, and columns the query
guards against nulls (``COALESCE``, ``IS NOT NULL``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

AGGREGATES = frozenset(
    {
        "sum",
        "avg",
        "mean",
        "median",
        "min",
        "max",
        "stddev",
        "var_samp",
        "variance",
        "stddev_samp",
        "quantile",
        "quantile_cont",
    }
)
"""Aggregates whose result silently skips nulls (count is not one: it counts them away)."""


@dataclass(frozen=True)
class ColumnRef:
    """A column as written: optional table qualifier and name."""

    table: str | None
    name: str


@dataclass(frozen=True)
class JoinFact:
    """One join in the FROM clause."""

    left: tuple[str, ...]
    """Tables on the left side (several for a chain of joins)."""
    right: tuple[str, ...]
    how: str
    """"inner", "left", "right", "outer" (or "cross" for a join with no condition)."""
    pairs: tuple[tuple[ColumnRef, ColumnRef], ...] = ()
    """Equality conditions ``l = r`` of the join (from ON, USING or the WHERE clause)."""


@dataclass
class SqlFacts:
    """The facts of one statement."""

    tables: dict[str, str] = field(default_factory=dict)
    """Alias (or name) -> table name."""
    joins: list[JoinFact] = field(default_factory=list)
    filters: list[tuple[ColumnRef, str, tuple[Any, ...]]] = field(default_factory=list)
    """(column, "=" or "in", constants) from the WHERE clause."""
    aggregates: list[tuple[str, ColumnRef]] = field(default_factory=list)
    """(function, column) for null-skipping aggregates over a plain column."""
    null_guarded: set[str] = field(default_factory=set)
    """Column names the query wraps in COALESCE or tests with IS [NOT] NULL."""

    def table_of(self, ref: ColumnRef, columns: dict[str, set[str]]) -> str | None:
        """The table a column belongs to: its qualifier, or the only table having it."""
        if ref.table is not None:
            return self.tables.get(ref.table, ref.table)
        owners = [t for t in dict.fromkeys(self.tables.values()) if ref.name in columns.get(t, ())]
        return owners[0] if len(owners) == 1 else None


def parse_sql(con: Any, sql: str) -> SqlFacts | None:
    """Facts of a single SELECT statement, or None when DuckDB cannot serialize it."""
    raw = con.execute("SELECT json_serialize_sql(?)", [sql]).fetchone()[0]
    tree = json.loads(raw)
    if tree.get("error") or len(tree.get("statements", [])) != 1:
        return None
    facts = SqlFacts()
    node = tree["statements"][0]["node"]
    for n in _walk(node):
        if n.get("type") == "BASE_TABLE":
            name = n.get("table_name", "")
            facts.tables[n.get("alias") or name] = name
    for n in _walk(node):
        if n.get("type") == "JOIN":
            facts.joins.append(_join(n))
    where = node.get("where_clause")
    if where:
        for cmp in _conjuncts(where):
            _filter(facts, cmp)
    facts.joins = [_with_where_pairs(j, where) for j in facts.joins]
    for n in _walk(node):
        cls, typ = n.get("class"), n.get("type")
        if cls == "FUNCTION" and n.get("function_name", "").lower() in AGGREGATES:
            args = n.get("children") or [a.get("expression", a) for a in n.get("arguments", [])]
            for a in args:
                if isinstance(a, dict) and a.get("class") == "COLUMN_REF":
                    facts.aggregates.append((n["function_name"].lower(), _ref(a)))
        if typ in ("OPERATOR_COALESCE", "OPERATOR_IS_NOT_NULL", "OPERATOR_IS_NULL"):
            for c in _walk(n):
                if c.get("class") == "COLUMN_REF":
                    facts.null_guarded.add(_ref(c).name)
        if cls == "FUNCTION" and n.get("function_name", "").lower() in ("coalesce", "ifnull"):
            for c in _walk(n):
                if c.get("class") == "COLUMN_REF":
                    facts.null_guarded.add(_ref(c).name)
    return facts


def _walk(node: Any) -> Iterator[dict[str, Any]]:
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, dict):
            yield n
            stack.extend(reversed(list(n.values())))
        elif isinstance(n, list):
            stack.extend(reversed(n))


def _ref(n: dict[str, Any]) -> ColumnRef:
    names = n.get("column_names", [])
    return ColumnRef(names[-2] if len(names) > 1 else None, names[-1] if names else "")


def _tables_under(n: dict[str, Any]) -> tuple[str, ...]:
    return tuple(
        x.get("alias") or x.get("table_name", "") for x in _walk(n) if x.get("type") == "BASE_TABLE"
    )


def _join(n: dict[str, Any]) -> JoinFact:
    left, right = _tables_under(n["left"]), _tables_under(n["right"])
    pairs: list[tuple[ColumnRef, ColumnRef]] = []
    for col in n.get("using_columns", []):
        pairs.append(
            (
                ColumnRef(left[-1] if left else None, col),
                ColumnRef(right[0] if right else None, col),
            )
        )
    cond = n.get("condition")
    if cond:
        for c in _conjuncts(cond):
            pair = _equality(c)
            if pair:
                pairs.append(pair)
    jt = n.get("join_type", "INNER").lower()
    how = {
        "inner": "inner",
        "left": "left",
        "right": "right",
        "outer": "outer",
        "full": "outer",
    }.get(jt, jt)
    if n.get("ref_type") == "CROSS" and not pairs:
        how = "cross"
    return JoinFact(left=left, right=right, how=how, pairs=tuple(pairs))


def _with_where_pairs(join: JoinFact, where: dict[str, Any] | None) -> JoinFact:
    """``FROM a, b WHERE a.k = b.k`` is a keyed inner join, not a cross product."""
    if join.how != "cross" or not where:
        return join
    sides = (set(join.left), set(join.right))
    pairs = []
    for c in _conjuncts(where):
        pair = _equality(c)
        if pair and pair[0].table in sides[0] | sides[1] and pair[1].table in sides[0] | sides[1]:
            if pair[0].table in sides[1]:
                pair = (pair[1], pair[0])
            if pair[0].table in sides[0] and pair[1].table in sides[1]:
                pairs.append(pair)
    if not pairs:
        return join
    return JoinFact(left=join.left, right=join.right, how="inner", pairs=tuple(pairs))


def _conjuncts(n: dict[str, Any]) -> list[dict[str, Any]]:
    if n.get("type") == "CONJUNCTION_AND":
        return [c for child in n.get("children", []) for c in _conjuncts(child)]
    return [n]


def _equality(n: dict[str, Any]) -> tuple[ColumnRef, ColumnRef] | None:
    if n.get("type") != "COMPARE_EQUAL":
        return None
    lhs, rhs = n.get("left", {}), n.get("right", {})
    if lhs.get("class") == "COLUMN_REF" and rhs.get("class") == "COLUMN_REF":
        return _ref(lhs), _ref(rhs)
    return None


def _constant(n: dict[str, Any]) -> tuple[bool, Any]:
    if n.get("class") != "CONSTANT":
        return False, None
    lit = n.get("literal") or {}
    text = lit.get("text")
    kind = lit.get("kind", "")
    if kind in ("INTEGER", "BIGINT", "HUGEINT", "SMALLINT", "TINYINT"):
        return True, int(text)
    if kind in ("DECIMAL", "DOUBLE", "FLOAT"):
        return True, float(text)
    if kind == "NULL":
        return False, None
    return True, text


def _filter(facts: SqlFacts, n: dict[str, Any]) -> None:
    typ = n.get("type")
    if typ == "COMPARE_EQUAL":
        lhs, rhs = n.get("left", {}), n.get("right", {})
        if rhs.get("class") == "COLUMN_REF":
            lhs, rhs = rhs, lhs
        ok, value = _constant(rhs)
        if lhs.get("class") == "COLUMN_REF" and ok:
            facts.filters.append((_ref(lhs), "=", (value,)))
    elif typ == "COMPARE_IN":
        children = n.get("children", [])
        if children and children[0].get("class") == "COLUMN_REF":
            values = [_constant(c) for c in children[1:]]
            if values and all(ok for ok, _ in values):
                facts.filters.append((_ref(children[0]), "in", tuple(v for _, v in values)))
