"""A recording, teacher-forcing wrapper around the deterministic policy.

The harness calls `RecordingPolicy.next_action` at every activation with its snapshot
(`PolicyContext`); the wrapper asks the deterministic policy what it would do, computes
the forced correct action (`stateguard.train.labels`), records both with the view, and
returns the forced action, so the replay follows the labelled path. The harness itself
is not changed: it sees one more policy.

An optional *shadow* (evaluation) is asked for its action in the same view, with the
same snapshot; its action is recorded and never applied.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from stateguard.manager import actions as A
from stateguard.manager.policies.base import Observation, PolicyContext
from stateguard.manager.policies.deterministic import DeterministicPolicy
from stateguard.manager.protocol import ManagerEvent
from stateguard.train.labels import force
from stateguard.train.records import Activation, FaultInfo

Shadow = Callable[[int, Observation, PolicyContext, Sequence[Activation]], tuple[Any, bool | None]]
"""``(index, observation, snapshot, activations so far) -> (action JSON or None, valid)``."""


class RecordingPolicy:
    """Deterministic proposals, forced labels applied, every view recorded."""

    name = "deterministic"

    def __init__(
        self,
        fault: FaultInfo | None = None,
        *,
        inner: DeterministicPolicy | None = None,
        shadow: Shadow | None = None,
    ) -> None:
        self.inner = inner or DeterministicPolicy()
        self.fault = fault
        self.shadow = shadow
        self.activations: list[Activation] = []
        self._turn: int | None = None
        self._repairs = 0
        self._key: tuple[int, str, int] | None = None
        self._chain = 0

    @property
    def llm_calls(self) -> int:
        """The recorded policy makes no model calls (a shadow's are counted by the shadow)."""
        return 0

    def next_action(self, obs: Observation, ctx: PolicyContext) -> A.ControlAction | A.ToolAction:
        """Record the view, the proposal and the forced action; return the forced action."""
        if obs.turn != self._turn:
            self._turn, self._repairs = obs.turn, 0
        attempt = self._repairs + 1
        key = (obs.turn, obs.event, attempt)
        self._chain = self._chain + 1 if key == self._key else 0
        self._key = key
        proposal = self.inner.next_action(obs, ctx)
        evidence = self.inner.evidence(obs, ctx) if obs.event != "turn_start" else []
        issue, conclusions = self.inner.name_state(obs, ctx)
        faulted = (
            self.fault is not None
            and obs.event == "review"
            and obs.turn == self.fault.turn_id
            and self._repairs == 0
        )
        steps = ctx.turn_steps if obs.event == "review" else ctx.pending_steps
        label = force(
            proposal,
            event=obs.event,
            faulted=faulted,
            after_repair=self._repairs > 0,
            fault=self.fault,
            steps=steps,
            has_draft=obs.draft is not None,
            draft_updated=obs.draft_updated,
            update=A.UpdateState(issue=issue, conclusions=conclusions),
        )
        shadow_action, shadow_valid = None, None
        index = len(self.activations)
        if self.shadow is not None:
            shadow_action, shadow_valid = self.shadow(index, obs, ctx, tuple(self.activations))
        self.activations.append(
            Activation(
                index=index,
                event=obs.event,
                turn=obs.turn,
                chain=self._chain,
                attempt=attempt,
                state_id=obs.draft.id if obs.draft is not None else None,
                observation=obs,
                evidence=tuple(evidence),
                proposed=proposal.model_dump(mode="json"),
                label=label.action.model_dump(mode="json"),
                label_kinds=label.kinds,
                label_reason=label.reason,
                faulted=faulted,
                after_repair=self._repairs > 0,
                shadow=shadow_action,
                shadow_valid=shadow_valid,
            )
        )
        if isinstance(label.action, A.Repair):
            self._repairs += 1
        return label.action


def with_results(
    activations: Sequence[Activation], events: Sequence[ManagerEvent]
) -> list[Activation]:
    """Activations with the harness's result of each applied label (from its events).

    Every call of a recording policy returns a control action, which the harness logs as
    exactly one ``control`` or ``illegal_action`` event, in call order.
    """
    applied = [e for e in events if e.type in ("control", "illegal_action")]
    out: list[Activation] = []
    for i, act in enumerate(activations):
        update: dict[str, Any] = {}
        if i < len(applied):
            ev = applied[i]
            if ev.type == "control":
                update["result"] = str(ev.data.get("result", ""))
            else:
                update["result"] = f"error: {ev.data.get('error', '')}"
        if act.state_id is None and str(update.get("result", "")).startswith("opened "):
            update["state_id"] = update["result"].removeprefix("opened ").strip()
        out.append(act.model_copy(update=update) if update else act)
    return out
