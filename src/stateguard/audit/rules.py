"""Runtime validation rules: each a small function from a call's context to findings.

A rule declares the operator kinds it applies to and its phase ("before": the
call has not run, an alarm stops it; "after": the observation exists). Add one
with the `rule` decorator; `RULES` is the registry the runtime runs, in
registration order. A rule's findings are `stateguard.finding.Finding`s
(`verdict`): an ``alarm`` refuses the call, a ``note`` is only reported.

Rules read recorded observations (the ledger: earlier probes and scans) and the
registered tables; they never change either.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import pandas as pd

from stateguard.audit.diagnostics import JoinRecord
from stateguard.audit.joinchecks import Named, check_merge
from stateguard.audit.ledger import AuditLedger
from stateguard.audit.observations import (
    Observation,
    OperatorKind,
    UnionScanObservation,
)
from stateguard.audit.sqlfacts import JoinFact, SqlFacts
from stateguard.finding import Basis, Finding

HIGH_NULL_RATE = 0.2
"""Aggregating a column with at least this share of nulls needs saying so."""

Phase = Literal["before", "after"]


@dataclass
class Context:
    """What a rule may look at."""

    kind: OperatorKind
    args: dict[str, Any]
    tables: Mapping[str, pd.DataFrame]
    ledger: AuditLedger
    sql: SqlFacts | None = None
    observation: Observation | None = None
    _joins: list[tuple[JoinFact, JoinRecord]] | None = field(default=None, repr=False)

    def columns(self) -> dict[str, set[str]]:
        """Registered table -> its column names."""
        return {t: {str(c) for c in f.columns} for t, f in self.tables.items()}

    def join_records(self) -> list[tuple[JoinFact, JoinRecord]]:
        """The pandas join checks run on every SQL join between two registered tables."""
        if self._joins is None:
            self._joins = list(_sql_join_records(self))
        return self._joins


@dataclass(frozen=True)
class Rule:
    """A named check of some operator kinds in one phase."""

    name: str
    kinds: frozenset[str]
    phase: Phase
    check: Callable[[Context], list[Finding]]


RULES: list[Rule] = []


def rule(
    name: str, kinds: tuple[OperatorKind, ...], phase: Phase = "before"
) -> Callable[[Callable[[Context], list[Finding]]], Callable[[Context], list[Finding]]]:
    """Register a rule function under `name` (the decorated function is returned as is)."""

    def register(fn: Callable[[Context], list[Finding]]) -> Callable[[Context], list[Finding]]:
        RULES.append(Rule(name, frozenset(kinds), phase, fn))
        return fn

    return register


def verdict(
    name: str,
    message: str,
    *,
    refuse: bool,
    basis: tuple[Basis, ...] = ("code", "data"),
    calls: Iterable[int] = (),
) -> Finding:
    """Rule `name`'s finding: an alarm when it refuses the call, else a note.

    ``basis``: the query's code and the tables' data by default; ``calls``: the sequence
    numbers of the earlier calls whose observations the rule used (``facts["calls"]``)."""
    used = tuple(str(c) for c in calls)
    return Finding(
        check=name,
        severity="alarm" if refuse else "note",
        message=message,
        basis=basis,
        facts={"calls": used} if used else {},
    )


def run_operator_rules(
    ctx: Context, phase: Phase, rules: list[Rule] | None = None
) -> list[Finding]:
    """Findings of every applicable rule, in registration order."""
    found: list[Finding] = []
    for r in RULES if rules is None else rules:
        if r.phase == phase and ctx.kind in r.kinds:
            found.extend(r.check(ctx))
    return found


# -- joins in SQL -----------------------------------------------------------------------


def _sql_join_records(ctx: Context) -> list[tuple[JoinFact, JoinRecord]]:
    facts = ctx.sql
    if facts is None:
        return []
    out = []
    for join in facts.joins:
        sides = _join_sides(join)
        if sides is None:
            continue  # e.g. a condition over several tables of a chain of joins
        lt = facts.tables.get(sides[0], sides[0])
        rt = facts.tables.get(sides[1], sides[1])
        lcols, rcols = sides[2], sides[3]
        if lt not in ctx.tables or rt not in ctx.tables:
            continue
        lf, rf = ctx.tables[lt], ctx.tables[rt]
        if join.how == "cross":
            out.append(
                (
                    join,
                    check_merge(
                        Named(lf, (lt,)), Named(rf, (rt,)), range(len(lf) * len(rf)), how="cross"
                    ),
                )
            )
            continue
        if (
            not lcols
            or any(c not in lf.columns for c in lcols)
            or any(c not in rf.columns for c in rcols)
        ):
            continue
        try:
            result = pd.merge(lf[lcols], rf[rcols], left_on=lcols, right_on=rcols, how=join.how)  # type: ignore[arg-type]
        except (ValueError, TypeError):
            continue  # pandas refuses the pairing (e.g. int vs str): DuckDB will say why
        out.append(
            (
                join,
                check_merge(
                    Named(lf, (lt,)),
                    Named(rf, (rt,)),
                    result,
                    how=join.how,
                    left_on=lcols,
                    right_on=rcols,
                ),
            )
        )
    return out


def _join_sides(join: JoinFact) -> tuple[str, str, list[str], list[str]] | None:
    """The two tables (aliases) a join pairs and their key columns, oriented left/right.

    For a chain of joins the tables are the ones its key columns name.
    """
    if len(join.left) == 1 and len(join.right) == 1:
        lt, rt = join.left[0], join.right[0]
    else:
        named = {r.table for p in join.pairs for r in p}
        lts = [t for t in named if t in join.left]
        rts = [t for t in named if t in join.right]
        if len(lts) != 1 or len(rts) != 1:
            return None
        lt, rt = lts[0], rts[0]
    lcols, rcols = [], []
    for a, b in join.pairs:
        if a.table == rt or b.table == lt:
            a, b = b, a
        if a.table not in (None, lt) or b.table not in (None, rt):
            return None
        lcols.append(a.name)
        rcols.append(b.name)
    return lt, rt, lcols, rcols


def _from_join(ctx: Context, name: str, kinds: set[str]) -> list[Finding]:
    found = []
    for _, record in ctx.join_records():
        for d in record.diagnostics:
            if d.kind in kinds:
                found.append(verdict(name, d.message, refuse=d.severity == "error"))
    return found


@rule("join_without_key", ("query",))
def join_without_key(ctx: Context) -> list[Finding]:
    """A join with no key condition pairs every row with every row."""
    return _from_join(ctx, "join_without_key", {"cross_product"})


@rule("join_fan_out", ("query",))
def join_fan_out(ctx: Context) -> list[Finding]:
    """A join key unique in neither input multiplies rows."""
    return _from_join(ctx, "join_fan_out", {"many_to_many"})


@rule("join_drops_rows", ("query",))
def join_drops_rows(ctx: Context) -> list[Finding]:
    """An inner join that loses rows (and which key values), or a left join's unmatched rows."""
    return _from_join(ctx, "join_drops_rows", {"dropped_rows", "unmatched_keys"})


