"""The failing line and its variables are shown after an error, from a probe."""

from __future__ import annotations

import pytest

from stateguard.guard import GuardedSession
from stateguard.lineage import TrackedSession
from stateguard.llm import ScriptedModel
from stateguard.manager import NullSupervisor
from stateguard.worker.error_context import line_names, strip_answer_lines
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


@pytest.mark.kernel
def test_a_silent_cell_is_shown_what_its_names_hold(tracked: TrackedSession) -> None:
    """A cell that shows nothing: the observation says what it created (grounding)."""
    model = ScriptedModel(
        [
            "```python\nimport pandas as pd\nframe = pd.DataFrame({'a': [1, 2, 3]})\n"
            "total = frame['a'] * 2\nmean = frame['a'].mean() * 1.25\nlabel: 123.45\n```",
            "```python\nprint(int(total.sum()))\n```",
            "<answer>12</answer>",
        ]
    )
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()))
    steps = [e for e in worker.run_turn(1, "Total?") if isinstance(e, StepRecord)]
    first = steps[0].observation
    assert first.startswith("(no output)\nThe cell created: ")
    assert "total is Series shape=(3,) dtype=int64" in first
    assert "frame is DataFrame shape=(3, 1)" in first and "pd is" not in first
    assert "mean is float64 2.5" in first  # one numpy value: shown, not its empty shape
    assert first in model.requests[1].messages[-1].content


def test_answer_lines_are_taken_out_of_a_cell() -> None:
    code = (
        "t = 1\nt\n"
        "rows: 74\n"  # a bare annotation
        "region: North Partner\n"  # not Python at all
        "x: int = 3\n"  # an annotated assignment: code
        "for i in range(2):\n    pass\n"
    )
    kept, removed = strip_answer_lines(code)
    assert removed == ["rows: 74", "region: North Partner"]
    assert kept == "t = 1\nt\nx: int = 3\nfor i in range(2):\n    pass"


def test_a_cell_of_answer_lines_only_is_left_alone() -> None:
    assert strip_answer_lines("rows: 74\ntotal: 5") == ("rows: 74\ntotal: 5", [])
    assert strip_answer_lines("d = {\nrows: 3\n}") == ("d = {\nrows: 3\n}", [])
