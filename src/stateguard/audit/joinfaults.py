"""Silent join faults planted into analysis code, and whether the join guard flags them.

`plant(cell, kind)` rewrites the merges of one cell (stdlib `ast`):

- ``key_dropped``: the key arguments go and ``how='cross'`` pairs every row with every row;
- ``how_inner``: a left/right/outer merge loses its ``how``, so pandas' default inner
  join applies;
- ``how_inner_written``: the same merge with ``how='inner'`` written (the choice stated,
  so only a question that asks to keep unmatched rows makes its loss an alarm);
- ``key_format``: the right side's key is rewritten as padded text (``'7'`` → ``' 7'``);
  for a numeric key pandas then refuses the merge, which is a loud failure, not a silent one;
- ``duplicate_key``: the right side gets one of its rows a second time.

`evaluate(sessions, questions=...)` runs each session's cells in a fresh namespace
under a `JoinGuard` (clean), then once per applicable fault with that fault planted,
and counts (weighing each cell's findings by its question, as the manager does):
clean merges with an alarm (false alarms) and faults that got an alarm or
made pandas raise (recall). Alarms are the findings `stateguard.audit.joinpolicy`
calls evidence against a result; notes are counted apart. A planted fault that
changes nothing the cell binds (or shows as its last value) is not a fault and is
counted apart. No model is involved.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import io
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from stateguard.audit.diagnostics import JoinRecord
from stateguard.audit.joinguard import JoinGuard
from stateguard.audit.joinintent import rows_asked
from stateguard.audit.joinpolicy import alarms

FaultKind = Literal["key_dropped", "how_inner", "how_inner_written", "key_format", "duplicate_key"]
FAULT_KINDS: tuple[FaultKind, ...] = (
    "key_dropped",
    "how_inner",
    "how_inner_written",
    "key_format",
    "duplicate_key",
)
_KEY_ARGS = ("on", "left_on", "right_on", "left_index", "right_index")


def _merge_calls(tree: ast.AST) -> Iterator[ast.Call]:
    """``pd.merge(a, b, ...)`` and ``a.merge(b, ...)`` calls, in source order."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "merge"
        ):
            yield node


def _kw(call: ast.Call, name: str) -> ast.keyword | None:
    return next((k for k in call.keywords if k.arg == name), None)


def _operands(call: ast.Call) -> tuple[ast.expr, ast.expr] | None:
    """(left, right) expressions of a merge call."""
    func = call.func
    assert isinstance(func, ast.Attribute)
    is_module = isinstance(func.value, ast.Name) and func.value.id in ("pd", "pandas")
    args = list(call.args)
    if is_module:
        left = args[0] if args else (_kw(call, "left") or ast.keyword()).value
        right = args[1] if len(args) > 1 else (_kw(call, "right") or ast.keyword()).value
    else:
        left = func.value
        right = args[0] if args else (_kw(call, "right") or ast.keyword()).value
    if left is None or right is None:
        return None
    return left, right


def _set_right(call: ast.Call, new: ast.expr) -> None:
    func = call.func
    assert isinstance(func, ast.Attribute)
    is_module = isinstance(func.value, ast.Name) and func.value.id in ("pd", "pandas")
    pos = 1 if is_module else 0
    if len(call.args) > pos:
        call.args[pos] = new
    else:
        kw = _kw(call, "right")
        assert kw is not None
        kw.value = new


def _key_name(call: ast.Call) -> ast.expr | None:
    """The right key column expression (``on`` or ``right_on``), if a single one."""
    for name in ("right_on", "on"):
        kw = _kw(call, name)
        if kw is None:
            continue
        v = kw.value
        if isinstance(v, ast.List | ast.Tuple) and len(v.elts) == 1:
            v = v.elts[0]
        if isinstance(v, ast.Constant) and isinstance(v.value, str):
            return v
    return None


