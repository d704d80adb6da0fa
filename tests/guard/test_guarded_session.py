"""`GuardedSession` over the `Executor` protocol: steps, restarts, events, store, turns."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_executor import FakeExecutor

from stateguard.guard import EventList, GuardedSession, GuardError, JsonlEventSink
from stateguard.manager import NullSupervisor
from stateguard.manager.policies.deterministic import DeterministicPolicy


def test_steps_are_counted_across_turns(tmp_path: Path) -> None:
    fake = FakeExecutor(tmp_path)
    with GuardedSession(fake, manager="deterministic") as guard:
        assert fake.alive and guard.step == 0
        guard.begin_turn("first?")
        assert guard.run_cell("a = 1").step == 0
        assert guard.take_step() == 1  # a reply that ran nothing still counts
        assert guard.propose_answer("1").step == 2
        guard.begin_turn("second?")  # ends the first turn
        assert guard.turn == 2
        outcome = guard.run_cell("a + 1")
        assert outcome.step == 3 and outcome.execution.result == "2" and outcome.ok
    assert not fake.alive


def test_a_dead_backend_is_restarted(tmp_path: Path) -> None:
    fake = FakeExecutor(tmp_path)
    with GuardedSession(fake, manager="none") as guard:
        guard.run_cell("keep = 1")
        died = guard.run_cell("import os\nos._exit(1)")
        assert died.execution.status == "dead" and died.restarted
        assert fake.alive and fake.starts == 2
        assert died.rebuild is not None and died.rebuild.replayed == (0,)  # `keep = 1` again
        after = guard.run_cell("'keep' in globals()")
        assert after.execution.result == "True" and not after.restarted
    with GuardedSession(FakeExecutor(tmp_path), manager="none", rebuild=False) as guard:
        guard.run_cell("keep = 1")
        assert guard.run_cell("import os\nos._exit(1)").rebuild is None
        assert guard.run_cell("'keep' in globals()").execution.result == "False"


def test_an_executor_it_did_not_start_is_left_running(tmp_path: Path) -> None:
    fake = FakeExecutor(tmp_path)
    fake.start()
    with GuardedSession(fake, manager=NullSupervisor()) as guard:
        guard.run_cell("x = 1")
    assert fake.alive


def test_events_go_to_the_injected_sinks(tmp_path: Path) -> None:
    events = EventList()
    path = tmp_path / "events.jsonl"
    with GuardedSession(
        FakeExecutor(tmp_path), manager="deterministic", sinks=[events, JsonlEventSink(path)]
    ) as guard:
        guard.begin_turn("x?")
        guard.run_cell("x = 3\nprint(x)")
        review = guard.propose_answer("3")
        assert review.accepted
        drained = guard.drain_events()
    assert drained and events.events[: len(drained)] == drained
    assert events.events[-1].type == "turn_end"  # closing ended the open turn
    assert [e.type for e in events.events].count("activation") >= 2
    assert len(path.read_text().splitlines()) == len(events.events)


def test_memory_and_file_stores(tmp_path: Path) -> None:
    with GuardedSession(FakeExecutor(tmp_path), manager="deterministic") as guard:
        guard.begin_turn("x?")
        guard.run_cell("x = 3\nprint(x)")
        assert guard.propose_answer("3").accepted
        guard.end_turn()
        states = guard.states()
        assert [s.id for s in states] == ["S1"] and guard.load_state("S1").status == "committed"
    assert not list(tmp_path.glob("*.sqlite"))

    run_dir = tmp_path / "run"
    with GuardedSession(FakeExecutor(tmp_path), manager="deterministic", run_dir=run_dir) as g:
        g.run_cell("y = 1\nprint(y)")  # opens a turn with an empty question
        assert g.propose_answer("1").accepted
    assert (run_dir / "states.sqlite").is_file()


def test_misuse_is_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(GuardError, match="needs a run_dir"):
        GuardedSession(FakeExecutor(tmp_path), store="file")
    guard = GuardedSession(FakeExecutor(tmp_path), manager="none")
    guard.close()
    with pytest.raises(GuardError, match="closed"):
        guard.run_cell("1")


class _CountingPolicy(DeterministicPolicy):
    """The deterministic policy, counting the observations it is asked about."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = 0

    def next_action(self, obs, ctx):  # type: ignore[no-untyped-def]
        self.asked += 1
        return super().next_action(obs, ctx)


def test_a_given_policy_runs_in_the_harness(tmp_path: Path) -> None:
    policy = _CountingPolicy()
    with GuardedSession(FakeExecutor(tmp_path), manager="deterministic", policy=policy) as g:
        g.begin_turn("what is a?")
        g.run_cell("a = 1")
        g.propose_answer("1")
    assert policy.asked > 0
    with pytest.raises(GuardError, match="takes no policy"):
        GuardedSession(FakeExecutor(tmp_path), manager="none", policy=policy)
