"""Regressions from the fault-injected replay benchmark, on a real kernel."""

from __future__ import annotations

import pytest
from manager_driver import ScriptedTurn, drive, guarded

from stateguard.state import StateStore

pytestmark = pytest.mark.kernel


def test_redo_after_repair_is_judged_on_its_own_steps(tracked, tmp_path) -> None:
    logs = drive(
        guarded(tracked, "deterministic", tmp_path),
        [
            ScriptedTurn(
                "keep the list",
                ["x = [1, 2]", "import copy\nx_orig = copy.deepcopy(x)"],
                "kept 2 items",
            ),
            ScriptedTurn("add an item", ["x.append(3)\nprint(len(x))"], "now 3 items"),
            ScriptedTurn(
                "how many items?",
                ["print(len(x_orig))"],
                "2 items",
                on_repair=["print(len(x))"],
                answer_after_repair="3 items",
            ),
        ],
    )
    assert [len(log.repair_hints) for log in logs] == [0, 0, 1]
    assert logs[2].answer == "3 items"
    with StateStore(tmp_path / "states.sqlite") as store:
        assert len(store.committed()) == 3


def test_a_backup_copy_revised_in_the_same_turn_commits(tracked, tmp_path) -> None:
    logs = drive(
        guarded(tracked, "deterministic", tmp_path),
        [
            ScriptedTurn(
                "back up and extend",
                ["y = [1]\ny_backup = list(y)", "y.append(2)\nprint(len(y))"],
                "2",
            ),
            ScriptedTurn(
                "warn", ["import warnings\nwarnings.warn('w')\nz = len(y)\nprint(z)"], "2"
            ),
        ],
    )
    assert all(not log.repair_hints for log in logs)
    with StateStore(tmp_path / "states.sqlite") as store:
        assert len(store.committed()) == 2
        names = {v.name for s in store.committed() for v in s.used_variables}
    assert "__warningregistry__" not in names
    assert tracked.graph.versions("__warningregistry__") == ()
