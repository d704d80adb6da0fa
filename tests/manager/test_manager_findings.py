"""The manager's checks report `Finding` items: severity and basis by what they rest on,
the typed facts the hints render, and repairs decided as before severities existed."""

from __future__ import annotations

from stateguard.checks import Step
from stateguard.finding import Finding
from stateguard.hints import HintRenderer
from stateguard.kernel import ExecutionResult, ProbeResult
from stateguard.lineage import LineageGraph
from stateguard.llm import ScriptedModel
from stateguard.manager import Hint
from stateguard.manager import actions as A
from stateguard.manager.evidence import (
    grounding_steps,
    off_answer,
    output_requirements,
    refusal_key,
    refused_again,
    unsupported_claims,
)
from stateguard.manager.notes import EvidenceFacts, RepairNotice
from stateguard.manager.policies.base import Observation, PolicyContext
from stateguard.manager.policies.deterministic import DeterministicPolicy
from stateguard.manager.policies.hybrid import HybridPolicy
from stateguard.manager.repair_effects import repair_evidence
from stateguard.manager.verify import constraint_failures
from stateguard.state import AnalyticalState, Constraint


def _step(stdout: str) -> Step:
    execution = ExecutionResult(status="ok", stdout=stdout, wall_time=0.01)
    return Step(turn=0, step=1, code="print(1)", execution=execution)


def _ctx(steps: tuple[Step, ...]) -> PolicyContext:
    def no_probe(code: str) -> ProbeResult:
        raise AssertionError("deciding must not probe")

    def no_state(state_id: str) -> AnalyticalState:
        raise AssertionError("deciding must not load states")

    return PolicyContext(
        graph=LineageGraph(),
        probe=no_probe,
        committed=(),
        load_state=no_state,
        steps=steps,
        turn_steps=steps,
        pending_steps=(),
        question="What is the total?",
        answer="the total is 41.5",
        draft=None,
    )


OBS = Observation(event="review", turn=0, question="What is the total?", answer="41.5")


def test_decimal_places_read_from_the_question_are_a_doubt() -> None:
    (found,) = output_requirements("Round to two decimal places.", "3.14159")
    assert (found.severity, found.basis) == ("doubt", ("answer", "question"))
    facts = EvidenceFacts.of(found)
    assert (facts.template, facts.places, facts.numbers) == ("decimals", 2, ("3.14159",))


def test_an_answer_without_successful_code_is_an_alarm_on_the_answer() -> None:
    (found,) = unsupported_claims([], "the total is 42", "What is the total?")
    assert (found.severity, found.basis) == ("alarm", ("answer", "execution"))
    assert EvidenceFacts.of(found).template == "no_successful_code"
    (unprinted,) = unsupported_claims([_step("41")], "the total is 41.5", "What is the total?")
    assert unprinted.severity == "alarm" and EvidenceFacts.of(unprinted).ambiguous


def test_a_failing_constraint_is_an_alarm_on_the_data() -> None:
    def probe(code: str) -> ProbeResult:
        return ProbeResult(status="ok", result="False", value=False, wall_time=0.01)

    (found,) = constraint_failures([Constraint(text="no nulls", code="False")], probe)
    assert (found.severity, found.basis) == ("alarm", ("data",))
    assert EvidenceFacts.of(found).constraint == "no nulls"


def test_free_text_of_a_policy_is_a_doubt_on_the_answer() -> None:
    repair = A.Repair(
        analytical_evidence=("the margin ignores refunds",), suspected_variables=("m",)
    )
    (found,) = repair_evidence(repair)
    assert (found.check, found.severity, found.basis) == ("policy", "doubt", ("answer",))
    assert found.variables == ("m",)


def test_the_policies_repair_on_doubts_as_on_alarms() -> None:
    (doubt,) = output_requirements("Round to two decimal places.", "3.14159")
    (ambiguous,) = unsupported_claims([_step("41")], "the total is 41.5", "What is the total?")
    ctx = _ctx((_step("41"),))
    assert DeterministicPolicy().decide_evidence([doubt, ambiguous], OBS, ctx) == [doubt]
    silent = HybridPolicy(None)  # no judge: an ambiguous finding does not stand
    assert silent.decide_evidence([doubt, ambiguous], OBS, ctx) == [doubt]


