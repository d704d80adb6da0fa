"""The LLM policy driven by a scripted model: valid actions, malformed JSON, illegal actions."""

from __future__ import annotations

from fake_workspace import FakeWorkspace

from stateguard.checks import Step
from stateguard.llm import ScriptedModel
from stateguard.manager.harness import StateHarness
from stateguard.manager.policies.llm import LLMPolicy, parse_action
from stateguard.state import StateStore


def harness(replies: list[str]) -> tuple[StateHarness, ScriptedModel, LLMPolicy]:
    model = ScriptedModel(replies)
    policy = LLMPolicy(model)
    return StateHarness(policy, FakeWorkspace(), StateStore(":memory:")), model, policy


def test_valid_protocol_commits_a_state() -> None:
    h, model, policy = harness(
        [
            '{"kind": "OPEN_STATE", "issue": "total revenue by region"}',
            '{"kind": "UPDATE_STATE", "conclusions": ["north leads"]}',
            '```json\n{"kind": "FINALIZE_RELATIONS"}\n```',
            'Everything checks out. {"kind": "COMMIT_STATE"}',
        ]
    )
    h.begin_turn(0, "Which region has the most revenue?")
    review = h.review_answer(Step(turn=0, step=0, answer="north"))
    assert review.accepted
    [state] = h.store.committed()
    assert state.issue == "total revenue by region" and state.conclusions == ("north leads",)
    assert policy.llm_calls == 4
    # the model saw the protocol and the observation, never a ground truth
    first = model.requests[0].messages
    assert "not the solver" in first[0].content and "Observation" in first[1].content


def test_malformed_json_gets_corrective_message_then_abstains() -> None:
    h, model, policy = harness(["not json at all", '{"kind": "FLY"}', "{broken"])
    h.begin_turn(0, "q")
    assert policy.invalid_replies == 3
    assert h.draft is None
    corrective = model.requests[1].messages[-1].content
    assert "not one valid action" in corrective and "OPEN_STATE" in corrective
    assert any(
        e.type == "control" and e.data["action"]["kind"] == "ABSTAIN" for e in h.drain_events()
    )


def test_illegal_action_is_reported_back_to_the_model() -> None:
    h, model, _ = harness(
        [
            '{"kind": "COMMIT_STATE"}',
            '{"kind": "OPEN_STATE", "issue": "q"}',
        ]
    )
    h.begin_turn(0, "q")
    assert h.draft is not None
    fed_back = model.requests[1].messages[-1].content
    assert "COMMIT_STATE is illegal" in fed_back


def test_parse_action_rejects_unknown_fields() -> None:
    import pytest

    with pytest.raises(ValueError):
        parse_action('{"kind": "COMMIT_STATE", "answer": 42}')
