"""One `Finding` type and one registry: severity that follows evidence."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from stateguard.checks import CheckError, CheckRegistry, Finding
from stateguard.verify.rules import CHECKS as VERIFY_CHECKS
from stateguard.verify.rules import RULES
from stateguard.worker.doubts import CHECKS as WORKER_CHECKS
from stateguard.worker.doubts import FAILURES


def test_an_alarm_resting_on_the_questions_english_is_refused() -> None:
    with pytest.raises(ValidationError, match="question's English"):
        Finding(check="threshold", severity="alarm", message="x", basis=("question", "code"))


def test_an_alarm_on_the_question_stands_with_a_corroboration_from_the_data() -> None:
    f = Finding(
        check="threshold",
        severity="alarm",
        message="keeps >= 10 where the question asks for less than 10",
        basis=("question", "code", "data"),
        corroboration="the result has 3 rows under the question's reading, 7 under the code's",
    )
    assert f.settles and f.score == 0.0 and f.from_question


def test_code_data_and_execution_may_raise_an_alarm() -> None:
    for basis in (("code",), ("data",), ("execution",), ("lineage",), ("answer", "execution")):
        f = Finding(check="c", severity="alarm", message="m", basis=basis)  # type: ignore[arg-type]
        assert f.settles and f.score == 0.0


def test_a_finding_needs_a_basis() -> None:
    with pytest.raises(ValidationError, match="no basis"):
        Finding(check="c", severity="note", message="m", basis=())


def test_severity_maps_to_scores_and_demotes_one_step() -> None:
    doubt = Finding(check="c", severity="doubt", message="m", basis=("question",))
    assert doubt.score == 0.5 and not doubt.settles
    assert doubt.model_copy(update={"firm": True}).settles
    note = doubt.demoted()
    assert note.severity == "note" and note.score is None and not note.settles
    alarm = Finding(check="c", severity="alarm", message="m", basis=("code",))
    assert alarm.demoted().severity == "doubt"


def test_a_check_may_not_claim_evidence_it_did_not_declare() -> None:
    reg: CheckRegistry[str] = CheckRegistry("t")

    @reg.check(basis=("code",))
    def honest(ctx: str) -> list[Finding]:
        return [Finding(check="honest", severity="alarm", message=ctx, basis=("code",))]

    @reg.check(basis=("code",))
    def overreach(ctx: str) -> list[Finding]:
        return [Finding(check="overreach", severity="doubt", message=ctx, basis=("data",))]

    assert [f.check for f in reg.run("x", (honest,))] == ["honest"]
    with pytest.raises(CheckError, match="outside its declared basis"):
        reg.run("x")


def test_the_registry_refuses_duplicates_and_unknown_names() -> None:
    reg: CheckRegistry[int] = CheckRegistry("t")

    @reg.check(basis=("code",))
    def a(ctx: int) -> list[Finding]:
        return []

    with pytest.raises(CheckError, match="already registered"):
        reg.check(basis=("code",), name="a")(lambda ctx: [])
    with pytest.raises(CheckError, match="no check 'b'"):
        reg.select(["b"])
    assert [c.name for c in reg.select(["a"])] == ["a"] and len(reg) == 1


def test_every_verifier_rule_is_a_registered_check() -> None:
    assert {c.name for c in RULES} == {c.name for c in VERIFY_CHECKS}
    # the checks that read the question declare it, so none of them can raise an alarm
    reads_question = {c.name for c in VERIFY_CHECKS if "question" in c.basis}
    assert {"question_contradiction", "question_column", "threshold_column"} <= reads_question
    assert not {"stale_read", "absent_filter", "execution_error"} & reads_question


def test_every_worker_check_has_a_name_in_the_attempt_log() -> None:
    assert {c.name for c in WORKER_CHECKS} == set(FAILURES)
