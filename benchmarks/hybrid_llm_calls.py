"""Manager LLM calls per turn of the hybrid policy on replayed DSEval sessions, with faults.

Each session is replayed (reference code as the agent, `stateguard.bench.replay`) with
planted faults (``--inject``, default ``stale-reuse``) twice, side by side: with the
hybrid policy naming states from the evidence (``naming="evidence"``, the default) and
with the former behaviour (``naming="llm"``: one naming call per committed state). The
manager's model is scripted (it names states and calls every judged finding
"supported"), so this counts *when* the policy asks a model, not what a model says;
the faults caught must be the same in both columns.

    python benchmarks/hybrid_llm_calls.py ../shared/benchmarks/dseval/exercise
    python benchmarks/hybrid_llm_calls.py SESSION.py   # one session
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from stateguard.bench.gold import load_or_plan, load_or_run_gold
from stateguard.bench.loaders.dseval import load_dseval_session
from stateguard.bench.observe import task_kernel
from stateguard.bench.replay import ReplayWorker
from stateguard.bench.tasks import BenchTask
from stateguard.guard import GuardedSession
from stateguard.lineage import TrackedSession
from stateguard.llm import ChatMessage, ScriptedModel
from stateguard.manager import build_supervisor
from stateguard.state import StateStore

MODES = ("llm", "evidence")


def _reply(messages: list[ChatMessage]) -> str:
    if "deterministic check could not confirm" in messages[-1].content:
        return '{"verdict": "supported"}'
    return '{"issue": "named", "conclusions": []}'


def _replay(task: BenchTask, gold, faults, naming: str, root: Path) -> list:
    tracked = TrackedSession(task_kernel(task, root / f"work-{naming}"))
    tracked.start()
    sup = build_supervisor(
        "hybrid",
        session=tracked,
        run_dir=root,
        model=ScriptedModel(_reply),
        store=StateStore(":memory:"),
    )
    sup.policy.naming = naming  # type: ignore[attr-defined]
    try:
        with GuardedSession(tracked, manager=sup) as guard:
            return [r for r, _ in ReplayWorker(task, guard, gold, faults).run()]
    finally:
        tracked.stop()


def main() -> None:
    """Replay sessions in both naming modes and print calls per turn and faults caught."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", type=Path, help="a DSEval session file or a directory of them")
    ap.add_argument("--inject", default="stale-reuse")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    files = sorted(args.path.glob("[0-9]*.py")) if args.path.is_dir() else [args.path]
    totals = {m: {"turns": 0, "calls": 0, "faults": 0, "caught": 0, "alarms": 0} for m in MODES}
    caught_turns: dict[str, set[tuple[str, int]]] = {m: set() for m in MODES}
    for path in files:
        task = load_dseval_session(path)
        root = Path(tempfile.mkdtemp(prefix="hybrid-calls-"))
        try:
            gold = load_or_run_gold(task, root / "gold", root / "gold-work", 120.0)
            faults = load_or_plan(
                task, gold, args.inject, root / "plans", root / "plan-work",
                seed=args.seed, max_injections=1, cell_timeout=120.0,
            )  # fmt: skip
            line = [path.name]
            for mode in MODES:
                results = _replay(task, gold, faults, mode, root)
                t = totals[mode]
                t["turns"] += len(results)
                t["calls"] += sum(r.llm_calls for r in results)
                t["faults"] += sum(r.injected for r in results)
                t["caught"] += sum(r.injected and r.flagged for r in results)
                t["alarms"] += sum(r.flagged and not r.injected for r in results)
                caught_turns[mode] |= {
                    (task.task_id, r.turn_id) for r in results if r.injected and r.flagged
                }
                line.append(f"{mode}: calls {[r.llm_calls for r in results]}")
            print("  ".join(line), flush=True)
        finally:
            shutil.rmtree(root, ignore_errors=True)
    for mode in MODES:
        t = totals[mode]
        print(
            f"naming={mode}: {t['turns']} turns, {t['calls']} manager LLM calls, "
            f"{t['calls'] / max(t['turns'], 1):.3f} per turn; faults planted {t['faults']}, "
            f"caught {t['caught']}, false alarms {t['alarms']}"
        )
    same = caught_turns["llm"] == caught_turns["evidence"]
    print(f"same faults caught in both modes: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
