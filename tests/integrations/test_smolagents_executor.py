"""A real smolagents `CodeAgent`, driven by a scripted model, guarded by `GuardedExecutor`.

The model implements smolagents' own `Model` interface and answers from a script (no
network); each reply is checked against what the agent showed it, so the test sees the
observations exactly as the model would.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "smolagents", reason="needs the smolagents extra: pip install -e '.[smolagents]'"
)

import smolagents
from smolagents import CodeAgent, tool
from smolagents.local_python_executor import InterpreterError
from smolagents.models import ChatMessage, MessageRole, Model

from stateguard.guard import GuardedSession
from stateguard.integrations.smolagents import (
    GuardedExecutor,
    GuardedExecutorError,
)

pytestmark = pytest.mark.kernel


def _text(message: Any) -> str:
    content = message.content if isinstance(message, ChatMessage) else message["content"]
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content or [])


class ScriptedSmolModel(Model):
    """smolagents' `Model`: replies come from a script, one per `generate` call.

    Each script entry is ``(expected, reply)``: the last message the agent sent must
    contain every string in ``expected`` before ``reply`` is given."""

    def __init__(self, script: list[tuple[tuple[str, ...], str]]) -> None:
        super().__init__(model_id="scripted")
        self.script = list(script)
        self.seen: list[str] = []

    def generate(
        self,
        messages: list[Any],
        stop_sequences: list[str] | None = None,
        response_format: dict[str, str] | None = None,
        tools_to_call_from: list[Any] | None = None,
        **kwargs: Any,
    ) -> ChatMessage:
        last = _text(messages[-1])
        self.seen.append(last)
        if not self.script:
            raise AssertionError(f"the agent asked for more replies than scripted; last: {last}")
        expected, reply = self.script.pop(0)
        for piece in expected:
            assert piece in last, f"expected {piece!r} in the agent's message:\n{last}"
        return ChatMessage(role=MessageRole.ASSISTANT, content=reply)


def code(thought: str, body: str) -> str:
    return f"Thought: {thought}\n<code>\n{body}\n</code>"


@tool
def cost_rate(region: str) -> float:
    """The cost rate of a sales region.

    Args:
        region: The region's name.
    """
    return {"north": 0.1, "south": 0.3}[region]


@pytest.fixture
def executor() -> Iterator[GuardedExecutor]:
    with GuardedExecutor(manager="deterministic") as ex:
        yield ex


def test_a_stale_value_is_noted_a_refused_answer_is_retried_and_the_answer_is_right(
    executor: GuardedExecutor,
) -> None:
    model = ScriptedSmolModel(
        [
            # turn 1: the rate comes from a tool running in the guarded kernel
            ((), code("Get the rate.", "revenue = 1000\nrate = cost_rate('north')\nprint(rate)")),
            (("0.1",), code("Cost.", "cost = revenue * rate\nprint(cost)")),
            (("100.0",), code("Answer.", "final_answer(cost)")),
            # turn 2: the rate is revised; the old cost is reused
            ((), code("New rate.", "rate = 0.2\nprint(rate)")),
            # the manager's notes on earlier states open the turn's first observation
            (
                ("<analytical_state_hint>", "S1"),
                code("Add the fee.", "total = cost + 5\nprint(total)"),
            ),
            (
                ("105.0", "stateguard: stale value read: cost@v1 is stale"),
                code("Answer anyway.", "final_answer(total)"),
            ),
            (
                ("was not accepted", "<error_hint>", "cost@v1"),
                code("Recompute.", "cost = revenue * rate\ntotal = cost + 5\nfinal_answer(total)"),
            ),
        ]
    )
    agent = CodeAgent(tools=[cost_rate], model=model, executor=executor, max_steps=6)

    first = executor.run(agent, "Revenue is 1000 at the north region's cost rate. The cost?")
    assert first == pytest.approx(100.0)
    second = executor.run(
        agent, "The rate is revised to 20%. What is the cost plus a 5 fee?", reset=False
    )

    assert model.script == []  # every scripted reply was asked for, in order
    assert second == pytest.approx(205.0)
    assert executor.last_review is not None and executor.last_review.accepted
    # the stale note reached the model in the observation of the cell that read it
    # (and again in the refusal: the answered `total` read it too)
    stale = [s for s in model.seen if "stale value read" in s]
    assert len(stale) == 2
    assert "cost@v1 is stale: derived from rate@v1" in stale[0]
    assert "was not accepted" not in stale[0]
    # and the refusal, with the manager's repair note, in the next observation
    refused = [s for s in model.seen if "was not accepted" in s]
    assert len(refused) == 1 and "105.0" in refused[0]


def test_a_failing_cell_is_an_execution_error_the_agent_reads(executor: GuardedExecutor) -> None:
    model = ScriptedSmolModel(
        [
            ((), code("Divide.", "print('before')\nx = 1 / 0")),
            (("ZeroDivisionError", "before"), code("Fix.", "final_answer(2)")),
        ]
    )
    agent = CodeAgent(tools=[], model=model, executor=executor, max_steps=3)
    assert executor.run(agent, "Two?") == 2
    assert model.script == []


def test_variables_are_sent_once_and_lineage_sees_them(executor: GuardedExecutor) -> None:
    executor.send_variables({"limit": 3, "names": ["a", "b"]})
    executor.send_variables({"limit": 3, "names": ["a", "b"]})  # unchanged: not resent
    outcome_before = len(executor.guard.graph.versions("limit"))
    executor.send_tools({})
    out = executor("print(limit * len(names))")
    assert out.logs.strip() == "6" and not out.is_final_answer
    assert outcome_before == 1
    executor.send_variables({"limit": 4})
    assert len(executor.guard.graph.versions("limit")) == 2


def test_bad_inputs_are_typed_errors(executor: GuardedExecutor) -> None:
    with pytest.raises(GuardedExecutorError, match="'bad name'"):
        executor.send_variables({"bad name": 1})
    with pytest.raises(GuardedExecutorError, match="'handle'"):
        executor.send_variables({"handle": object()})
    with pytest.raises(GuardedExecutorError, match="not a Tool: helper"):
        executor.send_tools({"helper": lambda: 1})  # type: ignore[dict-item]
    with pytest.raises(GuardedExecutorError, match="not both"):
        GuardedExecutor(GuardedSession(), manager="none")


def test_tools_survive_a_kernel_restart(executor: GuardedExecutor) -> None:
    executor.send_tools({"cost_rate": cost_rate})
    with pytest.raises(InterpreterError, match="KernelDied") as died:
        executor("import os\nos._exit(1)")
    assert "restarted" in str(died.value)
    again = executor("print(cost_rate('south'))")
    assert again.logs.strip() == "0.3"


def test_the_readme_example_runs_as_written(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's smolagents example, verbatim, with its model scripted."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```python\n(.*?)```", readme, re.S) if "GuardedExecutor" in b]
    assert len(blocks) == 1, "the README has one smolagents example"
    example = blocks[0]
    assert len(example.strip().splitlines()) <= 15
    model = ScriptedSmolModel(
        [
            ((), code("Cost.", "revenue = 1000\nrate = 0.1\ncost = revenue * rate\nprint(cost)")),
            (("100.0",), code("Answer.", "final_answer(cost)")),
            ((), code("Revise.", "rate = 0.2\nfinal_answer(cost + 5)")),
            (
                ("stale value read: cost@v1", "was not accepted"),
                code("Recompute.", "cost = revenue * rate\nfinal_answer(cost + 5)"),
            ),
        ]
    )
    monkeypatch.setattr(smolagents, "OpenAIServerModel", lambda *a, **k: model)
    exec(compile(example, "README.md", "exec"), {})
    assert model.script == []
    assert capsys.readouterr().out.strip().splitlines()[-1] == "205.0"
