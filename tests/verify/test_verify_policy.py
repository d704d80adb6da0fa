"""`ModelPolicy`: candidates sampled from a scripted policy model, parsed like the worker's."""

from __future__ import annotations

from steps import ok

from stateguard.llm import ScriptedModel
from stateguard.verify import VerifyTask
from stateguard.verify.search import ModelPolicy, Proposal

TASK = VerifyTask(question="What is the mean price?", context="Prices are in EUR.")


def test_candidates_are_sampled_and_parsed() -> None:
    model = ScriptedModel(["Load.\n```python\nx = 1\n```", "<answer>3.5</answer>"], name="policy")
    props = ModelPolicy(model, temperature=0.9).propose(TASK, [ok("df = 1", stdout="")], 2)
    assert props == [Proposal(thought="Load.", code="x = 1"), Proposal(answer="3.5")]
    assert {r.temperature for r in model.requests} == {0.9}


def test_the_conversation_replays_the_steps_so_far() -> None:
    model = ScriptedModel(["<answer>2</answer>"])
    ModelPolicy(model).propose(TASK, [ok("print(2)", stdout="2", thought="Count.")], 1)
    roles = [m.role for m in model.requests[0].messages]
    assert roles == ["system", "user", "assistant", "user"]
    assert "Prices are in EUR." in model.requests[0].messages[1].content
    assert "```python\nprint(2)\n```" in model.requests[0].messages[2].content


def test_an_invalid_reply_is_resampled_then_given_up() -> None:
    model = ScriptedModel(["no code here", "still none", "nothing"])
    (prop,) = ModelPolicy(model, retries=2).propose(TASK, [], 1)
    assert prop.code == "pass" and len(model.requests) == 3
