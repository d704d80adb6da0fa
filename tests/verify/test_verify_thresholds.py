"""A threshold of the question compared with another column than the one it is about."""

from __future__ import annotations

import pytest
from steps import FakeEnv, ok

from stateguard.kernel import ProbeResult
from stateguard.verify import StepVerifier, VerifyTask
from stateguard.verify.thresholds import misattached, subjects

ARMY = {"army": ["regiment", "company", "deaths", "battles", "veterans", "deserters"]}
Q = "Select rows where df.deaths is greater than 500 or less than 50"


def test_subjects_follow_the_column_named_before_the_threshold_and_through_or() -> None:
    got = [(s.threshold.value, s.column) for s in subjects(Q, ARMY["army"])]
    assert got == [(500.0, "deaths"), (50.0, "deaths")]
    both = "teams with more than 6 goals and shots of more than 20"
    cols = ["Team", "Goals", "Shots"]
    # "more than 6 goals": the column comes after; "shots of more than 20": before
    assert [(s.threshold.value, s.column) for s in subjects(both, cols)] == [(20.0, "Shots")]


@pytest.mark.parametrize(
    "question",
    [
        "How many times did someone order more than one Canned Soda?",  # a value, not a column
        "Regiments with deaths recorded in the north of more than 500",  # too far from the column
        "Select rows with more than 500",  # no column at all
    ],
)
def test_no_subject_without_a_column_right_before(question: str) -> None:
    assert subjects(question, ARMY["army"]) == []


def test_a_threshold_on_another_column_is_found() -> None:
    (found,) = misattached(Q, "army[(army['deserters'] > 500) | (army['deaths'] < 50)]", ARMY)
    assert "500 on 'deaths'" in found and "'deserters'" in found


@pytest.mark.parametrize(
    "code",
    [
        "army[(army['deaths'] > 500) | (army['deaths'] < 50)]",  # the right one
        "army[(army.deaths > 500) | (army.deaths < 50)]",
        "army[army.battles > 3]",  # another number: another condition
        "army[(army['deaths'] > 500) & (army['deserters'] > 500)]",  # the subject is there too
    ],
)
def test_near_misses_are_not_misattached(code: str) -> None:
    assert misattached(Q, code, ARMY) == []


def test_the_rule_doubts_a_result_step() -> None:
    det = StepVerifier("deterministic")
    env = FakeEnv(lambda code: ProbeResult(status="ok", wall_time=0.0, value=ARMY))
    step = ok("army[(army['deserters'] > 500) | (army['deaths'] < 50)]", result="...")
    v = det.verify(VerifyTask(question=Q), [step.model_copy(update={"result": True})], env=env)
    assert v.score == 0.5 and v.evidence[0].check == "threshold_column", v.rationale
    assert det.verify(VerifyTask(question=Q), [step], env=env).score == 0.5


def test_a_threshold_counts_the_thing_the_code_names_after_its_number() -> None:
    from stateguard.verify.thresholds import counted_thresholds

    q = "How many times did someone order more than one Canned Soda?"
    code = "chipo[(chipo.item_name == 'Canned Soda') & (chipo.item_price > 1)]"
    found = counted_thresholds(q, code)
    assert [(t.value, thing) for t, thing in found] == [(1.0, "Canned Soda")]
    assert counted_thresholds(q, "chipo[chipo.item_price > 1]") == []  # names nothing
    assert counted_thresholds("Rows where price is more than 1", code) == []


def test_a_counted_threshold_on_a_fractional_column_is_a_doubt() -> None:
    from stateguard.verify.thresholds import counted_on_fractions

    cells: list[str] = []

    def probe(cell: str, timeout: float = 0) -> ProbeResult:
        cells.append(cell)
        return ProbeResult(status="ok", stdout='[["chipo", "item_price"]]\n', wall_time=0.0)

    q = "How many times did someone order more than one Canned Soda?"
    wrong = "chipo[(chipo.item_name == 'Canned Soda') & (chipo.item_price > 1)]"
    found = counted_on_fractions(probe, q, wrong)
    assert len(found) == 1 and "'item_price' is not a count" in found[0]
    assert "fractional_columns" in cells[0]
    right = "chipo[(chipo.item_name == 'Canned Soda') & (chipo.quantity > 1)]"
    assert counted_on_fractions(probe, q, right) == []  # the probe names item_price only
    assert counted_on_fractions(probe, q, "chipo[chipo.item_name == 'Canned Soda']") == []
    assert len(cells) == 2  # no comparison with the number: no probe
