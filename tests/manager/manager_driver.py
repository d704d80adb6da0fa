"""A scripted worker over a real tracked kernel, driving a supervisor like the worker loop."""

from __future__ import annotations

from dataclasses import dataclass, field

from stateguard.lineage import TrackedSession
from stateguard.manager import Hint, StepView, Supervisor


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


def drive(session: TrackedSession, sup: Supervisor, turns: list[ScriptedTurn]) -> list[TurnLog]:
    """Run turns like the worker loop does: begin, steps, review (repair -> retry), end."""
    logs: list[TurnLog] = []
    step = 0
    for t, turn in enumerate(turns):
        log = TurnLog()
        before = sup.llm_calls
        log.state_hints += [h for h in sup.begin_turn(t, turn.question) if h.kind == "state"]
        cells, answer = list(turn.cells), turn.answer
        for _attempt in range(4):
            for code in cells:
                res = session.execute(code)
                assert res.execution.ok, res.execution.error
                hints = sup.after_step(
                    StepView(turn=t, step=step, code=code, execution=res.execution, cell=res.cell)
                )
                log.repair_hints += [h for h in hints if h.kind == "repair"]
                step += 1
            review = sup.review_answer(StepView(turn=t, step=step, answer=answer))
            step += 1
            if review.accepted:
                break
            log.repair_hints += [h for h in review.hints if h.kind == "repair"]
            cells, answer = turn.on_repair, turn.answer_after_repair or answer
        log.answer = answer
        sup.end_turn(t, answer)
        log.llm_calls = sup.llm_calls - before
        logs.append(log)
    return logs
