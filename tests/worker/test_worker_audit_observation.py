"""The worker's observation of a cell carries what the join guard saw in it."""

from __future__ import annotations

import pytest

from stateguard.guard import GuardedSession
from stateguard.lineage import TrackedSession
from stateguard.llm import ScriptedModel
from stateguard.manager import NullSupervisor
from stateguard.worker.events import StepRecord
from stateguard.worker.loop import Worker

pytestmark = pytest.mark.kernel

F = "```"
MERGE = (
    "import pandas as pd\n"
    "sales = pd.DataFrame({'year': [2018, 2019, 2020], 'v': [1, 2, 3]})\n"
    "targets = pd.DataFrame({'year': [2018, 2020], 't': [1, 2]})\n"
    "m = sales.merge(targets, on='year')\n"
    "print(len(m))"
)


def test_a_lossy_merge_is_in_the_observation(tracked: TrackedSession) -> None:
    model = ScriptedModel([f"Merge.\n{F}python\n{MERGE}\n{F}", "<answer>2</answer>"])
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()))
    events = list(worker.run_turn(1, "Rows after merging sales with targets, keeping all rows?"))
    step = next(e for e in events if isinstance(e, StepRecord) and e.code)
    assert step.observation.startswith("Output:\n2\naudit alarm: inner merge of `sales`")
    assert "dropped 1 of 3 left rows" in step.observation
    # the model read it: it is in the next request
    assert any("2019 is missing" in m.content for m in model.requests[1].messages)
