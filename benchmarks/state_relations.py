"""Relations and stale states the deterministic manager records on DSEval replays.

Runs the reference code of each DSEval session of a suite directory through the replay
worker with the deterministic manager (no fault planted), then counts, over every
committed state: relations by type, invalidations, and stale states; each invalidation
is listed with the versions that prove it, to be read by a person (a recomputed column or
a revised value is a true one; an added column never is). Side by side with another
checkout: ``PYTHONPATH=OTHER/src python benchmarks/state_relations.py``.

    python benchmarks/state_relations.py [SUITE_DIR] [--limit N]
"""

from __future__ import annotations

import argparse
import tempfile
from collections import Counter
from pathlib import Path

from stateguard.bench.records import RunConfig
from stateguard.bench.runner import run_benchmark
from stateguard.state import StateStore

DEFAULT = Path(__file__).resolve().parents[1].parent / "shared/benchmarks/dseval/kaggle-dev"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", nargs="?", default=str(DEFAULT))
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    run_dir = Path(tempfile.mkdtemp(prefix="state-relations-"))
    config = RunConfig(suite="dseval", path=args.suite, manager="deterministic", limit=args.limit)
    run_benchmark(config, run_dir)
    types: Counter[str] = Counter()
    states = stale = 0
    invalidations: list[str] = []
    for db in sorted((run_dir / "manager").glob("*/states.sqlite")):
        with StateStore(db) as store:
            committed = store.committed()
            states += len(committed)
            stale += len(store.stale_states())
            marks = getattr(store, "stale_marks", dict)()  # an older checkout has none
            for s in committed:
                for r in s.relations:
                    types[r.type] += 1
                    if r.type == "invalidate":
                        made = [
                            v.key
                            for v in s.used_variables
                            if getattr(v, "role", None) in ("produced", None)
                        ]
                        target = store.get(r.related_state_id or "")
                        used = [v.key for v in target.used_variables]
                        why = [m.summary for m in marks.get(target.id, ())][:2]
                        invalidations.append(
                            f"{db.parent.name} {s.id}→{target.id}: made {made} | "
                            f"target used {used} | stale because {why}"
                        )
    print(f"sessions {len(list((run_dir / 'manager').glob('*/states.sqlite')))}")
    print(f"committed states {states}, stale {stale}")
    print(f"relations {sum(types.values())}: " + ", ".join(f"{k} {v}" for k, v in types.items()))
    for line in invalidations:
        print("  " + line)


if __name__ == "__main__":
    main()