def mutate_call(call: ast.Call, kind: FaultKind) -> ast.Call | None:
    """A faulted copy of one merge call (`call` is not changed); None when not applicable.

    ``how_inner`` removes a ``how='left'|'right'|'outer'`` argument, so pandas' default
    inner join applies: that is how an agent gets an inner join it did not mean.
    ``how_inner_written`` writes ``how='inner'`` in its place (a stated choice; see
    `stateguard.audit.joinpolicy`).
    """
    ops = _operands(call)
    if ops is None:
        return None
    new = copy.deepcopy(call)
    right = ops[1]
    if kind == "key_dropped":
        new.keywords = [k for k in new.keywords if k.arg not in (*_KEY_ARGS, "how")]
        new.keywords.append(ast.keyword("how", ast.Constant("cross")))
        if len(new.args) > (2 if _is_module(new) else 1):
            return None  # how or a key given by position: not rewritten
        return new
    if kind in ("how_inner", "how_inner_written"):
        how = _kw(new, "how")
        if how is None or not (
            isinstance(how.value, ast.Constant) and how.value.value in ("left", "right", "outer")
        ):
            return None
        new.keywords = [k for k in new.keywords if k.arg != "how"]
        if kind == "how_inner_written":
            new.keywords.append(ast.keyword("how", ast.Constant("inner")))
        return new
    if kind == "key_format":
        key = _key_name(new)
        if key is None:
            return None
        padded = ast.parse(
            f"(lambda _r: _r.assign(**{{{ast.unparse(key)}: ' ' + "
            f"_r[{ast.unparse(key)}].astype(str)}}))({ast.unparse(right)})",
            mode="eval",
        ).body
        _set_right(new, padded)
        return new
    dup = ast.parse(
        f"(lambda _r: _r.iloc[list(range(len(_r))) + [0]])({ast.unparse(right)})",
        mode="eval",
    ).body
    _set_right(new, dup)
    return new


def _is_module(call: ast.Call) -> bool:
    func = call.func
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id in ("pd", "pandas")
    )


def fault_sites(cell: str) -> list[tuple[FaultKind, ast.Call, ast.Call]]:
    """Every (kind, merge call, faulted call) of a cell, in source order; [] if it does not
    parse. The calls carry positions, so a caller can splice ``ast.unparse(faulted)``."""
    try:
        tree = ast.parse(cell)
    except SyntaxError:
        return []
    calls = sorted(_merge_calls(tree), key=lambda c: (c.lineno, c.col_offset))
    out = []
    for call in calls:
        for kind in FAULT_KINDS:
            new = mutate_call(call, kind)
            if new is not None:
                out.append((kind, call, new))
    return out


def plant(cell: str, kind: FaultKind) -> str | None:
    """The cell with `kind` planted in every merge it makes; None when not applicable."""
    try:
        tree = ast.parse(cell)
    except SyntaxError:
        return None
    changed = False
    for call in reversed(list(_merge_calls(tree))):  # inner calls first: outer copies see them
        new = mutate_call(call, kind)
        if new is None:
            continue
        call.args, call.keywords = new.args, new.keywords
        changed = True
    return ast.unparse(tree) if changed else None


class CallOutcome(BaseModel):
    """One merge call of a run: its findings (or that pandas raised)."""

    model_config = ConfigDict(frozen=True)

    session: str
    cell: int
    fault: FaultKind | None = None
    kinds: tuple[str, ...] = ()
    """Diagnostic kinds the guard reported for the call."""
    severities: tuple[str, ...] = ()
    alarms: tuple[str, ...] = ()
    """The kinds among `kinds` that are alarms (`joinpolicy`); the rest are notes."""
    raised: str | None = None
    """The exception pandas raised for the faulted cell (a loud failure)."""
    new_kinds: tuple[str, ...] = ()
    """For a fault: kinds the clean run of the same cell did not report."""
    new_alarms: tuple[str, ...] = ()
    """For a fault: alarm kinds the clean run of the same cell did not raise."""

    @property
    def flagged(self) -> bool:
        """Clean: any alarm. Fault: an alarm the clean cell did not have, or an exception.

        An alarm the clean cell already carried does not detect the fault.
        """
        if self.fault is None:
            return bool(self.alarms)
        return bool(self.new_alarms) or self.raised is not None

    @property
    def noted(self) -> bool:
        """Some finding (alarm or note) was reported."""
        return bool(self.kinds)


