"""Harness legality, repair schedule and invariants (no kernel)."""

from __future__ import annotations

import json

import pytest
from fake_workspace import FakeWorkspace
from hypothesis import given, settings
from hypothesis import strategies as st

from stateguard.checks import Step
from stateguard.errors import IllegalActionError
from stateguard.manager import actions as A
from stateguard.manager.harness import HarnessConfig, StateHarness
from stateguard.state import Constraint, Relation, StateStore


class QueuePolicy:
    """Returns queued actions, then ABSTAIN forever."""

    name = "queue"
    llm_calls = 0

    def __init__(self, actions: list) -> None:
        self.actions = list(actions)
        self.seen = []

    def next_action(self, obs, ctx):
        self.seen.append(obs)
        return self.actions.pop(0) if self.actions else A.Abstain()


def make(actions, **cfg) -> tuple[StateHarness, QueuePolicy, FakeWorkspace]:
    policy = QueuePolicy(actions)
    ws = FakeWorkspace()
    return StateHarness(policy, ws, StateStore(":memory:"), config=HarnessConfig(**cfg)), policy, ws


def events(h: StateHarness) -> list:
    return h.drain_events()


def test_commit_requires_update_and_relations() -> None:
    h, _, _ = make(
        [
            A.OpenState(issue="q"),
            A.CommitState(),
            A.UpdateState(),
            A.CommitState(),
            A.FinalizeRelations(),
            A.CommitState(),
        ]
    )
    h.begin_turn(0, "q")
    review = h.review_answer(Step(turn=0, step=0, answer="a"))
    assert review.accepted
    ev = events(h)
    illegal = [e for e in ev if e.type == "illegal_action"]
    assert [e.data["error"].split(" is illegal")[0] for e in illegal] == [
        "COMMIT_STATE",
        "COMMIT_STATE",
    ]
    assert "never updated" in illegal[0].data["error"]
    assert "not finalized" in illegal[1].data["error"]
    assert len(h.store.committed()) == 1


def test_illegal_action_raises_typed_error() -> None:
    h, _, _ = make([])
    with pytest.raises(IllegalActionError, match="no open draft"):
        h._apply(A.CommitState(), "review")
    with pytest.raises(IllegalActionError, match="not allowed"):
        h._apply(A.Repair(analytical_evidence=("e",), error_hint="h"), "turn_start")


def test_repair_schedule_light_heavy_rollback() -> None:
    repair = A.Repair(
        analytical_evidence=("x@v1 is stale",), error_hint="stale", suspected_variables=("x@v1",)
    )
    h, _, ws = make([A.OpenState(issue="q"), repair, repair, repair, repair])
    h.begin_turn(0, "q")
    modes = []
    for i in range(4):
        r = h.review_answer(Step(turn=0, step=i, answer="a"))
        modes += [e.data["mode"] for e in events(h) if e.type == "repair"]
        if r.accepted:
            break
    assert modes == ["light", "heavy", "rollback"]
    assert ws.deleted == [["x"]]  # heavy repair removed the suspected variable
    assert h.draft is None  # rollback abandoned the draft
    assert h.store.get("S1").status == "abandoned"


def test_at_most_max_actions_per_activation() -> None:
    tools = [A.CompilePython(code="1+") for _ in range(20)]
    h, policy, _ = make([*tools], max_actions=8)
    h.begin_turn(0, "q")
    ev = events(h)
    assert sum(e.type == "tool_call" for e in ev) == 8
    assert any(e.type == "activation_budget_exhausted" for e in ev)
    assert "does not compile" in policy.seen[-1].last_action_result


def test_failing_constraint_blocks_commit() -> None:
    h, _, ws = make(
        [
            A.OpenState(issue="q", constraints=(Constraint(text="x > 0", code="x > 0"),)),
            A.UpdateState(),
            A.FinalizeRelations(),
            A.CommitState(),
        ]
    )
    ws.probe_value = False
    h.begin_turn(0, "q")
    h.review_answer(Step(turn=0, step=0, answer="a"))
    ev = events(h)
    assert any(e.type == "illegal_action" and "does not hold" in e.data["error"] for e in ev)
    assert h.store.committed() == []


def test_relations_to_unknown_states_are_dropped() -> None:
    h, _, _ = make(
        [A.OpenState(issue="q", relations=(Relation(type="progress", related_state_id="S99"),))]
    )
    h.begin_turn(0, "q")
    assert h.draft is not None
    assert [r.type for r in h.draft.relations] == ["init"]


# -- properties ----------------------------------------------------------------

