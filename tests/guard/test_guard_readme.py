"""The README's wrapper for guarding one's own agent, run as written."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest
from fake_executor import FakeExecutor

from stateguard import GuardedSession
from stateguard.kernel import Executor

ROOT = Path(__file__).resolve().parents[2]


def readme_wrapper() -> str:
    """The python block of the README section on guarding one's own agent."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Guarding your own agent", 1)[1]
    return re.findall(r"```python\n(.*?)\n```", section, flags=re.S)[0]


class Reply(NamedTuple):
    code: str | None = None
    answer: str | None = None


class ScriptedAgent:
    """An agent that replies from a script and keeps the notes it was shown."""

    def __init__(self, replies: list[Reply]) -> None:
        self._replies: Iterator[Reply] = iter(replies)
        self.seen: list[list[str]] = []

    def __call__(self, question: str, notes: list) -> Reply:
        self.seen.append([n.text for n in notes])
        return next(self._replies)


def run_wrapper(agent: ScriptedAgent, guarded_session: object) -> None:
    """Run the README block with ``GuardedSession`` bound to ``guarded_session``."""
    code = readme_wrapper()
    lines = [ln for ln in code.splitlines() if ln.strip()]
    assert lines[0] == "from stateguard import GuardedSession"
    assert len(lines) - 1 <= 8, "the README wrapper must stay within about 8 lines"
    body = "\n".join(lines[1:])
    exec(body, {"GuardedSession": guarded_session, "agent": agent, "question": "Cost?"})


@pytest.mark.kernel
def test_the_readme_wrapper_guards_an_agent_on_a_real_kernel() -> None:
    agent = ScriptedAgent(
        [
            Reply(code="rate = 0.10"),
            Reply(code="cost = 200 * rate"),
            Reply(code="rate = 0.12  # revised upstream"),
            Reply(code="print(cost)"),
            Reply(answer="The order costs 20.0"),
            Reply(code="cost = 200 * rate\nprint(cost)"),
            Reply(answer="The order costs 24.0"),
        ]
    )
    run_wrapper(agent, GuardedSession)
    assert len(agent.seen) == 7  # the stale answer was refused, the agent went on
    repair = agent.seen[5]
    assert len(repair) == 1 and "cost@v1" in repair[0] and "rate@v2" in repair[0]
    assert agent.seen[6] == []


def test_the_readme_wrapper_runs_with_a_fake_executor(tmp_path: Path) -> None:
    fake = FakeExecutor(tmp_path)
    assert isinstance(fake, Executor)
    agent = ScriptedAgent([Reply(code="x = 2"), Reply(code="print(x * 21)"), Reply(answer="42")])
    run_wrapper(agent, functools.partial(GuardedSession, fake))
    assert fake.cells == ["x = 2", "print(x * 21)"]
    assert len(agent.seen) == 3
    assert not fake.alive  # the guarded session started the backend, so it stopped it