class FaultEval(BaseModel):
    """Fault recall and false-alarm rate over a set of sessions."""

    model_config = ConfigDict(frozen=True)

    sessions: int
    clean_merges: int
    false_alarms: int
    false_alarm_rate: float
    noted_clean: int = 0
    """Clean merges with some finding, alarm or note (the note-only ones are not alarms)."""
    faults: int
    flagged: int
    fault_recall: float
    recall_by_kind: dict[str, float]
    errors_only_fault_recall: float
    """Recall counting only error-severity findings (and exceptions)."""
    errors_only_false_alarm_rate: float
    without_effect: int = 0
    """Planted faults that changed nothing the cell produced (not counted as faults)."""
    outcomes: tuple[CallOutcome, ...] = ()


def _with_last_value(cell: str) -> str:
    """The cell with a final expression bound to ``__last__`` (as a notebook shows it)."""
    try:
        tree = ast.parse(cell)
    except SyntaxError:
        return cell
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body[-1]
        tree.body[-1] = ast.copy_location(
            ast.Assign(targets=[ast.Name("__last__", ast.Store())], value=last.value), last
        )
        ast.fix_missing_locations(tree)
        return ast.unparse(tree)
    return cell


def _same(a: Any, b: Any) -> bool:
    try:
        if hasattr(a, "equals"):
            return bool(type(a) is type(b) and a.equals(b))
        return bool(a == b)
    except Exception:
        return False


def _run_cells(
    cells: Sequence[str], workdir: Path | None
) -> tuple[JoinGuard, list[int], dict[str, Any]]:
    """Run cells in a fresh namespace under a guard; the cell index of every record."""
    ns: dict[str, Any] = {"__name__": "__main__"}
    guard = JoinGuard(None, user_ns=ns)
    cell_of: list[int] = []
    old = os.getcwd()
    guard.install()
    try:
        if workdir is not None:
            os.chdir(workdir)
        for i, cell in enumerate(cells):
            before = len(guard.records)
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    ns.pop("__last__", None)
                    exec(compile(_with_last_value(cell), f"<cell {i}>", "exec"), ns)
            except Exception as exc:
                guard.records.append(_raised_marker(exc))
            cell_of.extend([i] * (len(guard.records) - before))
    finally:
        guard.uninstall()
        os.chdir(old)
    return guard, cell_of, ns


def _raised_marker(exc: Exception) -> JoinRecord:
    return JoinRecord(
        operation="merge",
        how="?",
        inputs=(),
        output_rows=0,
        check_error=f"raised {type(exc).__name__}: {exc}",
    )


