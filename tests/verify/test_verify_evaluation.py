"""Accuracy metrics, Best-of-N selection rates and the exploration-error planter."""

from __future__ import annotations

import pytest

from stateguard.verify import StepVerdict
from stateguard.verify.evaluation import metrics, selection
from stateguard.verify.labelling import LabelledStep, misspell_key


def _v(score: float | None) -> StepVerdict:
    if score is None:
        return StepVerdict(invalid="model_error", rationale="-", layer="llm")
    return StepVerdict(score=score, rationale="-", layer="deterministic")


def _step(
    turn: int, label: float, score: float | None, output: str = "", kind: str = "x"
) -> LabelledStep:
    return LabelledStep(
        session="s",
        turn=turn,
        label=label,
        kind=kind,
        code="c",
        output=output,
        verdicts={"v": _v(score)},
    )


def test_metrics_count_recall_false_zeros_accuracy_and_invalid() -> None:
    steps = [
        _step(1, 1.0, 1.0),
        _step(1, 1.0, 0.0),
        _step(1, 0.0, 0.0),
        _step(1, 0.0, 1.0),
        _step(1, 0.0, None),
        _step(1, 0.5, 0.5),
    ]
    m = metrics(steps, "v")
    assert m.silent_error_recall == 1 / 3
    assert m.false_zero_rate == 1 / 2
    assert m.accuracy == 3 / 6
    assert m.invalid == 1
    assert m.confusion["0"] == {"0": 1, "0.5": 0, "1": 1, "invalid": 1}


def test_selection_counts_only_turns_with_enough_variants() -> None:
    # turn 1: the verifier scores the reference 1 and the 3 variants 0
    steps = [_step(1, 1.0, 1.0, "ok")] + [_step(1, 0.0, 0.0, "bad") for _ in range(3)]
    # turn 2: only 2 variants, too few for N = 4
    steps += [_step(2, 1.0, 1.0, "ok")] + [_step(2, 0.0, 0.0, "bad") for _ in range(2)]
    (four, eight) = selection(steps, ["v"], sizes=(4, 8))
    assert (four.turns, eight.turns) == (1, 0)
    assert four.picked_correct["v"] == 1.0
    assert four.picked_correct["majority"] == 0.0  # the wrong output is the majority
    assert eight.picked_correct["v"] is None


def test_a_verifier_that_scores_everything_one_picks_at_random() -> None:
    steps = []
    for turn in range(200):
        steps += [_step(turn, 1.0, 1.0, "ok")] + [_step(turn, 0.0, 1.0, f"b{i}") for i in range(3)]
    (four,) = selection(steps, ["v"], sizes=(4,))
    assert four.picked_correct["v"] == four.picked_correct["random"] == 0.25


def test_ties_count_as_the_chance_of_the_tie_break() -> None:
    # the verifier ties the reference with one of 3 variants (scores 1, 1, 0, 0): chance 1/2;
    # outputs: the reference's is unique, two variants share one: majority never picks it
    steps = [
        _step(1, 1.0, 1.0, "ok"),
        _step(1, 0.0, 1.0, "b"),
        _step(1, 0.0, 0.0, "b"),
        _step(1, 0.0, 0.0, "c"),
    ]
    (four,) = selection(steps, ["v"], sizes=(4,))
    assert four.picked_correct == {"v": 0.5, "majority": 0.0, "random": 0.25}
    assert four.outranked == {"v": 0.0}  # a tie, not a wrong step above the reference


def test_outranked_counts_pools_where_a_wrong_step_scores_above_the_reference() -> None:
    steps = [_step(1, 1.0, 0.5, "ok")] + [_step(1, 0.0, s, f"b{s}") for s in (1.0, 0.0, 0.0)]
    steps += [_step(2, 1.0, 1.0, "ok")] + [_step(2, 0.0, 0.5, f"c{i}") for i in range(3)]
    (four,) = selection(steps, ["v"], sizes=(4,))
    assert four.picked_correct["v"] == 0.5 and four.outranked == {"v": 0.5}


def test_misspell_key_plants_a_missing_column() -> None:
    assert misspell_key("df['price'].mean()") == "df['price_x'].mean()"
    assert misspell_key("x = 1") is None
    assert misspell_key("df[") is None


def test_same_turns_compares_every_n_on_the_turns_of_the_largest() -> None:
    steps = [_step(1, 1.0, 1.0, "ok")] + [_step(1, 0.0, 0.0, f"b{i}") for i in range(7)]
    steps += [_step(2, 1.0, 1.0, "ok")] + [_step(2, 0.0, 1.0, f"c{i}") for i in range(3)]
    four, eight = selection(steps, ["v"], sizes=(4, 8))
    assert (four.turns, eight.turns) == (2, 1)
    four, eight = selection(steps, ["v"], sizes=(4, 8), same_turns=True)
    assert (four.turns, eight.turns) == (1, 1)
    assert four.picked_correct["v"] == pytest.approx(1.0) == eight.picked_correct["v"]


def test_a_chained_selector_breaks_the_first_verifiers_ties_by_the_next() -> None:
    def step(label: float, a: float, b: float | None, out: str) -> LabelledStep:
        return _step(1, label, a, out).model_copy(update={"verdicts": {"a": _v(a), "b": _v(b)}})

    # a ties the reference with one variant; b prefers the reference but also rates a
    # variant that a scored 0 above it: alone b is fooled, chained after a it is not
    steps = [
        step(1.0, 1.0, 0.5, "ok"),
        step(0.0, 1.0, 0.0, "w1"),
        step(0.0, 0.0, 1.0, "w2"),
        step(0.0, 0.0, None, "w3"),
    ]
    (four,) = selection(steps, ["a", "b", "a>b", "b>a"], sizes=(4,))
    assert four.picked_correct["a"] == 0.5
    assert four.picked_correct["b"] == 0.0 and four.outranked["b"] == 1.0
    assert four.picked_correct["a>b"] == 1.0 and four.outranked["a>b"] == 0.0
    assert four.picked_correct["b>a"] == 0.0


def test_ties_in_score_are_broken_by_the_findings_against_each_step() -> None:
    from stateguard.checks import Finding

    def doubted(turn: int, label: float, n: int, output: str) -> LabelledStep:
        found = tuple(
            Finding(check=f"c{i}", severity="doubt", message="m", basis=("question",))
            for i in range(n)
        )
        note = Finding(check="n", severity="note", message="m", basis=("data",))
        verdict = StepVerdict(
            score=0.5, rationale="-", layer="deterministic", evidence=(*found, note, note)
        )
        return _step(turn, label, 0.5, output).model_copy(update={"verdicts": {"v": verdict}})

    steps = [doubted(1, 1.0, 1, "ok"), *(doubted(1, 0.0, 2, f"b{i}") for i in range(3))]
    assert steps[0].verdicts["v"].against == 1  # notes do not count
    (four,) = selection(steps, ["v"], sizes=(4,))
    assert four.picked_correct["v"] == 1.0
    # the reference with more doubts than a wrong step: outranked
    steps[0] = doubted(1, 1.0, 3, "ok")
    (four,) = selection(steps, ["v"], sizes=(4,))
    assert four.picked_correct["v"] == 0.0 and four.outranked == {"v": 1.0}
