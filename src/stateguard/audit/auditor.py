"""The host side of auditing a kernel: what to install, and what a cell's audit says.

A composition root (`GuardedSession`) uses it in three steps::

    auditor = Auditor(AuditSettings(join_guard="flag", lake="data"), ledger_path=run / "a.jsonl")
    TrackedSession(kernel, setup_code=auditor.setup_code)   # runs after start/restart/reset
    audit = auditor.observe(result.execution)               # after every cell
    audit.describe()   # text to append to the agent's observation ("" when nothing to say)
    audit.findings     # typed evidence for the manager (`alarm`: concrete enough to refuse)

`observe` only reads `ExecutionResult.private`, so it works on recorded results too.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from stateguard.audit.diagnostics import JoinCellReport, join_report
from stateguard.audit.joinguard import install_code as join_guard_code
from stateguard.audit.joinintent import RowsAsked, rows_asked
from stateguard.audit.joinpolicy import is_alarm
from stateguard.audit.kernelops import install_code as operators_code
from stateguard.audit.kernelops import operator_calls
from stateguard.audit.ledger import AuditLedger, Coverage
from stateguard.audit.observations import OperatorCall
from stateguard.audit.sourcewatch import files_read
from stateguard.audit.sourcewatch import install_code as watch_code
from stateguard.kernel import ExecutionResult


class AuditSettings(BaseModel):
    """What to install in the kernel."""

    model_config = ConfigDict(frozen=True)

    join_guard: Literal["off", "flag", "reject"] = "flag"
    """"flag" reports lossy or keyless pandas joins; "reject" also fails the cell on errors."""
    lake: str | None = None
    """The data lake as the kernel sees it (e.g. ``data``); None: no operators, no watch."""
    operators: Literal["off", "reject", "flag"] = "reject"
    """Whether a rejecting validation rule refuses an operator call or only flags it."""
    watch_reads: bool = True
    """Note which lake files the agent's own code opens (needs `lake`)."""


class AuditFinding(BaseModel):
    """One finding of a cell, from the join guard or from an operator's rules."""

    model_config = ConfigDict(frozen=True)

    origin: Literal["join_guard", "operator"]
    kind: str
    """The join diagnostic kind (``dropped_rows``…) or the rule name (``filter_unseen_value``…)."""
    severity: Literal["error", "warning"]
    message: str
    line: int | None = None
    """Cell line of the pandas call (join guard only)."""
    outputs: tuple[str, ...] = ()
    """Variables holding the result (join guard: names bound to it after the cell;
    operator: the registered output table)."""
    alarm: bool = False
    """Evidence against the result (`stateguard.audit.joinpolicy` for the join guard; a
    rejecting rule for an operator); otherwise a note the agent reads."""
    question_alarm: bool = False
    """An alarm only because the question asks to keep unmatched rows: from the code alone
    (a ``how=`` written) it would be a note. It rests on reading the question's English."""


class CellAudit(BaseModel):
    """Everything the audit recorded for one cell."""

    model_config = ConfigDict(frozen=True)

    joins: JoinCellReport | None = None
    operators: tuple[OperatorCall, ...] = ()
    files_read: tuple[str, ...] = ()
    """Lake files (relative) the cell's own code opened for reading."""
    rows_asked: RowsAsked | None = None
    """What the turn's question asks a join to keep (`joinintent`); None: no question known."""

    @property
    def findings(self) -> tuple[AuditFinding, ...]:
        """Join-guard diagnostics and operator findings, in call order per source."""
        out: list[AuditFinding] = []
        if self.joins is not None:
            for rec in self.joins.records:
                for d in rec.diagnostics:
                    alarm = is_alarm(rec, d, self.rows_asked)
                    by_code = is_alarm(rec, d, None)
                    message = d.message
                    if alarm and d.kind == "dropped_rows":
                        message += (
                            "; the question asks to keep unmatched rows"
                            if self.rows_asked == "all"
                            else "; the call gives no how=, so this is pandas' default inner join"
                        )
                    out.append(
                        AuditFinding(
                            origin="join_guard",
                            kind=d.kind,
                            severity=d.severity,
                            message=message,
                            line=rec.line,
                            outputs=rec.output_names,
                            alarm=alarm,
                            question_alarm=alarm and not by_code,
                        )
                    )
        for call in self.operators:
            out.extend(
                AuditFinding(
                    origin="operator",
                    kind=f.rule,
                    severity="error" if f.severity == "reject" else "warning",
                    message=f.message,
                    outputs=(call.args["output"],) if call.args.get("output") else (),
                    alarm=f.severity == "reject",
                )
                for f in call.findings
            )
        return tuple(out)

    @property
    def alarms(self) -> tuple[AuditFinding, ...]:
        """The findings that are evidence against the cell's result."""
        return tuple(f for f in self.findings if f.alarm)

    @property
    def has_errors(self) -> bool:
        """True when some finding is an error (a keyless join, a rejected operator…)."""
        return any(f.severity == "error" for f in self.findings)

    def describe(self) -> str:
        """The findings as lines of observation text ("" when there are none)."""
        lines = []
        for f in self.findings:
            where = f" (line {f.line})" if f.line is not None else ""
            lines.append(f"audit {'alarm' if f.alarm else 'note'}: {f.message}{where}")
        return "\n".join(lines)


def audit_cell(result: ExecutionResult, question: str | None = None) -> CellAudit:
    """The join-guard report and operator calls carried by one execution result.

    ``question``: the turn's question, which decides whether rows an inner join drops
    are an alarm (`stateguard.audit.joinpolicy`); None when it is not known."""
    return CellAudit(
        joins=join_report(result.private),
        operators=operator_calls(result.private),
        files_read=files_read(result.private),
        rows_asked=rows_asked(question),
    )


class Auditor:
    """Install code for a kernel, and a ledger of the operator calls it reports."""

    def __init__(
        self, settings: AuditSettings | None = None, *, ledger_path: Path | None = None
    ) -> None:
        self.settings = settings or AuditSettings()
        self.ledger = AuditLedger(ledger_path)
        self.files_read: dict[str, None] = {}
        """Lake files the agent's code read directly, in first-read order."""

    @property
    def setup_code(self) -> str:
        """Python source to run silently in the kernel after every start, restart and reset."""
        parts = []
        if self.settings.join_guard != "off":
            parts.append(join_guard_code(self.settings.join_guard))
        lake = self.settings.lake
        if lake is not None and self.settings.operators != "off":
            parts.append(operators_code(lake, self.settings.operators))
        if lake is not None and self.settings.watch_reads:
            parts.append(watch_code(lake))
        return "\n".join(parts)

    def observe(self, result: ExecutionResult, question: str | None = None) -> CellAudit:
        """Read a cell's audit (for the turn's ``question``, if known) and keep its
        operator calls in the ledger."""
        audit = audit_cell(result, question)
        self.ledger.extend(audit.operators)
        self.files_read.update(dict.fromkeys(audit.files_read))
        return audit

    def never_looked_at(self, paths: Iterable[str]) -> tuple[str, ...]:
        """Of `paths` (lake-relative), those neither read by the agent's code nor scanned."""
        scanned = {s.split("#")[0] for s in self.ledger.coverage().sources}
        return tuple(p for p in paths if p not in self.files_read and p not in scanned)

    def coverage(self) -> Coverage:
        """What the agent observed of the lake through the operators so far."""
        return self.ledger.coverage()
