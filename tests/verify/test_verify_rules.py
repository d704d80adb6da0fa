"""Each deterministic rule of the verifier, on recorded steps (no kernel, no model)."""

from __future__ import annotations

import pytest
from steps import FakeEnv, answer, failed, ok, stale_cell

from stateguard.audit import JOIN_MIME, JoinCellReport, JoinDiagnostic, JoinRecord
from stateguard.audit.diagnostics import FrameRef
from stateguard.checks import Step
from stateguard.kernel import ProbeResult
from stateguard.lineage import CellRecord
from stateguard.verify import StepVerifier, VerifyError, VerifyTask

TASK = VerifyTask(question="What is the total revenue of 2024?")
DET = StepVerifier("deterministic")


def score(steps: list[Step], index: int | None = None, env=None) -> tuple[float | None, str]:
    v = DET.verify(TASK, steps, index, env)
    return v.score, v.rationale


def test_a_clean_step_scores_one() -> None:
    assert score([ok("x = 1")]) == (1.0, "no rule found a problem")


@pytest.mark.parametrize("ename", ["KeyError", "NameError", "AttributeError"])
def test_a_grounding_error_corrected_later_scores_half(ename: str) -> None:
    steps = [failed("df['Revnue']", ename, "'Revnue'"), ok("df['Revenue'].sum()", result="42")]
    s, why = score(steps, 0)
    assert s == 0.5 and "corrected by step 1" in why


def test_a_grounding_error_never_corrected_before_the_answer_scores_zero() -> None:
    steps = [failed("df['Revnue']", "KeyError", "'Revnue'"), answer("42")]
    assert score(steps, 0)[0] == 0.0


def test_a_grounding_error_at_the_frontier_is_correctable() -> None:
    assert score([failed("df['Revnue']", "KeyError", "'Revnue'")])[0] == 0.5


@pytest.mark.parametrize(
    ("ename", "status"),
    [
        ("TypeError", "error"),
        ("ZeroDivisionError", "error"),
        ("TimeoutError", "timeout"),
        ("KernelDied", "dead"),
    ],
)
def test_other_errors_are_fatal(ename: str, status: str) -> None:
    steps = [failed("x", ename, "boom", status=status), ok("y = 1")]
    s, why = score(steps, 0)
    assert s == 0.0 and ename in why


def test_an_empty_shown_result_where_the_step_states_a_finding_scores_zero() -> None:
    step = ok("df[df.year > 2030]", result="Empty DataFrame\nColumns: [a]\nIndex: []")
    s, why = score([step])
    assert s == 0.0 and "empty" in why


def test_an_all_nan_live_value_found_by_probe_scores_zero() -> None:
    env = FakeEnv(lambda code: ProbeResult(status="ok", value={"avg": "all_nan"}, wall_time=0.0))
    cell = CellRecord(cell=0, source="avg = df.x.mean()", created=("avg@v1",))
    step = ok("avg = df.x.mean()", thought="The average is computed", cell=cell)
    s, why = score([step], env=env)
    assert s == 0.0 and "avg is all NaN" in why
    assert "['avg']" in env.codes[0]


def test_an_empty_value_the_step_does_not_report_is_only_a_fact() -> None:
    env = FakeEnv(lambda code: ProbeResult(status="ok", value={"tmp": "empty"}, wall_time=0.0))
    cell = CellRecord(cell=0, source="tmp = []", created=("tmp@v1",))
    v = DET.verify(TASK, [ok("tmp = []", cell=cell)], env=env)
    assert v.score == 1.0
    assert [e.settles for e in v.evidence] == [False]


def test_a_stale_read_scores_zero_and_names_the_superseding_write() -> None:
    cell = stale_cell("print(cost)", "cost", "rate", cell=4, superseding_cell=3)
    s, text = score([ok("print(cost)", stdout="4.0", cell=cell)])
    assert s == 0.0 and "superseded by rate@v2 in cell 3" in text


