"""The failing line and its variables are shown after an error, from a probe."""

from __future__ import annotations

import pytest

from stateguard.guard import GuardedSession
from stateguard.lineage import TrackedSession
from stateguard.llm import ScriptedModel
from stateguard.manager import NullSupervisor
from stateguard.worker.error_context import line_names
from stateguard.worker.events import StepRecord
from stateguard.worker.loop import Worker


def test_line_names() -> None:
    assert line_names("answer = f'{total:.2f}' + str(n)") == ["total", "str", "n"]
    assert line_names("  else:") == []


@pytest.mark.kernel
def test_error_observation_names_the_line_and_its_variables(tracked: TrackedSession) -> None:
    code = (
        "import pandas as pd\n"
        "s = pd.Series([1.0, 2.0, 3.0])\n"
        "total = s * (1 - s).sum()\n"
        "answer = f'{total:.2f}'"
    )
    model = ScriptedModel([f"```python\n{code}\n```", "<answer>x</answer>"])
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()), max_steps_per_turn=2)
    events = list(worker.run_turn(1, "Total?"))
    step = next(e for e in events if isinstance(e, StepRecord) and e.code)
    assert "line 4: answer = f'{total:.2f}'" in step.observation
    assert "total is Series shape=(3,)" in step.observation
    # the probe ran on a copy: nothing was added to the namespace
    check = tracked.kernel.execute("'_j' in dir(), '_d' in dir(), '_ns' in dir()")
    assert check.result == "(False, False, False)"
