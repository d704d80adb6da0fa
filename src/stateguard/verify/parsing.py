"""Parse a verifier model reply: a probe request, a conclusion, or why it is neither.

Parsing never raises and never coerces: a score that is not exactly 0, 0.5 or 1 is
reported as invalid with the text it got.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict

from stateguard.verify.models import InvalidReason, Score

_SCORE = re.compile(r"<score>(.*?)</score>", re.S | re.I)
_SUMMARY = re.compile(r"<summary>(.*?)(?:</summary>|\Z)", re.S | re.I)
_CODE = re.compile(r"```(?:python|py|python3)?[ \t]*\n(.*?)```", re.S)
_VALUES: dict[str, Score] = {"0": 0.0, "0.0": 0.0, "0.5": 0.5, ".5": 0.5, "1": 1.0, "1.0": 1.0}


class VerifierReply(BaseModel):
    """One parsed reply: exactly one of ``code``, ``score`` and ``invalid`` is meaningful."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["probe", "conclusion", "invalid"]
    code: str | None = None
    score: Score | None = None
    summary: str = ""
    invalid: InvalidReason | None = None
    detail: str = ""


def parse_verifier_reply(text: str) -> VerifierReply:
    """A ``<score>`` concludes; otherwise one python block is a probe; otherwise invalid."""
    scores = _SCORE.findall(text or "")
    summary_m = _SUMMARY.search(text or "")
    summary = summary_m.group(1).strip() if summary_m else ""
    if scores:
        if len(scores) > 1:
            return VerifierReply(
                kind="invalid", invalid="unparseable_score", detail=f"{len(scores)} <score> tags"
            )
        raw = scores[0].strip()
        if raw in _VALUES:
            return VerifierReply(kind="conclusion", score=_VALUES[raw], summary=summary)
        try:
            float(raw)
        except ValueError:
            return VerifierReply(kind="invalid", invalid="unparseable_score", detail=raw[:200])
        return VerifierReply(kind="invalid", invalid="score_out_of_range", detail=raw[:200])
    blocks = _CODE.findall(text or "")
    if len(blocks) == 1 and blocks[0].strip():
        return VerifierReply(kind="probe", code=blocks[0])
    detail = "several code blocks" if len(blocks) > 1 else (text or "").strip()[:200]
    return VerifierReply(kind="invalid", invalid="unparseable_score", detail=detail)
