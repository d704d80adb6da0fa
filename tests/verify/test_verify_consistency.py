"""Question/code consistency rules and the new mutation kinds (no kernel, no model)."""

from __future__ import annotations

import pytest
from steps import FakeEnv, answer, ok

from stateguard.kernel import ProbeResult
from stateguard.verify import StepVerifier, VerifyTask
from stateguard.verify.consistency import contradictions, ignored_names, thresholds
from stateguard.verify.mutants import sort_order, wrong_aggregate, wrong_column

DET = StepVerifier("deterministic")


def test_thresholds_of_a_question() -> None:
    q = "Rows with deaths greater than 500 or less than 50, and 3 or more wins over 20%"
    assert sorted(thresholds(q)) == [
        (3.0, "up", False),
        (20.0, "up", True),
        (50.0, "down", False),
        (500.0, "up", False),
    ]
    assert thresholds("How many orders with more than one item?") == [(1.0, "up", False)]


@pytest.mark.parametrize(
    ("question", "code", "found"),
    [
        ("Filter teams that scored more than 6 goals.", "df[df.Goals <= 6]", "more than 6"),
        ("Filter teams that scored more than 6 goals.", "df[~(df.Goals > 6)]", "negated"),
        ("Filter teams that scored more than 6 goals.", "df[6 >= df.Goals]", "more than 6"),
        ("Filter teams that scored more than 6 goals.", "df.query('Goals < 6')", "more than 6"),
        ("Who is younger than 30?", "df[df.age >= 30]", "less than 30"),
        (
            "How many times was a Veggie Salad Bowl ordered?",
            "c[c.item != 'Veggie Salad Bowl']",
            "excludes it",
        ),
        (
            'Select the regiments not named "Dragoons"',
            "a[a.regiment == 'Dragoons']",
            "excludes 'Dragoons'",
        ),
    ],
)
def test_a_comparison_against_the_question_is_found(question: str, code: str, found: str) -> None:
    (msg,) = contradictions(question, code)
    assert found in msg


@pytest.mark.parametrize(
    ("question", "code"),
    [
        ("Filter teams that scored more than 6 goals.", "df[df.Goals > 6]"),
        ("Filter teams that scored more than 6 goals.", "df[~(df.Goals <= 6)]"),
        ("Rows with deaths greater than 500 or less than 50", "a[(a.d > 500) | (a.d < 50)]"),
        ('Select the regiments not named "Dragoons"', "a[a.regiment != 'Dragoons']"),
        ("How many times was a Veggie Salad Bowl ordered?", "c[c.item == 'Veggie Salad Bowl']"),
        ("What share of orders is above the mean?", "df[df.x < 6]"),  # no number asked
    ],
)
def test_a_comparison_that_agrees_with_the_question_is_not(question: str, code: str) -> None:
    assert contradictions(question, code) == []


def test_the_contradiction_rule_scores_a_cell_zero_and_needs_a_cell_that_ran() -> None:
    task = VerifyTask(question="Filter teams that scored more than 6 goals.")
    v = DET.verify(task, [ok("df[df.Goals <= 6]", result="...")])
    assert v.score == 0.0 and v.evidence[-1].rule == "question_contradiction"
    assert DET.verify(task, [ok("df[df.Goals > 6]", result="...")]).score == 1.0


def test_ignored_names_from_the_question_and_from_the_data() -> None:
    q = 'Mean Goals of teams with more than 6 wins named "Spain" from England, Italy'
    env = FakeEnv(
        lambda code: ProbeResult(
            status="ok",
            wall_time=0.0,
            value=[["column", "Goals"], ["value", "England"], ["value", "Italy"]],
        )
    )
    missed = ignored_names(q, "df[df.Team.isin(['England'])].goals.mean()", env)
    assert missed == [
        "the threshold more than 6",
        "the value 'Spain'",
        "the value 'Italy' of the data",
    ]
    assert "Mean Goals" in env.codes[0]  # the probe is given the question
    assert (
        ignored_names(
            q, "df[(df.W > 6) & df.Team.isin(['England', 'Italy', 'Spain'])]['Goals'].mean()", env
        )
        == []
    )


def test_a_result_step_ignoring_the_question_is_doubtful_not_wrong() -> None:
    task = VerifyTask(question="Filter teams that scored more than 6 goals.")
    step = ok("euro12", result="Team Goals\n...")
    doubtful = step.model_copy(update={"result": True})
    v = DET.verify(task, [doubtful])
    assert v.score == 0.5 and "threshold more than 6" in v.rationale
    assert DET.verify(task, [step]).score == 1.0  # an intermediate step may prepare data
    assert DET.verify(task, [step, answer("All the teams")]).score == 0.5  # the answer too


def test_wrong_column_replaces_one_column_reference_at_a_time() -> None:
    out = wrong_column("df['a'].sum() + df.b.mean()", ["a", "b", "c"])
    assert out == [
        "df['b'].sum() + df.b.mean()",
        "df['a'].sum() + df.c.mean()",
        "df['c'].sum() + df.b.mean()",
        "df['a'].sum() + df.a.mean()",
    ]
    assert wrong_column("df['a'].sum()", ["a"]) == []
    assert wrong_column("x.sum()", ["a", "b"]) == []


def test_wrong_aggregate_and_sort_order() -> None:
    assert wrong_aggregate("s.max() - s.idxmin()") == [
        "s.min() - s.idxmin()",
        "s.max() - s.idxmax()",
    ]
    assert sort_order("df.sort_values('x')") == ["df.sort_values('x', ascending=False)"]
    assert sort_order("df.sort_values('x', ascending=False)") == [
        "df.sort_values('x', ascending=True)"
    ]
    assert sort_order("df.head()") == [] and wrong_aggregate("df.head()") == []
