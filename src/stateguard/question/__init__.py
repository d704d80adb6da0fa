"""The only place that reads a question's English: `QuestionSpec.parse(text, context)`.

The rest of the package asks a `QuestionSpec` what the question states (rounding,
thresholds and which rows they keep, the statistic, named values and years, join intent,
stated revisions) instead of matching the wording itself. A field the English does not
state unambiguously is "not stated".
"""

from stateguard.question.spec import (
    THRESHOLD,
    QuestionSpec,
    Revision,
    Threshold,
    decimals,
    number,
    threshold_spans,
)

__all__ = [
    "THRESHOLD",
    "QuestionSpec",
    "Revision",
    "Threshold",
    "decimals",
    "number",
    "threshold_spans",
]