def test_a_judged_finding_loses_its_ambiguity_and_keeps_the_reason() -> None:
    (ambiguous,) = unsupported_claims([_step("41")], "the total is 41.5", "What is the total?")
    model = ScriptedModel(lambda messages: '{"verdict": "unsupported", "reason": "not shown"}')
    (judged,) = HybridPolicy(model).decide_evidence([ambiguous], OBS, _ctx((_step("41"),)))
    facts = EvidenceFacts.of(judged)
    assert not facts.ambiguous and facts.detail == "not shown" and facts.numbers == ("41.5",)
    assert judged.severity == "alarm" and judged.message.endswith("(not shown)")


def test_a_repair_notice_survives_json_and_renders_the_same() -> None:
    stale = Finding(
        check="stale_use",
        severity="alarm",
        message="log line",
        basis=("lineage",),
        variables=("cost@v1",),
        facts=EvidenceFacts(
            template="stale_read",
            step=3,
            outdated="rate@v1",
            superseding=("rate@v2",),
            superseding_cell=2,
        ).as_facts(),
    )
    notice = RepairNotice(evidence=(stale,), checks=("stale_use",))
    again = RepairNotice.model_validate_json(notice.model_dump_json())
    assert again == notice and EvidenceFacts.of(again.evidence[0]).superseding == ("rate@v2",)
    render = HintRenderer().render
    assert render(Hint(kind="repair", notice=again)) == render(Hint(kind="repair", notice=notice))
    repair = A.Repair(analytical_evidence=("x",), evidence=(stale,))
    assert A.ACTION_ADAPTER.validate_python(repair.model_dump(mode="json")) == repair


def test_facts_of_another_shape_fall_back_to_the_message() -> None:
    other = Finding(
        check="audit_dropped_rows",
        severity="note",
        message="the merge dropped 1 row",
        basis=("data",),
        facts={"template": "no such template", "step": "three"},
    )
    assert EvidenceFacts.of(other) == EvidenceFacts()
    assert HintRenderer().finding(other) == "the merge dropped 1 row"


def test_an_answer_printed_before_a_repair_is_grounded_in_the_turn() -> None:
    before, after = _step("negative orders: 4"), _step("share: 50.04")
    question = "How many orders are negative?"
    (unprinted,) = unsupported_claims([after], "4", question)
    assert EvidenceFacts.of(unprinted).numbers == ("4",)
    assert unsupported_claims([after], "4", question, grounds=[before, after]) == []
    # the grounds widen what was printed, never narrow it: the reviewed steps still count
    assert unsupported_claims([after], "50.04", question, grounds=[before]) == []


def _revised(severity: str = "doubt") -> Finding:
    return Finding(
        check="revised_constant",
        severity=severity,  # type: ignore[arg-type]
        message="step 3 read cm@v1, computed with 0.42 before the revision",
        basis=("code", "lineage", "question"),
        variables=("cm@v1",),
    )


def test_an_answer_refused_in_this_turn_stays_refused_when_given_again() -> None:
    refused = {refusal_key("3.14159"): (_revised(),)}
    (again,) = refused_again("  3.14159 ", refused)
    assert (again.check, again.severity) == ("refused_again", "doubt")
    assert again.basis == ("code", "lineage", "question") and again.variables == ("cm@v1",)
    assert "computed with 0.42" in again.message
    assert refused_again("3.14", refused) == []
    # the same number in another form is the same answer; other numbers are not
    (form,) = refused_again("pi: 3.14159", refused)
    assert form.check == "refused_again"
    assert refused_again("pi: 3.14159, n: 2", refused) == []
    assert refused_again("no number", {refusal_key("nothing"): (_revised(),)}) == []
    (alarm,) = unsupported_claims([], "the total is 42", "What is the total?")
    (hard,) = refused_again(
        "The total is 42", {refusal_key("the total is 42"): (_revised(), alarm)}
    )
    assert (hard.severity, hard.basis) == ("alarm", alarm.basis)
    # what sees the answer again by itself, or yields once told, is not carried
    (places,) = output_requirements("Round to two decimal places.", "3.14159")
    assert refused_again("3.14159", {refusal_key("3.14159"): (places,)}) == []