def test_a_stale_read_that_only_recomputes_the_value_is_not_penalized() -> None:
    cell = stale_cell("cost = cost * 1", "cost", "rate", cell=4, superseding_cell=3, refresh=True)
    assert score([ok("cost = cost * 1", cell=cell)])[0] == 1.0


def _join(kind: str, severity: str, how_stated: bool | None = None) -> list[dict]:
    rec = JoinRecord(
        operation="merge",
        how="inner",
        how_stated=how_stated,
        inputs=(
            FrameRef(names=("a",), rows=5, columns=2),
            FrameRef(names=("b",), rows=5, columns=2),
        ),
        output_rows=3,
        diagnostics=(JoinDiagnostic(kind=kind, severity=severity, message=f"{kind} happened"),),
    )
    return [{"mime": JOIN_MIME, "data": JoinCellReport(records=(rec,)).model_dump(mode="json")}]


def test_an_unkeyed_merge_scores_zero() -> None:
    step = ok("m = a.merge(b, how='cross')", private=_join("cross_product", "error"))
    assert score([step]) == (0.0, "cross_product happened")


def test_rows_lost_to_an_inner_join_are_weighed_by_the_question() -> None:
    # the manager's line (`stateguard.audit.joinpolicy`): a question that names no choice
    # makes the loss a note, written how='inner' or pandas' default
    stated = ok("m = a.merge(b, how='inner')", private=_join("dropped_rows", "warning", True))
    unstated = ok("m = a.merge(b)", private=_join("dropped_rows", "warning", False))
    assert score([stated])[0] == 0.5 and score([unstated])[0] == 0.5
    # a question that asks to keep unmatched rows makes any loss the join guard's alarm;
    # the verifier doubts a loss that only the question's English condemns (how='inner'
    # written) and scores 0 the one the code condemns by itself (pandas' unasked default)
    keep = VerifyTask(question="Merge a with b, keeping all rows of a. What is the total?")
    v = DET.verify(keep, [stated])
    assert v.score == 0.5 and "the question asks to keep unmatched rows" in v.rationale
    assert v.evidence[0].from_question and not v.evidence[0].settles
    v = DET.verify(keep, [unstated])
    assert v.score == 0.0 and "the question asks to keep unmatched rows" in v.rationale
    # with no question to read, the code alone decides: pandas' default is an alarm
    blank = VerifyTask(question="")
    assert DET.verify(blank, [stated]).score == 0.5
    v = DET.verify(blank, [unstated])
    assert v.score == 0.0 and "default inner join" in v.rationale


def test_a_number_in_the_answer_no_execution_printed_scores_zero() -> None:
    steps = [ok("df.rev.sum()", result="1200.5"), answer("The total is 1300.")]
    s, why = score(steps)
    assert s == 0.0 and "1300" in why


def test_an_answer_with_printed_numbers_scores_one() -> None:
    steps = [ok("df.rev.sum()", result="1200.5"), answer("The total is 1200.5.")]
    assert score(steps)[0] == 1.0


def test_the_final_step_without_an_answer_scores_zero() -> None:
    step = ok("x = 1").model_copy(update={"final": True})
    assert score([step]) == (0.0, "the final step gives no answer")


def test_the_lowest_decisive_score_wins() -> None:
    cell = stale_cell("m = c.merge(b)", "c", "r", cell=2, superseding_cell=1)
    step = ok("m = c.merge(b)", private=_join("dropped_rows", "warning"), cell=cell)
    v = DET.verify(TASK, [step])
    assert v.score == 0.0 and {e.check for e in v.evidence} == {"stale_read", "audit_dropped_rows"}


def test_the_execution_baseline_only_sees_success() -> None:
    base = StepVerifier("execution")
    assert base.verify(TASK, [ok("x", result="Empty DataFrame")]).score == 1.0
    assert base.verify(TASK, [failed("x", "KeyError")]).score == 0.0


