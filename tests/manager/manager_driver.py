"""A scripted worker over a real tracked kernel, driving a guarded session like the worker."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from stateguard.guard import GuardedSession, JsonlEventSink
from stateguard.lineage import TrackedSession
from stateguard.llm import ChatModel
from stateguard.manager import Hint


@dataclass
class ScriptedTurn:
    """Code cells the scripted worker runs, its answer, and what it does after a repair."""

    question: str
    cells: list[str]
    answer: str
    on_repair: list[str] = field(default_factory=list)
    answer_after_repair: str | None = None


@dataclass
class TurnLog:
    state_hints: list[Hint] = field(default_factory=list)
    repair_hints: list[Hint] = field(default_factory=list)
    answer: str | None = None
    llm_calls: int = 0


def guarded(
    session: TrackedSession, manager: str, run_dir: Path, model: ChatModel | None = None
) -> GuardedSession:
    """The tracked session guarded by ``manager``; events go to run_dir/manager_events.jsonl."""
    return GuardedSession(
        session,
        manager=manager,
        model=model,
        run_dir=run_dir,
        sinks=[JsonlEventSink(run_dir / "manager_events.jsonl")],
    )


def drive(guard: GuardedSession, turns: list[ScriptedTurn]) -> list[TurnLog]:
    """Run turns like the worker loop does: begin, steps, review (repair -> retry), end."""
    logs: list[TurnLog] = []
    with guard:
        for t, turn in enumerate(turns):
            log = TurnLog()
            before = guard.llm_calls
            notes = guard.begin_turn(turn.question, turn=t)
            log.state_hints += [h for h in notes if h.kind == "state"]
            cells, answer = list(turn.cells), turn.answer
            for _attempt in range(4):
                for code in cells:
                    outcome = guard.run_cell(code)
                    assert outcome.ok, outcome.execution.error
                    log.repair_hints += [h for h in outcome.notes if h.kind == "repair"]
                review = guard.propose_answer(answer)
                if review.accepted:
                    break
                log.repair_hints += [h for h in review.notes if h.kind == "repair"]
                cells, answer = turn.on_repair, turn.answer_after_repair or answer
            log.answer = answer
            guard.end_turn(answer)
            log.llm_calls = guard.llm_calls - before
            logs.append(log)
    return logs
