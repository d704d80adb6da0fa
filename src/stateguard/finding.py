"""`Finding`: what any check found about a step, how sure, and on what evidence.

One shape for every layer that checks a step (the verifier's rules, the worker's doubts,
the audit's join guard): the check's name, a severity, a message, the typed facts, the
variables and parts involved, and the **basis**, what the finding rests on.

Severity follows evidence, not wording:

- ``alarm``: evidence against the step (a score of 0, a refused answer, a repair). Only
  code, data, execution, lineage or the answer itself can raise one.
- ``doubt``: worth a 0.5 or a second look.
- ``note``: a fact to show, which decides nothing.

A finding that rests on reading the question's English (a threshold's direction, which
column the question names, the statistic it asks for, join intent, decimal places) is a
doubt or a note. It may be an alarm only with a ``corroboration``: what the data showed
to back the reading (for example a probe that gave a different result under the other
reading). The model refuses an alarm without one, so no check can turn a reading of the
English into a 0 by mistake.

This module imports nothing from the package: every layer may use it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

Severity = Literal["alarm", "doubt", "note"]
SEVERITIES: tuple[Severity, ...] = ("alarm", "doubt", "note")

Basis = Literal["execution", "lineage", "code", "data", "answer", "question"]
"""What a finding rests on: ``execution`` (an exception, what a cell showed), ``lineage``
(versions read and written), ``code`` (the step's source), ``data`` (a probe of the
values), ``answer`` (the answer's text against what ran) or ``question`` (a reading of the
question's English)."""

FactValue = str | int | float | bool | None | tuple[str, ...]


class Finding(BaseModel):
    """One check's finding about one step."""

    model_config = ConfigDict(frozen=True)

    check: str
    """The check that found it (``stale_read``, ``absent_filter``, ``audit_dropped_rows``…)."""
    severity: Severity
    message: str
    """What was found, in the product's own words (logs, LLM prompts, rationales)."""
    basis: tuple[Basis, ...]
    """What the finding rests on; at least one."""
    corroboration: str = ""
    """What the data showed to back a reading of the question (needed for an alarm whose
    basis includes ``question``)."""
    firm: bool = False
    """A doubt the evidence settles by itself (a corrected exploration error is 0.5,
    whatever a judge would say): no LLM layer is asked. Alarms are always firm."""
    facts: dict[str, FactValue] = {}
    """Typed facts (numbers, names, places…) a renderer may word."""
    variables: tuple[str, ...] = ()
    """Variable versions involved (``margin@v1``)."""
    parts: tuple[str, ...] = ()
    """Parts of variables involved (``orders['cogs']``)."""

    @model_validator(mode="after")
    def _evidence_carries_severity(self) -> Finding:
        if not self.basis:
            raise ValueError(f"finding {self.check!r} names no basis")
        if self.severity == "alarm" and "question" in self.basis and not self.corroboration.strip():
            raise ValueError(
                f"finding {self.check!r} rests on the question's English: it can be an alarm "
                "only with a corroboration from the data"
            )
        return self

    @property
    def settles(self) -> bool:
        """Whether the finding decides the step's score by itself (alarms, firm doubts)."""
        return self.severity == "alarm" or (self.severity == "doubt" and self.firm)

    @property
    def score(self) -> float | None:
        """The step score it stands for: 0 (alarm), 0.5 (doubt), None (note)."""
        return {"alarm": 0.0, "doubt": 0.5}.get(self.severity)

    @property
    def from_question(self) -> bool:
        """Whether it rests on a reading of the question's English."""
        return "question" in self.basis

    def demoted(self) -> Finding:
        """The same finding one step less severe (alarm → doubt → note)."""
        lower: dict[Severity, Severity] = {"alarm": "doubt", "doubt": "note", "note": "note"}
        return self.model_copy(update={"severity": lower[self.severity], "firm": False})
