"""The step verifier's metrics per side of the fixed split, from a labelled-steps file.

`stateguard verify eval --out FILE` writes every labelled step with each verifier's
verdict; this prints, for ``dev`` and ``validation`` side by side: silent-error recall
(0 only, and 0 or 0.5), correct steps scored 0, and Best-of-N at N = 4 / 8 / 16. Tune on
``dev`` only; ``validation`` is read here as numbers, never as steps.

    stateguard verify eval --path ../shared/benchmarks/dseval/kaggle-dev --out /tmp/k.jsonl
    python benchmarks/verify_splits.py /tmp/k.jsonl [/tmp/other.jsonl ...]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from stateguard.verify.evaluation import metrics, selection
from stateguard.verify.labelling import load_labelled
from stateguard.verify.splits import SPLITS, split_of


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--verifier", default="deterministic")
    args = parser.parse_args()
    steps = [s for f in args.files for s in load_labelled(f)]
    print("| split | steps | recall (0) | recall (0 or 0.5) | correct scored 0 | BoN 4 / 8 / 16 |")
    print("|---|---|---|---|---|---|")
    for side in SPLITS:
        part = [s for s in steps if split_of(s.session) == side]
        m = metrics(part, args.verifier)
        ones = sum(m.confusion["1"].values())
        bon = selection(part, [args.verifier])
        rates = " / ".join(f"{r.picked_correct[args.verifier] or 0:.3f}" for r in bon)
        print(
            f"| {side} | {m.steps} | {m.silent_error_recall or 0:.3f} | "
            f"{m.silent_error_flagged or 0:.3f} | {m.confusion['1']['0']} of {ones} | {rates} |"
        )


if __name__ == "__main__":
    main()
