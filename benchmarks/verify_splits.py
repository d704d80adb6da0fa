"""The step verifier's metrics per side of the fixed split, from a labelled-steps file.

`stateguard verify eval --out FILE` writes every labelled step with each verifier's
verdict; this prints, for ``dev`` and ``validation`` side by side: silent-error recall
(0 only, and 0 or 0.5), correct steps scored 0, and Best-of-N at N = 4 / 8 / 16 with
the number of turns each N could use. Tune on ``dev`` only; ``validation`` is read here
as numbers, never as steps.

``--bootstrap K`` adds, under each side, a 95 % interval for each rate from K resamples
of its sessions (seeded), so a gap between the sides can be told from the noise of a few
dozen sessions: two sides whose intervals overlap widely do not differ on this evidence.

    stateguard verify eval --path ../shared/benchmarks/dseval/kaggle-dev --out /tmp/k.jsonl
    python benchmarks/verify_splits.py /tmp/k.jsonl [/tmp/other.jsonl ...] [--bootstrap 300]
    python benchmarks/verify_splits.py S.jsonl --sessions-in ../shared/benchmarks/dseval/kaggle-dev
"""

from __future__ import annotations

import argparse
import random
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from stateguard.verify.evaluation import metrics, selection
from stateguard.verify.labelling import LabelledStep, load_labelled
from stateguard.verify.splits import SPLITS, split_of


def rates(steps: Sequence[LabelledStep], verifier: str) -> tuple[list[float], list[int]]:
    """Recall (0), recall (0 or 0.5), BoN at 4 / 8 / 16; and the turns each N used."""
    m = metrics(steps, verifier)
    bon = selection(steps, [verifier])
    values = [m.silent_error_recall or 0.0, m.silent_error_flagged or 0.0]
    values += [r.picked_correct[verifier] or 0.0 for r in bon]
    return values, [r.turns for r in bon]


def intervals(
    steps: Sequence[LabelledStep], verifier: str, resamples: int, seed: int = 0
) -> list[tuple[float, float]]:
    """A 95 % percentile interval per rate of `rates`, resampling sessions."""
    by_session: dict[str, list[LabelledStep]] = defaultdict(list)
    for s in steps:
        by_session[s.session].append(s)
    names = sorted(by_session)
    rng = random.Random(seed)
    draws: list[list[float]] = []
    for _ in range(resamples):
        picked = [rng.choice(names) for _ in names]
        sample = [
            s.model_copy(update={"session": f"{name}#{i}"})
            for i, name in enumerate(picked)
            for s in by_session[name]
        ]
        draws.append(rates(sample, verifier)[0])
    out = []
    for column in zip(*draws, strict=True):
        ordered = sorted(column)
        out.append((ordered[int(0.025 * len(ordered))], ordered[int(0.975 * len(ordered)) - 1]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--verifier", default="deterministic")
    parser.add_argument("--bootstrap", type=int, default=0, help="session resamples")
    parser.add_argument(
        "--sessions-in", type=Path, help="keep only the sessions of this DSEval folder"
    )
    args = parser.parse_args()
    steps = [s for f in args.files for s in load_labelled(f)]
    if args.sessions_in is not None:
        kept = {f"dseval-{p.stem}" for p in args.sessions_in.glob("*.py")}
        steps = [s for s in steps if s.session in kept]
    print(
        "| split | sessions | steps | recall (0) | recall (0 or 0.5) | correct scored 0 "
        "| BoN 4 / 8 / 16 | BoN turns |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for side in SPLITS:
        part = [s for s in steps if split_of(s.session) == side]
        m = metrics(part, args.verifier)
        ones = sum(m.confusion["1"].values())
        values, turns = rates(part, args.verifier)
        sessions = len({s.session for s in part})
        bon = " / ".join(f"{v:.3f}" for v in values[2:])
        print(
            f"| {side} | {sessions} | {m.steps} | {values[0]:.3f} | {values[1]:.3f} | "
            f"{m.confusion['1']['0']} of {ones} | {bon} | {' / '.join(map(str, turns))} |"
        )
        if args.bootstrap:
            ci = [f"{lo:.2f}–{hi:.2f}" for lo, hi in intervals(part, args.verifier, args.bootstrap)]
            print(f"| {side}, 95 % | | | {ci[0]} | {ci[1]} | | {' / '.join(ci[2:])} | |")


if __name__ == "__main__":
    main()
