"""LLM calls per turn of the hybrid manager on one DSEval session (replayed reference code).

The manager's model is scripted (it names states and calls every judged finding
"supported"), so this counts *when* the hybrid policy asks a model, not what a model says.

    python benchmarks/hybrid_llm_calls.py \
        ../shared/benchmarks/dseval/exercise/03-grouping-occupation.py
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from stateguard.bench.loaders.dseval import load_dseval_session, stage_inputs
from stateguard.kernel import KernelSession
from stateguard.lineage import TrackedSession
from stateguard.llm import ChatMessage, ScriptedModel
from stateguard.manager import StepView, build_supervisor


def _reply(messages: list[ChatMessage]) -> str:
    if "deterministic check could not confirm" in messages[-1].content:
        return '{"verdict": "supported"}'
    return '{"issue": "named", "conclusions": []}'


def main() -> None:
    """Replay a session through the hybrid manager and print its LLM calls per turn."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("session", type=Path)
    args = ap.parse_args()
    task = load_dseval_session(args.session)
    workdir = Path(tempfile.mkdtemp())
    stage_inputs(task, workdir)
    session = TrackedSession(KernelSession(workdir=workdir))
    session.start()
    sup = build_supervisor(
        "hybrid", session=session, run_dir=Path(tempfile.mkdtemp()), model=ScriptedModel(_reply)
    )
    step, per_turn, repairs = 0, [], 0
    try:
        for turn in task.turns:
            before = sup.llm_calls
            sup.begin_turn(turn.turn_id, turn.question)
            out = ""
            for code in (turn.meta.get("setup_code") or "", turn.reference_code or ""):
                if not code.strip():
                    continue
                res = session.execute(code)
                sup.after_step(
                    StepView(
                        turn=turn.turn_id,
                        step=step,
                        code=code,
                        execution=res.execution,
                        cell=res.cell,
                    )
                )
                step += 1
                out = (res.execution.stdout + (res.execution.result or ""))[-300:]
            review = sup.review_answer(StepView(turn=turn.turn_id, step=step, answer=out or "done"))
            step += 1
            repairs += not review.accepted
            sup.end_turn(turn.turn_id, out)
            per_turn.append(sup.llm_calls - before)
    finally:
        session.stop()
    mean = sum(per_turn) / max(len(per_turn), 1)
    print(
        f"{args.session.name}: {len(per_turn)} turns, LLM calls per turn {per_turn}, "
        f"mean {mean:.2f}, repairs {repairs}"
    )


if __name__ == "__main__":
    main()