_actions = st.one_of(
    st.builds(A.OpenState, issue=st.sampled_from(["a", "b"])),
    st.builds(A.UpdateState, conclusions=st.just(("c",))),
    st.builds(A.FinalizeRelations),
    st.just(A.CommitState()),
    st.builds(
        A.Repair,
        analytical_evidence=st.just(("e",)),
        error_hint=st.just("h"),
        suspected_variables=st.just(("x@v1",)),
    ),
    st.just(A.AbandonState()),
    st.just(A.Abstain()),
    st.just(A.ResumeWorker()),
    st.builds(A.CompilePython, code=st.just("x = 1")),
)
_calls = st.lists(st.sampled_from(["begin", "step", "review", "end"]), max_size=25)


@settings(max_examples=60, deadline=None)
@given(
    actions=st.lists(_actions, max_size=60),
    calls=_calls,
    lifecycle=st.sampled_from(["turn", "segment"]),
)
def test_no_policy_output_breaks_invariants(actions, calls, lifecycle) -> None:
    h, _, _ = make(actions, lifecycle=lifecycle, cadence=2)
    snapshots: dict[str, str] = {}
    turn, step = -1, 0
    for call in calls:
        if call == "begin":
            turn += 1
            h.begin_turn(turn, "q")
        elif call == "step":
            h.after_step(Step(turn=turn, step=step, code="x = 1"))
            step += 1
        elif call == "review":
            h.review_answer(Step(turn=turn, step=step, answer="1"))
            step += 1
        else:
            h.end_turn(turn, None)
        for s in h.store.committed():
            dump = s.model_dump_json()
            assert snapshots.setdefault(s.id, dump) == dump, "a committed state changed"
    ids = [s.id for s in h.store.committed()]
    assert len(ids) == len(set(ids)), "a state was committed twice"
    repairs: dict[str, int] = {}
    for e in h.drain_events():
        if e.type == "repair":
            repairs[e.data["state"]] = repairs.get(e.data["state"], 0) + 1
        if e.type == "control":
            json.dumps(e.data)  # events are JSON-serializable
    assert all(n <= 3 for n in repairs.values()), repairs


def test_events_are_typed_payloads_on_the_wire() -> None:
    from stateguard.manager import events as E
    from stateguard.manager.protocol import ManagerEvent

    event = ManagerEvent.of(E.Abandon(state="S1", reason="why"), turn=2, step=5)
    assert (event.type, event.data) == ("abandon", {"state": "S1", "reason": "why"})
    assert event.payload == E.Abandon(state="S1", reason="why")
    h, _, _ = make(
        [
            A.OpenState(issue="q"),
            A.CommitState(),  # illegal: never updated
            A.UpdateState(),
            A.FinalizeRelations(),
            A.CommitState(),
        ]
    )
    h.begin_turn(0, "q")
    h.review_answer(Step(turn=0, step=0, answer="a"))
    h.end_turn(0, "a")
    logged_types = set()
    for logged in h.drain_events():
        logged_types.add(logged.type)
        assert logged.payload.type == logged.type  # every event the harness logs is typed
    assert {"activation", "control", "illegal_action", "commit", "turn_end"} <= logged_types


def test_an_answer_refused_until_the_state_was_abandoned_is_not_accepted_after_it() -> None:
    """A rollback abandons the draft and leaves no steps under review; the same answer,
    given again without new code, is still refused (it used to pass as nothing to
    record)."""
    from stateguard.kernel import ExecutionResult
    from stateguard.manager.policies.deterministic import DeterministicPolicy

    class Judged(DeterministicPolicy):
        """A judge that finds every ambiguous finding unsupported (as the hybrid may)."""

        def decide_evidence(self, found, obs, ctx):
            return list(found)

    h = StateHarness(Judged(), FakeWorkspace(), StateStore(":memory:"), config=HarnessConfig())
    h.begin_turn(0, "What is the total?")
    ran = ExecutionResult(status="ok", stdout="5\n", wall_time=0.0)
    h.after_step(Step(turn=0, step=0, code="print(5)", execution=ran))
    verdicts, modes = [], []
    for i in range(1, 5):
        review = h.review_answer(Step(turn=0, step=i, answer="the total is 42"))
        verdicts.append(review.accepted)
        modes += [e.data["mode"] for e in events(h) if e.type == "repair"]
    assert modes[:3] == ["light", "heavy", "rollback"]
    assert verdicts == [False, False, False, False]
    # an answer the turn printed is still accepted after the abandonment
    assert h.review_answer(Step(turn=0, step=5, answer="the total is 5")).accepted
