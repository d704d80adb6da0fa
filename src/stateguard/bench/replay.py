"""The replay worker: reference code as the agent, driving a supervisor over a real kernel.

Per turn, like the worker loop: ``begin_turn``; a step for the turn's setup code
(DSEval context cells), a step for its code (reference code, or the faulty code of a
planted fault); ``review_answer`` with the produced output as the answer. When the
manager rejects the answer with a repair hint, the worker obeys as an obedient
agent would: it re-runs the turn's reference code and answers again (at most
``max_repairs`` times). ``end_turn``.

For a stale-reuse fault planted at turn j with revision turn i, the worker keeps a
copy of the pre-revision value (`inject.snapshot_code`) in a step of turn i - 1, right
after its first attempt: the copy is taken while the value is current, as an agent
saving a result for later does.

A join fault may be planted in a turn that rebinds names from their own value
(``df = df.merge(...)``): the worker checkpoints those names before the faulty run and
restores them before the redo, so the redo starts from the turn's starting state.

The turn is judged on the observation after its last attempt; ``first_correct`` is
the verdict on the first attempt. ``flagged`` = the manager issued a repair hint in
the turn; ``repaired`` = the worker re-ran after one; ``fixed_by_repair`` = first
attempt wrong, final attempt right.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from stateguard.bench import inject
from stateguard.bench.gold import GoldTask, PlannedFault
from stateguard.bench.judges import Judgement
from stateguard.bench.observe import (
    answer_text,
    capture,
    checked_names,
    judge,
    judge_reason,
    namespace_diff,
    observation,
    seed_randomness,
)
from stateguard.bench.records import InjectionRecord, TurnResult
from stateguard.bench.tasks import BenchTask, BenchTurn
from stateguard.guard import GuardedSession
from stateguard.kernel import ExecutionResult
from stateguard.lineage import CellRecord, TrackedSession, checkpoints
from stateguard.manager import Hint


@dataclass
class _TurnLog:
    repair_hints: int = 0
    attempts: int = 0
    accepted: bool = True
    answer: str | None = None
    attempt_cells: list[CellRecord] = field(default_factory=list)
    joins: int = 0


class ReplayWorker:
    """Replays one task's turns against a supervisor (see the module docstring)."""

    def __init__(
        self,
        task: BenchTask,
        guard: GuardedSession,
        gold: GoldTask | None,
        faults: list[PlannedFault] | None = None,
        *,
        max_repairs: int = 3,
        cell_timeout: float | None = None,
    ) -> None:
        self.task = task
        self.guard = guard
        self.gold = gold
        self.faults = {f.candidate.turn_id: f for f in faults or []}
        self.max_repairs = max_repairs
        self.cell_timeout = cell_timeout
        self._joins = 0
        """Merge/join calls the join guard recorded in the last step run."""
        self._saved = Path(guard.tracked.kernel.workdir) / ".stateguard" / "replay"
        """Where a faulted turn's rebound names are saved (`Candidate.restore`)."""

    # -- one step ----------------------------------------------------------------

    @property
    def step(self) -> int:
        """The global index the next step gets."""
        return self.guard.step

    @property
    def session(self) -> TrackedSession:
        """The guarded session's tracked kernel session (what capture and judging read)."""
        return self.guard.tracked

    def _run_step(self, code: str) -> tuple[ExecutionResult, CellRecord | None, tuple[Hint, ...]]:
        outcome = self.guard.run_cell(code, timeout=self.cell_timeout)
        joins = outcome.audit.joins if outcome.audit is not None else None
        self._joins = sum(r.operation != "concat" for r in joins.records) if joins else 0
        return outcome.execution, outcome.cell, outcome.notes

    def _judge(self, turn: BenchTurn, execution, cells: list[CellRecord], tag: str) -> Judgement:
        gold = self.gold.turn(turn.turn_id).observation if self.gold else None
        captured = capture(self.guard.tracked, execution, checked_names(self.task, turn), tag)
        diff = None
        if cells:
            diff = namespace_diff(self.guard.graph, cells, cells[0].cell)
        source = "\n".join(c.source for c in cells) if cells else None
        obs = observation(execution, captured, diff, source=source)
        return judge(self.task, turn, gold, obs, session=self.guard.tracked)

    # -- one turn ----------------------------------------------------------------

    def _keep_copies(self, t: int, log: _TurnLog) -> None:
        """The faulty worker's step keeping a copy of a value that the next turn revises."""
        for fault in self.faults.values():
            c = fault.candidate
            if c.kind == "stale-reuse" and c.revision_turn == t + 1:
                _, _, hints = self._run_step(inject.snapshot_code(c.variable, c.alias))
                log.repair_hints += sum(h.kind == "repair" for h in hints)

    def run_turn(self, turn: BenchTurn) -> tuple[TurnResult, InjectionRecord | None]:
        """Replay one turn and judge it."""
        started = time.monotonic()
        t = turn.turn_id
        guard = self.guard
        calls_before = guard.llm_calls
        guard.begin_turn(turn.question, turn=t)
        log = _TurnLog()
        setup = turn.meta.get("setup_code")
        if setup:
            _, _, hints = self._run_step(setup)
            log.repair_hints += sum(h.kind == "repair" for h in hints)
        fault = self.faults.get(t)
        code = fault.candidate.faulty_code if fault else (turn.reference_code or "")
        restore = list(fault.candidate.restore) if fault else []
        if restore:  # the turn rebinds names from themselves: keep them for the redo
            checkpoints.save(self.guard.tracked, self._saved / f"turn-{t}.pkl", restore)
        first: Judgement | None = None
        final: Judgement | None = None
        while True:
            execution, cell, hints = self._run_step(code)
            log.attempts += 1
            if log.attempts == 1:
                log.joins = self._joins
            log.repair_hints += sum(h.kind == "repair" for h in hints)
            if cell is not None:
                log.attempt_cells.append(cell)
            final = self._judge(turn, execution, log.attempt_cells, f"turn-{t}-{log.attempts}")
            if first is None:
                first = final
                self._keep_copies(t, log)
            log.answer = answer_text(execution)
            review = guard.propose_answer(log.answer)
            repairs = [h for h in review.notes if h.kind == "repair"]
            log.repair_hints += len(repairs)
            log.accepted = review.accepted
            if review.accepted or log.attempts > self.max_repairs:
                break
            code = turn.reference_code or ""  # the obedient worker redoes the turn correctly
            if restore:  # from the state the turn started from
                checkpoints.restore(self.guard.tracked, self._saved / f"turn-{t}.pkl", restore)
        guard.end_turn(log.answer)
        guard.drain_events()
        return self._record(turn, log, first, final, fault, guard.llm_calls - calls_before, started)

    def _record(
        self,
        turn: BenchTurn,
        log: _TurnLog,
        first: Judgement,
        final: Judgement,
        fault: PlannedFault | None,
        llm_calls: int,
        started: float,
    ) -> tuple[TurnResult, InjectionRecord | None]:
        g = self.gold.turn(turn.turn_id) if self.gold else None
        skipped = g.skipped_reason if g else None
        if turn.reference_code is None:
            skipped = "no reference code to replay"
        excluded = final.excluded or first.excluded
        correct = None if excluded else final.correct
        first_correct = None if excluded else first.correct
        effective = None if fault is None or first_correct is None else not first_correct
        depends = g.depends_on if g and self.task.suite == "dseval" else turn.depends_on
        result = TurnResult(
            task_id=self.task.task_id,
            turn_id=turn.turn_id,
            n_turns=len(self.task.turns),
            domain=self.task.domain,
            suite=self.task.suite,
            correct=correct,
            skipped=skipped is not None,
            skipped_reason=skipped,
            depends_on=depends,
            injected=fault is not None,
            flagged=log.repair_hints > 0,
            repaired=log.attempts > 1,
            fixed_by_repair=log.attempts > 1 and first_correct is False and correct is True,
            llm_calls=llm_calls,
            answer=log.answer,
            score=None if excluded else final.score,
            judge_reason=judge_reason(final),
            first_correct=first_correct,
            accepted=log.accepted,
            attempts=log.attempts,
            repair_hints=log.repair_hints,
            injection_kind=fault.candidate.kind if fault else None,
            fault_effective=effective,
            wall_time=time.monotonic() - started,
            joins=log.joins,
        )
        record = None
        if fault is not None:
            c = fault.candidate
            record = InjectionRecord(
                task_id=self.task.task_id,
                turn_id=turn.turn_id,
                kind=c.kind,
                variable=c.variable,
                alias=c.alias,
                read_version=c.read_version,
                pre_version=c.pre_version,
                revision_turn=c.revision_turn,
                node=c.node,
                after_revision=c.after_revision,
                faulty_code=c.faulty_code,
                predicted_effective=fault.predicted_effective,
                predicted_outcome=fault.predicted_outcome,
                candidates_total=fault.candidates_total,
                candidates_effective=fault.candidates_effective,
                fault_effective=effective,
            )
        return result, record

    def run(self) -> Iterator[tuple[TurnResult, InjectionRecord | None]]:
        """Replay every turn in order, randomness seeded as in the gold run."""
        seed_randomness(self.task, self.guard.tracked)
        for turn in self.task.turns:
            yield self.run_turn(turn)


def skipped_results(
    task: BenchTask, reason: str, turn_ids: set[int] | None = None
) -> list[TurnResult]:
    """Every turn (or those in ``turn_ids``) of a task recorded as skipped with ``reason``."""
    return [
        TurnResult(
            task_id=task.task_id,
            turn_id=t.turn_id,
            n_turns=len(task.turns),
            domain=task.domain,
            suite=task.suite,
            skipped=True,
            skipped_reason=reason,
            depends_on=t.depends_on,
        )
        for t in task.turns
        if turn_ids is None or t.turn_id in turn_ids
    ]
