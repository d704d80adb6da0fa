"""The host side of auditing a kernel: what to install, and what a cell's audit says.

A composition root (`GuardedSession`) uses it in three steps::

    auditor = Auditor(AuditSettings(join_guard="flag", lake="data"), ledger_path=run / "a.jsonl")
    TrackedSession(kernel, setup_code=auditor.setup_code)   # runs after start/restart/reset
    audit = auditor.observe(result.execution)               # after every cell
    audit.describe()   # text to append to the agent's observation ("" when nothing to say)
    audit.findings     # `stateguard.finding.Finding`s for the manager and the verifier
    audit.alarms       # those concrete enough to refuse on

`observe` only reads `ExecutionResult.private`, so it works on recorded results too.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from stateguard.audit.diagnostics import JoinCellReport, JoinDiagnostic, JoinRecord, join_report
from stateguard.audit.joinguard import install_code as join_guard_code
from stateguard.audit.joinintent import RowsAsked, rows_asked
from stateguard.audit.joinpolicy import is_alarm
from stateguard.audit.kernelops import install_code as operators_code
from stateguard.audit.kernelops import operator_calls
from stateguard.audit.ledger import AuditLedger, Coverage
from stateguard.audit.observations import OperatorCall
from stateguard.audit.sourcewatch import files_read
from stateguard.audit.sourcewatch import install_code as watch_code
from stateguard.finding import FactValue, Finding
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
    def findings(self) -> tuple[Finding, ...]:
        """Join-guard diagnostics and operator findings, in call order per source.

        Join guard (check: the diagnostic's kind): an ``alarm`` on the code and the data
        when `stateguard.audit.joinpolicy` calls it evidence against the result from the
        code alone; a ``doubt`` when only the question made it one (it asks to keep the
        unmatched rows a written ``how=`` drops); else a ``note``. The basis includes
        ``question`` when the question decided (that doubt, or a note the question made of
        rows pandas' default join drops). Operators (check: the rule): the rule's finding,
        an ``alarm`` for a rejecting rule.

        ``variables`` are the names holding the result; ``facts`` carry ``origin``
        (``join_guard`` or ``operator``), ``level`` (``error`` or ``warning``, as the join
        guard grades it; ``error`` for a rejecting rule), for the join guard ``line`` (of
        the pandas call in the cell) and what the diagnostic counted (``rows``, ``side``,
        ``keys``, ``columns``), for an operator its ``call`` (sequence number) and the
        earlier ``calls`` its rule used.
        """
        out: list[Finding] = []
        if self.joins is not None:
            for rec in self.joins.records:
                out.extend(_join_finding(rec, d, self.rows_asked) for d in rec.diagnostics)
        for call in self.operators:
            outputs = (call.args["output"],) if call.args.get("output") else ()
            out.extend(
                f.model_copy(
                    update={
                        "variables": outputs,
                        "facts": {
                            **f.facts,
                            "origin": "operator",
                            "level": "error" if f.severity == "alarm" else "warning",
                            "call": call.seq,
                        },
                    }
                )
                for f in call.findings
            )
        return tuple(out)

    @property
    def alarms(self) -> tuple[Finding, ...]:
        """The findings that are evidence against the cell's result: the alarms, and the
        doubts only the question raised (`findings`)."""
        return tuple(f for f in self.findings if counts_against(f))

    @property
    def has_errors(self) -> bool:
        """True when some finding is an error (a keyless join, a rejected operator…)."""
        return any(f.facts.get("level") == "error" for f in self.findings)

    def describe(self) -> str:
        """The findings as lines of observation text ("" when there are none)."""
        lines = []
        for f in self.findings:
            line = f.facts.get("line")
            where = f" (line {line})" if line is not None else ""
            lines.append(f"audit {'alarm' if counts_against(f) else 'note'}: {f.message}{where}")
        return "\n".join(lines)


def counts_against(finding: Finding) -> bool:
    """Whether a `CellAudit` finding is evidence against the result: an alarm, or a doubt
    the question raised (the audit makes no other doubts)."""
    return finding.severity == "alarm" or (finding.severity == "doubt" and finding.from_question)


def _join_finding(record: JoinRecord, d: JoinDiagnostic, asked: RowsAsked | None) -> Finding:
    """One join-guard diagnostic as a finding, weighed by `stateguard.audit.joinpolicy`."""
    alarm = is_alarm(record, d, asked)
    by_code = is_alarm(record, d, None)
    by_question = alarm and not by_code
    decided = alarm != by_code  # the question raised it, or made a code-only alarm a note
    message = d.message
    if alarm and d.kind == "dropped_rows":
        message += (
            "; the question asks to keep unmatched rows"
            if asked == "all"
            else "; the call gives no how=, so this is pandas' default inner join"
        )
    facts: dict[str, FactValue] = {"origin": "join_guard", "level": d.severity}
    if record.line is not None:
        facts["line"] = record.line
    if d.rows is not None:
        facts["rows"] = d.rows
    if d.side is not None:
        facts["side"] = d.side
    if d.keys:
        facts["keys"] = d.keys
    if d.columns:
        facts["columns"] = d.columns
    return Finding(
        check=d.kind,
        severity="doubt" if by_question else "alarm" if alarm else "note",
        message=message,
        basis=("code", "data", "question") if decided else ("code", "data"),
        facts=facts,
        variables=record.output_names,
    )


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