def test_the_deterministic_policy_keeps_a_refusal_across_attempts() -> None:
    steps = (_step("41.537"),)
    ctx = _ctx(steps)
    ctx = PolicyContext(**{**ctx.__dict__, "refused": {refusal_key("41.537"): (_revised(),)}})
    obs = Observation(event="review", turn=0, question="What is the total?", answer="41.537")
    found = DeterministicPolicy().evidence(obs, ctx)
    assert [f.check for f in found] == ["refused_again"]
    fresh = PolicyContext(**{**ctx.__dict__, "refused": {}})
    assert DeterministicPolicy().evidence(obs, fresh) == []


def test_a_refusal_for_an_unprinted_number_does_not_stand_once_a_step_prints_it() -> None:
    # refused: "2025-01" while only 8685.36 was printed; then a step printed the month
    (unprinted,) = unsupported_claims([_step("8685.36")], "2025-01", "Which month?")
    refused = {refusal_key("2025-01"): (unprinted,)}
    obs = Observation(event="review", turn=0, question="Which month?", answer="2025-01")
    for printed, expected in (
        ("8685.36", ["unsupported_claim", "refused_again"]),
        (
            "Period('2025-01', 'M')",
            [],
        ),
    ):
        steps = (_step(printed),)
        ctx = PolicyContext(
            **{**_ctx(steps).__dict__, "refused": refused, "question": "Which month?"}
        )
        found = DeterministicPolicy().evidence(obs, ctx)
        assert [f.check for f in found] == expected, printed
    # another carried finding still stands when the number is printed
    steps = (_step("Period('2025-01', 'M')"),)
    ctx = PolicyContext(
        **{**_ctx(steps).__dict__, "refused": {refusal_key("2025-01"): (_revised(),)}}
    )
    assert [f.check for f in DeterministicPolicy().evidence(obs, ctx)] == ["refused_again"]


def _numbered(step: int, stdout: str) -> Step:
    execution = ExecutionResult(status="ok", stdout=stdout, wall_time=0.01)
    return Step(turn=0, step=step, code="print(1)", execution=execution)


def _own(step: int, variables: tuple[str, ...] = ()) -> Finding:
    return Finding(
        check="revised_constant",
        severity="doubt",
        message=f"step {step} computes with 0.09",
        basis=("code", "question"),
        variables=variables,
        facts=EvidenceFacts(step=step).as_facts(),
    )


def test_an_old_literal_in_a_step_the_answer_does_not_rest_on_does_not_stand() -> None:
    steps = [_numbered(1, "0.11266321811157885"), _numbered(2, "32")]
    grounds = grounding_steps(steps, "32 shipments", "How many shipments lost money?")
    assert grounds == {2}
    found = [_own(1), _own(2), _own(1, ("t['profit']@v1",))]
    kept = off_answer(found, grounds)
    # the exploration's own literal goes; the grounding step's, and a read through
    # lineage, stay
    assert kept == found[1:]
    # an answer no step shows (or with no number) keeps everything
    assert grounding_steps(steps, "41", "How many?") == set()
    assert grounding_steps(steps, "none", "How many?") == set()
    assert off_answer(found, set()) == found
    # a number the question writes is no ground
    assert grounding_steps(steps, "32", "Of 32 shipments, how many?") == set()


def test_a_month_in_the_answer_is_named_whole_when_it_was_not_shown() -> None:
    question = "Which month of 2025 had the heaviest load?"
    (unprinted,) = unsupported_claims([_step("total weight 8685.36")], "2025-01", question)
    assert "states 2025-01," in unprinted.message, unprinted.message
    assert EvidenceFacts.of(unprinted).numbers == ("2025-01",)
    daily = _step("day\n2025-01-14    310.5\n2025-02-03    12.0")
    assert unsupported_claims([daily], "2025-01", question) == []
    # shown as before: when each of its numbers is (the checks' verdicts do not change)
    assert unsupported_claims([_step("2025-03-01  4")], "2025-01", question) == []
    # a number beside the month is still checked on its own
    (found,) = unsupported_claims([daily], "2025-01 with 999.5 kg", question)
    assert "states 999.5," in found.message, found.message
    assert grounding_steps([_step("8685.36"), _numbered(2, "2025-01  310.5")], "2025-01", "?") == {
        2
    }
    # not a month: a thirteenth month, or a range of numbers
    (range_,) = unsupported_claims([_step("x")], "10-20", "How many?")
    assert "states 10, 20," in range_.message, range_.message
    (bad,) = unsupported_claims([_step("x")], "2025-13", "Which month?")
    assert "2025, 13" in bad.message, bad.message
