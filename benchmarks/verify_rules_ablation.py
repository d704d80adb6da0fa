"""The deterministic verifier, rule group by rule group, on one labelled set.

Labels the DSEval suite once (reference steps 1, planted silent errors 0, corrected
exploration errors 0.5; see `stateguard.verify.labelling`) and scores every step with
four verifiers side by side: ``execution`` (a cell that ran is correct),
``deterministic-execution-rules`` (the rules reading execution, lineage and the audit:
`EXECUTION_RULES`), ``deterministic-no-data-rules`` (those and the question-consistency
rules, without `DATA_RULES`: filters on values a column lacks, Series printed after a
value's label) and ``deterministic`` (all rules). Prints silent-error recall,
false-zero rate and accuracy, recall per mutation kind, and Best-of-N selection at
N = 4, 8 and 16 for each.

    python benchmarks/verify_rules_ablation.py --path ../shared/benchmarks/dseval/exercise \
        [--limit N] [--out steps.jsonl] [--json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.console import Console

from stateguard.cli.verify import label_suite
from stateguard.verify import StepVerifier
from stateguard.verify.evaluation import metrics, recall_by_kind, selection
from stateguard.verify.rules import DATA_RULES, EXECUTION_RULES, RULES


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    verifiers = {
        "execution": StepVerifier("execution"),
        "deterministic-execution-rules": StepVerifier("deterministic", rules=EXECUTION_RULES),
        "deterministic-no-data-rules": StepVerifier(
            "deterministic", rules=tuple(r for r in RULES if r not in DATA_RULES)
        ),
        "deterministic": StepVerifier("deterministic"),
    }
    err = Console(stderr=True)
    steps = label_suite(args.path, args.limit, verifiers, args.out, err)
    names = list(verifiers)
    report = {
        "steps": len(steps),
        "labels": {k: sum(1 for s in steps if f"{s.label:g}" == k) for k in ("0", "0.5", "1")},
        "verifiers": {n: metrics(steps, n).model_dump() for n in names},
        "silent_error_recall_by_kind": recall_by_kind(steps, names),
        "selection": [r.model_dump() for r in selection(steps, names)],
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{report['steps']} steps, labels {report['labels']}")
    for n, m in report["verifiers"].items():
        print(
            f"{n}: silent_error_recall={m['silent_error_recall']:.3f} "
            f"false_zero_rate={m['false_zero_rate']:.4f} accuracy={m['accuracy']:.3f}"
        )
    for n, kinds in report["silent_error_recall_by_kind"].items():
        print(
            f"{n} recall by kind: "
            + ", ".join(f"{k}={'n/a' if v is None else f'{v:.2f}'}" for k, v in kinds.items())
        )
    for r in report["selection"]:
        rates = ", ".join(
            f"{k}={'n/a' if v is None else f'{v:.3f}'}" for k, v in r["picked_correct"].items()
        )
        print(f"best-of-{r['n']} over {r['turns']} turns: {rates}")


if __name__ == "__main__":
    main()
