"""The one turn tally and the one set of run totals: the run summary and the report agree."""

from __future__ import annotations

from pathlib import Path

from stateguard.kernel import ExecutionResult
from stateguard.manager import Hint
from stateguard.report.run import TurnAnswer
from stateguard.worker.events import AnswerRecorded, HintDelivered, ModelMessage, StepRecord
from stateguard.worker.grading import Grade
from stateguard.worker.summary import RunSummary, RunTotals, TurnTally


def _turn_events(turn: int) -> list:
    ok = ExecutionResult(status="ok", stdout="3\n", wall_time=0.1)
    return [
        ModelMessage(turn=turn, step=0, role="user", content="q"),
        ModelMessage(
            turn=turn, step=0, role="assistant", content="a", prompt_tokens=10, completion_tokens=4
        ),
        StepRecord(turn=turn, step=0, code="print(3)", execution=ok),
        StepRecord(turn=turn, step=1, problem="no_code"),
        StepRecord(turn=turn, step=2, problem="repeated_cell"),
        HintDelivered(turn=turn, hint=Hint(kind="state", text="s")),
        HintDelivered(turn=turn, hint=Hint(kind="repair", text="r")),
        StepRecord(turn=turn, step=3, answer="3"),
        ModelMessage(
            turn=turn, step=3, role="assistant", content="b", prompt_tokens=20, completion_tokens=6
        ),
        StepRecord(turn=turn, step=4, answer="3 rows"),
    ]


def test_the_tally_of_a_turn() -> None:
    tally = TurnTally.of(_turn_events(1))
    counts = (tally.cells, tally.invalid, tally.repeated, tally.hints, tally.repairs)
    assert counts == (1, 1, 1, 1, 1)
    assert (tally.proposed, tally.replies, tally.tokens) == (2, 2, 40)
    final = AnswerRecorded(turn=1, answer="3 rows", steps=5, wall_time=2.0, manager_llm_calls=1)
    outcome = tally.outcome("How many?", "", final, Grade(correct=True))
    assert outcome.rejected_answers == 1 and outcome.tokens == 40


def test_run_totals_are_the_same_from_the_summary_and_from_the_report() -> None:
    outcomes = []
    for turn, correct, answer in ((1, True, "3 rows"), (2, None, None), (3, False, "4")):
        tally = TurnTally.of(_turn_events(turn))
        final = AnswerRecorded(
            turn=turn, answer=answer, steps=5, wall_time=1.5, manager_llm_calls=turn
        )
        outcomes.append(tally.outcome("q", "", final, Grade(correct=correct)))
    summary = RunSummary(task="t", manager="m", model="x", run_dir=Path("r"), turns=outcomes)
    totals = summary.totals
    assert totals == RunTotals(
        turns=3,
        answered=2,
        graded=2,
        correct=1,
        hints=3,
        repairs=3,
        manager_llm_calls=6,
        tokens=120,
        wall_time=4.5,
    )
    assert totals.accuracy == 0.5 and (summary.graded, summary.correct) == (2, 1)
    report_view = [
        TurnAnswer(
            answer=o.answer,
            correct=o.correct,
            hints=o.hints,
            repairs=o.repairs,
            wall_time=o.wall_time,
            tokens=o.tokens,
            manager_llm_calls=o.manager_llm_calls,
        )
        for o in outcomes
    ]
    assert RunTotals.of(report_view) == totals


def test_unknown_counts_stay_unknown() -> None:
    totals = RunTotals.of([TurnAnswer(), TurnAnswer(answer="x", correct=True, hints=2)])
    assert (totals.turns, totals.answered, totals.graded, totals.correct) == (2, 1, 1, 1)
    assert (totals.hints, totals.repairs, totals.tokens, totals.wall_time) == (2, None, None, None)
    assert RunTotals.of([]).accuracy is None
