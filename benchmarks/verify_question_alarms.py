"""What the verifier's question-based alarms buy: each side of the fixed split scored as it
was, and again with every alarm that rests on reading the question turned into a doubt.

An alarm on a reading of the question is kept only when the data corroborates it (a probe
shows the two readings give different results); it still rests on the English. This
re-scores a labelled-steps file from the findings each verdict carries (check, severity,
basis), without running the verifier again: a step scores 0 with an alarm, 0.5 with a
doubt, else 1. It prints recall (0), recall (0 or 0.5), correct steps scored 0 and
Best-of-N at 4 / 8 / 16, per side, for the verdicts as recorded and for the variant.

    stateguard verify eval --suite dseval --path … --out S.jsonl
    python benchmarks/verify_question_alarms.py S.jsonl
"""

from __future__ import annotations

import argparse
from pathlib import Path

from verify_splits import rates

from stateguard.verify.labelling import LabelledStep, load_labelled
from stateguard.verify.splits import SPLITS, split_of

_SCORE = {"alarm": 0.0, "doubt": 0.5, "note": 1.0}


def rescored(step: LabelledStep, verifier: str, name: str, demote: bool) -> LabelledStep:
    """``step`` with a verdict ``name``: ``verifier``'s findings scored again, the
    question-based alarms as doubts when ``demote``."""
    verdict = step.verdicts[verifier]
    score = 1.0
    for f in verdict.evidence:
        severity = f.severity
        if demote and severity == "alarm" and "question" in f.basis:
            severity = "doubt"
        score = min(score, _SCORE[severity])
    verdicts = {**step.verdicts, name: verdict.model_copy(update={"score": score})}
    return step.model_copy(update={"verdicts": verdicts})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--verifier", default="deterministic")
    args = parser.parse_args()
    steps = [s for f in args.files for s in load_labelled(f)]
    steps = [
        rescored(rescored(s, args.verifier, "as recorded", False), args.verifier, "demoted", True)
        for s in steps
    ]
    print(
        "| split | verdicts | recall (0) | recall (0 or 0.5) | correct scored 0 | BoN 4 / 8 / 16 |"
    )
    print("|---|---|---|---|---|---|")
    for side in SPLITS:
        mine = [s for s in steps if split_of(s.session) == side]
        correct = [s for s in mine if s.label == 1.0]
        for name in ("as recorded", "demoted"):
            values, _ = rates(mine, name)
            zeros = sum(s.verdicts[name].score == 0.0 for s in correct)
            print(
                f"| {side} | {name} | {values[0]:.3f} | {values[1]:.3f} | {zeros} of "
                f"{len(correct)} | {values[2]:.3f} / {values[3]:.3f} / {values[4]:.3f} |"
            )


if __name__ == "__main__":
    main()