def test_misuse_is_a_typed_error() -> None:
    with pytest.raises(VerifyError, match="out of range"):
        DET.verify(TASK, [ok("x = 1")], 3)
    with pytest.raises(VerifyError, match="needs a model"):
        StepVerifier("hybrid")
    with pytest.raises(VerifyError, match="unknown verifier mode"):
        StepVerifier("oracle")  # type: ignore[arg-type]


def test_an_answer_that_breaks_the_decimal_requirement_is_doubted() -> None:
    task = VerifyTask(question="What is the mean price, rounded to 2 decimal places?")
    steps = [ok("df.price.mean()", result="3.14159"), answer("3.14159")]
    v = DET.verify(task, steps)
    assert v.score == 0.5 and v.evidence[0].check == "output_requirement"
    assert (
        DET.verify(task, [ok("round(df.price.mean(), 2)", result="3.14"), answer("3.14")]).score
        == 1.0
    )


def test_a_shown_unrounded_value_is_only_a_fact() -> None:
    task = VerifyTask(question="What is the mean price, rounded to 2 decimal places?")
    v = DET.verify(task, [ok("df.price.mean()", result="3.14159")])
    assert v.score == 1.0 and [e.settles for e in v.evidence] == [False]


def test_an_unrounded_result_step_is_doubted_and_a_rounded_one_is_not() -> None:
    task = VerifyTask(question="What is the mean age of users? (rounded to integer)")
    result = ok("users.age.mean()", result="34.05").model_copy(update={"result": True})
    v = DET.verify(task, [result])
    assert v.score == 0.5 and "a whole number" in v.rationale
    rounded = ok("round(users.age.mean())", result="34").model_copy(update={"result": True})
    assert DET.verify(task, [rounded]).score == 1.0
    # printed raw values beside a rounded result are only a fact
    printed = rounded.model_copy(
        update={"execution": rounded.execution.model_copy(update={"stdout": "34.05\n"})}
    )
    v = DET.verify(task, [printed])
    assert v.score == 1.0 and [e.settles for e in v.evidence] == [False]


def test_a_series_printed_after_the_label_of_a_single_value_scores_half() -> None:
    series = "total: 0    33137.10\n1    32238.12\n2    13760.91\ndtype: float64"
    s, why = score([ok("print(f'total: {t}')", stdout=series)])
    assert s == 0.5 and "whole Series of 3 values" in why
    # near miss: the same print where the question asks for a table
    table = VerifyTask(question="Show the revenue of each region.")
    v = DET.verify(table, [ok("print(f'total: {t}')", stdout=series)])
    assert v.score == 1.0


def test_a_stored_table_shown_as_it_was_for_rows_under_a_condition_is_a_doubt() -> None:
    from stateguard.verify.consistency import row_condition

    assert row_condition("Select rows of the teams that start with G") == "rows of the teams that"
    assert row_condition("Show all rows") is None
    task = VerifyTask(question="Select rows of the teams that start with G")
    earlier = ok("euro12 = pd.read_csv('e.csv')")
    earlier = earlier.model_copy(update={"result": True})  # the previous turn's result
    shown = ok("(euro12)", result="      Team …").model_copy(update={"result": True})
    v = StepVerifier("deterministic").verify(task, [earlier, shown])
    assert v.score == 0.5 and v.evidence[0].check == "unfiltered_rows", v.rationale
    # near misses: the turn wrote the table before showing it; no condition asked
    kept = ok("euro12 = euro12[euro12.Team.str.startswith('G')]")
    v = StepVerifier("deterministic").verify(task, [earlier, kept, shown])
    assert v.score == 1.0, v.rationale
    dropped = ok("euro12.drop(columns='x', inplace=True)")
    assert StepVerifier("deterministic").verify(task, [earlier, dropped, shown]).score == 1.0
    plain = VerifyTask(question="Show the table")
    assert StepVerifier("deterministic").verify(plain, [earlier, shown]).score == 1.0