@rule("join_key_mismatch", ("query",))
def join_key_mismatch(ctx: Context) -> list[Finding]:
    """Join keys of different types or formats that match few rows."""
    return _from_join(ctx, "join_key_mismatch", {"key_mismatch", "key_format"})


# -- filters and aggregates ------------------------------------------------------------


@rule("filter_unseen_value", ("query",))
def filter_unseen_value(ctx: Context) -> list[Finding]:
    """Filtering a probed column on a value the probe (and the column) never showed."""
    if ctx.sql is None:
        return []
    found = []
    columns = ctx.columns()
    for ref, _, values in ctx.sql.filters:
        table = ctx.sql.table_of(ref, columns)
        if table is None or table not in ctx.tables:
            continue
        probed = ctx.ledger.profile(table, ref.name)
        if probed is None:
            continue
        seq, profile = probed
        if profile.values_complete:
            seen = {v for v, _ in profile.top}
        else:
            seen = set(ctx.tables[table][ref.name].dropna().unique().tolist())
        absent = [v for v in values if v not in seen]
        if absent:
            shown = ", ".join(repr(v) for v, _ in profile.top[:8])
            found.append(
                verdict(
                    "filter_unseen_value",
                    f"filter on {table}.{ref.name} = {', '.join(map(repr, absent))}: no "
                    f"such value in the column (probe #{seq} saw {shown})",
                    refuse=True,
                    calls=(seq,),
                )
            )
    return found


@rule("aggregate_high_nulls", ("query",))
def aggregate_high_nulls(ctx: Context) -> list[Finding]:
    """An aggregate over a column with many nulls that the query does not handle."""
    if ctx.sql is None:
        return []
    found = []
    columns = ctx.columns()
    for fn, ref in ctx.sql.aggregates:
        if ref.name in ctx.sql.null_guarded:
            continue
        table = ctx.sql.table_of(ref, columns)
        if table is None or table not in ctx.tables:
            continue
        probed = ctx.ledger.profile(table, ref.name)
        if probed is not None:
            seq, profile = probed
            rate, used = profile.null_rate, (seq,)
        else:
            col = ctx.tables[table][ref.name]
            rate, used = (float(col.isna().mean()) if len(col) else 0.0), ()
        if rate >= HIGH_NULL_RATE:
            found.append(
                verdict(
                    "aggregate_high_nulls",
                    f"{fn}({ref.name}) skips the {rate:.0%} nulls of {table}.{ref.name}; "
                    f"say how they are treated (COALESCE, or WHERE {ref.name} IS NOT NULL)",
                    refuse=False,
                    calls=used,
                )
            )
    return found


# -- unions ------------------------------------------------------------------------------


@rule("union_fills_nulls", ("union_scan",), phase="after")
def union_fills_nulls(ctx: Context) -> list[Finding]:
    """A union by column name where some sources lack some columns."""
    obs = ctx.observation
    if not isinstance(obs, UnionScanObservation) or not obs.missing_columns:
        return []
    parts = [f"`{c}` is missing from {', '.join(srcs)}" for c, srcs in obs.missing_columns.items()]
    return [
        verdict(
            "union_fills_nulls",
            f"union {obs.table} fills missing columns with nulls: {'; '.join(parts)}",
            refuse=False,
            basis=("data",),
        )
    ]


def rule_names() -> tuple[str, ...]:
    """Names of the registered rules (for documentation and tests)."""
    return tuple(r.name for r in RULES)