def _bound(cell: str) -> list[str]:
    """Names a cell binds at top level, plus ``__last__`` for a final expression."""
    tree = ast.parse(_with_last_value(cell))
    names = []
    for stmt in tree.body:
        targets = (
            stmt.targets
            if isinstance(stmt, ast.Assign)
            else ([stmt.target] if isinstance(stmt, ast.AugAssign | ast.AnnAssign) else [])
        )
        for t in targets:
            names.extend(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


def _merge_records(guard: JoinGuard, cell_of: list[int], cell: int) -> list[Any]:
    return [
        r
        for r, c in zip(guard.records, cell_of, strict=True)
        if c == cell and r.operation in ("merge", "join")
    ]


def evaluate(
    sessions: dict[str, Sequence[str]],
    workdirs: dict[str, Path] | None = None,
    questions: dict[str, Sequence[str | None]] | None = None,
) -> FaultEval:
    """Clean and faulted runs of every merge cell of every session (see module docstring).

    ``questions``: per session, the question of each cell (None for setup code); without
    them findings are weighed by the code alone."""
    outcomes: list[CallOutcome] = []
    no_effect: list[tuple[str, int, str]] = []
    for name, cells in sessions.items():
        wd = (workdirs or {}).get(name)
        asked = [rows_asked(q) for q in (questions or {}).get(name, [None] * len(cells))]
        guard, cell_of, clean_ns = _run_cells(cells, wd)
        merge_cells = sorted(
            {
                c
                for r, c in zip(guard.records, cell_of, strict=True)
                if r.operation in ("merge", "join") and r.check_error is None
            }
        )
        for i in merge_cells:
            clean_kinds: set[str] = set()
            clean_alarms: set[str] = set()
            for rec in _merge_records(guard, cell_of, i):
                clean_kinds.update(d.kind for d in rec.diagnostics)
                clean_alarms.update(d.kind for d in alarms(rec, asked[i]))
                outcomes.append(
                    CallOutcome(
                        session=name,
                        cell=i,
                        kinds=tuple(d.kind for d in rec.diagnostics),
                        severities=tuple(d.severity for d in rec.diagnostics),
                        alarms=tuple(d.kind for d in alarms(rec, asked[i])),
                    )
                )
            for kind in FAULT_KINDS:
                faulted = plant(cells[i], kind)
                if faulted is None:
                    continue
                fg, fcell_of, fault_ns = _run_cells([*cells[:i], faulted], wd)
                recs = _merge_records(fg, fcell_of, i)
                raised = next((r.check_error for r in recs if r.check_error), None)
                if raised is None and all(
                    _same(clean_ns.get(n), fault_ns.get(n)) for n in _bound(cells[i])
                ):
                    no_effect.append((name, i, kind))
                    continue
                found = [d for r in recs if r.check_error is None for d in r.diagnostics]
                alarmed = [
                    d.kind for r in recs if r.check_error is None for d in alarms(r, asked[i])
                ]
                outcomes.append(
                    CallOutcome(
                        session=name,
                        cell=i,
                        fault=kind,
                        kinds=tuple(d.kind for d in found),
                        severities=tuple(d.severity for d in found),
                        alarms=tuple(alarmed),
                        new_kinds=tuple(
                            dict.fromkeys(d.kind for d in found if d.kind not in clean_kinds)
                        ),
                        new_alarms=tuple(
                            dict.fromkeys(k for k in alarmed if k not in clean_alarms)
                        ),
                        raised=raised,
                    )
                )
    clean = [o for o in outcomes if o.fault is None]
    faults = [o for o in outcomes if o.fault is not None]

    def rate(items: list[CallOutcome], pred: Any) -> float:
        return round(sum(map(pred, items)) / len(items), 4) if items else 0.0

    return FaultEval(
        sessions=len(sessions),
        clean_merges=len(clean),
        false_alarms=sum(o.flagged for o in clean),
        false_alarm_rate=rate(clean, lambda o: o.flagged),
        noted_clean=sum(o.noted for o in clean),
        faults=len(faults),
        flagged=sum(o.flagged for o in faults),
        fault_recall=rate(faults, lambda o: o.flagged),
        recall_by_kind={
            k: rate([o for o in faults if o.fault == k], lambda o: o.flagged)
            for k in FAULT_KINDS
            if any(o.fault == k for o in faults)
        },
        errors_only_fault_recall=rate(
            faults,
            lambda o: (
                o.raised is not None
                or any(
                    s == "error" and k in o.new_kinds
                    for k, s in zip(o.kinds, o.severities, strict=True)
                )
            ),
        ),
        errors_only_false_alarm_rate=rate(clean, lambda o: "error" in o.severities),
        without_effect=len(no_effect),
        outcomes=tuple(outcomes),
    )
