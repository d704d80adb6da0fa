"""The lifecycle harness: deterministic bookkeeping around a pluggable policy.

The harness implements `Supervisor` for the worker. At each activation point it
builds a compact `Observation`, asks the policy for actions (at most
`max_actions`; tool actions gather evidence, one control action ends the
activation), checks every action's legality in the current phase, and applies
it. It owns what must not be left to a policy: state ids, variable versions and
values (bound from lineage), relation normalization, source intervals,
checkpoints, and the repair schedule (per state at most 3 attempts: light,
heavy — invalid variables deleted from the worker's namespace — then rollback to
the last checkpoint and abandon).

Lifecycles: ``turn`` (one state per user turn: opened at turn start, reviewed,
committed or repaired when the worker answers) and ``segment`` (activated every
`cadence` worker steps and at the answer; the policy decides whether pending
steps form a state).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from stateguard.errors import IllegalActionError, PolicyError, StoreError
from stateguard.manager import actions as A
from stateguard.manager.binding import bind_variables, span_versions
from stateguard.manager.evidence import Evidence
from stateguard.manager.notices import repair_hint, state_hint
from stateguard.manager.policies.base import Observation, Policy, PolicyContext
from stateguard.manager.protocol import AnswerReview, Hint, ManagerEvent, StepView
from stateguard.manager.tools import run_tool
from stateguard.manager.workspace import Workspace
from stateguard.state import AnalyticalState, Relation, StateStore

Phase = Literal["idle", "turn_start", "working", "review", "segment"]

_ALLOWED: dict[str, frozenset[str]] = {
    "turn_start": frozenset({"OPEN_STATE", "ABSTAIN", "RESUME_WORKER"}),
    "review": frozenset(
        {
            "UPDATE_STATE",
            "FINALIZE_RELATIONS",
            "COMMIT_STATE",
            "REPAIR",
            "ABANDON_STATE",
            "ABSTAIN",
            "RESUME_WORKER",
            "OPEN_STATE",
        }
    ),
    "segment": frozenset(
        {
            "OPEN_STATE",
            "UPDATE_STATE",
            "FINALIZE_RELATIONS",
            "COMMIT_STATE",
            "REPAIR",
            "ABANDON_STATE",
            "ABSTAIN",
            "RESUME_WORKER",
        }
    ),
}
_NEEDS_DRAFT = frozenset(
    {"UPDATE_STATE", "FINALIZE_RELATIONS", "COMMIT_STATE", "REPAIR", "ABANDON_STATE"}
)
_CHAINING = frozenset({"OPEN_STATE", "UPDATE_STATE", "FINALIZE_RELATIONS"})


class HarnessConfig(BaseModel):
    """Cadence and budgets of the harness."""

    model_config = ConfigDict(frozen=True)

    lifecycle: Literal["turn", "segment"] = "turn"
    cadence: int = Field(default=5, ge=1)
    """Segment lifecycle: activate every `cadence` worker steps."""
    max_actions: int = Field(default=8, ge=1)
    max_repairs: int = Field(default=3, ge=1)
    max_chain: int = Field(default=4, ge=1)
    """Follow-up activations after OPEN/UPDATE/FINALIZE within one review point."""
    hint_states: int = Field(default=4, ge=0)
    hint_chars: int = Field(default=2000, ge=200)


class _Draft(BaseModel):
    """Mutable bookkeeping of the open draft (the state itself is immutable)."""

    state: AnalyticalState
    updated: bool = False
    relations_final: bool = False
    repairs: int = 0
    step_start: int
    external_reads: tuple[str, ...] = ()
    """Versions the span read from before it (bound at UPDATE_STATE)."""


class StateHarness:
    """The manager: owns states and bookkeeping, asks a policy what to do."""

    def __init__(
        self,
        policy: Policy,
        workspace: Workspace,
        store: StateStore,
        *,
        config: HarnessConfig | None = None,
        events_path: Path | None = None,
    ) -> None:
        self.policy = policy
        self.workspace = workspace
        self.store = store
        self.config = config or HarnessConfig()
        self.events_path = events_path
        self.phase: Phase = "idle"
        self.turn = -1
        self.question = ""
        self.steps: list[StepView] = []
        self._turn_start_step = 0
        self._review_start_step = 0
        self._segment_start_step = 0
        self._draft: _Draft | None = None
        self._events: list[ManagerEvent] = []
        self._last_checkpoint: str | None = None
        self._pending_hints: list[Hint] = []
        self._answer: str | None = None
        self._answer_rejected = False

    # -- Supervisor ---------------------------------------------------------

    @property
    def llm_calls(self) -> int:
        """LLM calls made by the policy so far."""
        return self.policy.llm_calls

    @property
    def draft(self) -> AnalyticalState | None:
        """The open draft state, if any."""
        return self._draft.state if self._draft else None

    def begin_turn(self, turn: int, question: str) -> list[Hint]:
        """Activation at turn start (turn lifecycle: OPEN_STATE with proposed relations)."""
        self.turn, self.question = turn, question
        self._turn_start_step = self._segment_start_step = len(self.steps)
        self._review_start_step = len(self.steps)
        self._pending_hints = []
        if self.config.lifecycle == "turn":
            self._activation("turn_start")
        return self._state_hints() + self._take_hints()

    def after_step(self, view: StepView) -> list[Hint]:
        """Record a step; in the segment lifecycle, activate every `cadence` steps."""
        self.steps.append(view)
        self.phase = "working"
        pending = len(self.steps) - self._segment_start_step
        if self.config.lifecycle == "segment" and pending >= self.config.cadence:
            self._activation("segment")
        return self._take_hints()

    def review_answer(self, view: StepView) -> AnswerReview:
        """Activation when the worker proposes an answer."""
        if view.code is not None or view.cell is not None:
            self.steps.append(view)
        self._answer = view.answer
        self._answer_rejected = False
        self._activation("review")
        hints = self._take_hints()
        rejected = self._answer_rejected
        self.phase = "working" if rejected else "idle"
        return AnswerReview(accepted=not rejected, hints=tuple(hints))

    def end_turn(self, turn: int, answer: str | None) -> None:
        """A turn is over: a draft left open is abandoned (nothing half-verified survives)."""
        if self._draft is not None:
            self._abandon("turn ended without a committed state")
        self._log("turn_end", answer=answer)
        self.phase = "idle"

    def close(self) -> None:
        """Close the state store (checkpoints the SQLite WAL into states.sqlite)."""
        self.store.close()

    def drain_events(self) -> list[ManagerEvent]:
        """Events since the last call."""
        out, self._events = self._events, []
        return out

    # -- activations --------------------------------------------------------

    def _activation(self, event: str) -> None:
        self.phase = "review" if event == "review" else event  # type: ignore[assignment]
        last_result: str | None = None
        for chain in range(self.config.max_chain + 1):
            self._log("activation", event=event, chain=chain, draft=self._draft_id())
            kind, last_result = self._run_activation(event, last_result)
            # at turn start the worker must run next; elsewhere OPEN/UPDATE/FINALIZE chain on
            if (
                event == "turn_start"
                or kind not in _CHAINING
                or self._draft is None
                or chain == self.config.max_chain
            ):
                break

    def _run_activation(self, event: str, last_result: str | None) -> tuple[str, str | None]:
        """One activation: tool actions, then one control action. Returns its kind."""
        ctx = self._context()
        for _ in range(self.config.max_actions):
            obs = self._observe(event, last_result)
            try:
                action = self.policy.next_action(obs, ctx)
            except PolicyError as exc:
                self._log("policy_error", error=str(exc))
                action = A.Abstain(reason=f"policy error: {exc}")
            if not A.is_control(action):
                result = run_tool(action, ctx)  # type: ignore[arg-type]
                self._log("tool_call", action=action.model_dump(), result=result[:2000])
                last_result = result
                continue
            try:
                result = self._apply(action, event)  # type: ignore[arg-type]
            except IllegalActionError as exc:
                self._log("illegal_action", action=action.model_dump(mode="json"), error=str(exc))
                last_result = f"error: {exc}"
                continue
            self._log("control", action=action.model_dump(mode="json"), result=result)
            return action.kind, result  # type: ignore[attr-defined]
        self._log("activation_budget_exhausted", max_actions=self.config.max_actions)
        return "ABSTAIN", None

    def _context(self) -> PolicyContext:
        return PolicyContext(
            graph=self.workspace.graph,
            workspace=self.workspace,
            store=self.store,
            steps=tuple(self.steps),
            # after a repair, the worker's new attempt is what is reviewed
            turn_steps=tuple(self.steps[self._review_start_step :]),
            pending_steps=tuple(self.steps[self._segment_start_step :]),
            question=self.question,
            answer=self._answer,
            draft=self.draft,
        )

    def _observe(self, event: str, last_result: str | None) -> Observation:
        pending = self.steps[self._segment_start_step :]
        return Observation(
            event=event,
            turn=self.turn,
            question=self.question,
            answer=self._answer if event == "review" else None,
            pending_interval=(pending[0].step, pending[-1].step) if pending else None,
            pending_steps=tuple(_compact_step(s) for s in pending[-6:]),
            draft=self.draft,
            draft_updated=bool(self._draft and self._draft.updated),
            relations_final=bool(self._draft and self._draft.relations_final),
            repair_attempts=self._draft.repairs if self._draft else 0,
            last_action_result=last_result,
            committed_index=tuple(e.model_dump() for e in self.store.index()),
        )

    # -- control actions ----------------------------------------------------

    def _check_legal(self, action: A.ControlAction, event: str) -> None:
        kind = action.kind
        phase = "review" if event == "review" else event
        if kind not in _ALLOWED.get(phase, frozenset()):
            raise IllegalActionError(kind, phase, "not allowed at this point of the lifecycle")
        if kind in _NEEDS_DRAFT and self._draft is None:
            raise IllegalActionError(kind, phase, "there is no open draft state")
        if kind == "OPEN_STATE" and self._draft is not None:
            raise IllegalActionError(kind, phase, f"draft {self._draft.state.id} is already open")
        if kind == "COMMIT_STATE":
            assert self._draft is not None
            if not self._draft.updated:
                raise IllegalActionError(kind, phase, "the draft was never updated (UPDATE_STATE)")
            if not self._draft.relations_final:
                raise IllegalActionError(kind, phase, "relations are not finalized")
        if kind == "REPAIR":
            assert self._draft is not None
            if self._draft.repairs >= self.config.max_repairs:
                raise IllegalActionError(kind, phase, "the repair budget of this state is spent")

    def _apply(self, action: A.ControlAction, event: str) -> str:
        self._check_legal(action, event)
        if isinstance(action, A.OpenState):
            return self._open(action)
        if isinstance(action, A.UpdateState):
            return self._update(action)
        if isinstance(action, A.FinalizeRelations):
            return self._finalize(action)
        if isinstance(action, A.CommitState):
            return self._commit(event)
        if isinstance(action, A.Repair):
            return self._repair(action, event)
        if isinstance(action, A.AbandonState):
            return self._abandon(action.reason or "abandoned by policy")
        return "ok"  # ABSTAIN / RESUME_WORKER

    def _open(self, action: A.OpenState) -> str:
        state = AnalyticalState(
            id=self.store.next_state_id(),
            issue=action.issue or self.question or "(unnamed)",
            constraints=action.constraints,
            relations=self._normalize(action.relations),
            turn=self.turn if self.turn >= 0 else None,
        )
        self.store.save_draft(state)
        # the draft covers the pending steps: since the turn started or the last commit
        self._draft = _Draft(state=state, step_start=self._segment_start_step)
        return f"opened {state.id}"

    def _update(self, action: A.UpdateState) -> str:
        assert self._draft is not None
        d = self._draft
        span = (
            self.steps[d.step_start :]
            if action.source_interval is None
            else [
                s
                for s in self.steps
                if action.source_interval[0] <= s.step <= action.source_interval[1]
            ]
        )
        external, created = span_versions(span)
        requested_keys = [v for v in action.used_variables if "@v" in v]
        requested_names = [v for v in action.used_variables if "@v" not in v]
        if action.used_variables:
            # a policy names variables; versions come from lineage (span-bound first)
            span_keys = {k.split("@")[0]: k for k in [*external, *created]}
            keys = [k for k in requested_keys if k in set(external) | set(created)]
            keys += [span_keys[n] for n in requested_names if n in span_keys]
            names = [n for n in requested_names if n not in span_keys]
        else:
            keys, names = [*external, *created], []
        used = bind_variables(self.workspace.graph, keys, names)
        interval = (span[0].step, span[-1].step) if span else (None, None)
        d.external_reads = tuple(external)
        d.state = d.state.with_changes(
            issue=action.issue or d.state.issue,
            used_variables=used,
            conclusions=action.conclusions or d.state.conclusions,
            source_step_start=interval[0],
            source_step_end=interval[1],
        )
        self.store.save_draft(d.state)
        d.updated = True
        return f"updated {d.state.id}: {len(used)} variables bound from lineage"

    def _finalize(self, action: A.FinalizeRelations) -> str:
        assert self._draft is not None
        d = self._draft
        rels = (
            action.relations
            if action.mode == "reselect"
            else (action.relations or d.state.relations)
        )
        rels = self._normalize(rels)
        d.state = d.state.with_changes(relations=rels)
        self.store.save_draft(d.state)
        d.relations_final = True
        return "relations: " + ", ".join(r.summary for r in rels)

    def _normalize(self, rels: Sequence[Relation]) -> tuple[Relation, ...]:
        """Keep relations to committed states only, dedupe, add proven invalidations."""
        committed = {s.id for s in self.store.committed()}
        out: dict[tuple[str, str | None], Relation] = {}
        for r in rels:
            if r.type == "init" or r.related_state_id in committed:
                out[(r.type, r.related_state_id)] = r
        if self._draft is not None and self._draft.updated:
            draft = self._draft.state
            for sid in self.store.invalidated_by(draft.with_changes(relations=())):
                if sid in committed:
                    out[("invalidate", sid)] = Relation(type="invalidate", related_state_id=sid)
        non_init = {k: v for k, v in out.items() if v.type != "init"}
        return tuple(non_init.values()) or (Relation(type="init"),)

    def _commit(self, event: str) -> str:
        assert self._draft is not None
        d = self._draft
        problems = self.verify_draft()
        if problems:
            raise IllegalActionError("COMMIT_STATE", event, "; ".join(e.message for e in problems))
        created = [v.name for v in d.state.used_variables if v.version and self._is_current(v)]
        ckpt = f"ckpt-{d.state.id}"
        saved = self.workspace.checkpoint(ckpt, created)
        state = d.state.with_changes(
            relations=self._normalize(d.state.relations), checkpoint_id=ckpt
        )
        self.store.save_draft(state)
        committed = self.store.commit(state.id)
        self._last_checkpoint = ckpt
        self._draft = None
        self._segment_start_step = len(self.steps)
        self._log("commit", state=committed.model_dump(mode="json"), checkpoint=saved)
        return f"committed {committed.id}"

    def _is_current(self, ref: Any) -> bool:
        latest = self.workspace.graph.latest(ref.name)
        return latest is not None and latest.key == ref.key

    def verify_draft(self) -> list[Evidence]:
        """Checks run before any commit: stale variables and executable constraints."""
        assert self._draft is not None
        out: list[Evidence] = []
        graph = self.workspace.graph
        inputs = set(self._draft.external_reads)
        for ref in self._draft.state.used_variables:
            if ref.key not in inputs:
                continue  # versions the span created itself (e.g. a backup copy) are its output
            try:
                why = graph.why_stale(ref.key)
            except KeyError:
                continue
            if why is not None and self._is_current(ref):
                out.append(
                    Evidence(
                        check="stale_use",
                        message=why.describe(),
                        variables=(ref.key,),
                        superseding=(why.superseded_by,),
                    )
                )
        for c in self._draft.state.constraints:
            if c.code:
                res = self.workspace.run_probe(c.code)
                if not res.ok or res.value is False or (res.result or "").strip() == "False":
                    out.append(
                        Evidence(
                            check="constraint_failed",
                            message=f"constraint '{c.text}' does not hold"
                            + (f" ({res.error.ename}: {res.error.evalue})" if res.error else ""),
                        )
                    )
        return out

    def _repair(self, action: A.Repair, event: str) -> str:
        assert self._draft is not None
        d = self._draft
        d.repairs += 1
        mode = ("light", "heavy", "rollback")[min(d.repairs, 3) - 1]
        if d.repairs >= self.config.max_repairs:
            mode = "rollback"
        evidence = [
            Evidence(check="policy", message=m, variables=tuple(action.suspected_variables))
            for m in action.analytical_evidence
        ]
        removed: list[str] = []
        restored: list[str] = []
        suspects = [v.split("@")[0] for v in action.suspected_variables]
        if mode == "heavy" and suspects:
            removed = self.workspace.delete_variables(suspects)
        state_id = d.state.id
        if mode == "rollback":
            touched = sorted(
                {
                    k.split("@")[0]
                    for s in self.steps[d.step_start :]
                    if s.cell is not None
                    for k in s.cell.created
                }
            )
            if self._last_checkpoint is not None:
                restored = self.workspace.restore(self._last_checkpoint, touched)
            self._abandon(f"repair budget spent after {d.repairs} attempts")
        hint = repair_hint(
            evidence,
            action.error_hint,
            mode,
            checks=action.checks,
            state_id=state_id,
            removed=removed,
            restored=restored,
            checkpoint=self._last_checkpoint,
        )
        self._pending_hints.append(hint)
        # the worker's next attempt is reviewed on its own steps, and forms the state
        self._review_start_step = self._segment_start_step = len(self.steps)
        if self._draft is not None:
            self._draft.step_start = len(self.steps)
            self._draft.updated = False
        if event == "review":
            self._answer_rejected = True
        self._log(
            "repair",
            state=state_id,
            attempt=d.repairs,
            mode=mode,
            removed=removed,
            restored=restored,
            notice=hint.notice.model_dump(mode="json") if hint.notice else None,
        )
        if mode == "rollback":
            self._log(
                "rollback", state=state_id, checkpoint=self._last_checkpoint, restored=restored
            )
        return f"repair {d.repairs} ({mode})"

    def _abandon(self, reason: str) -> str:
        if self._draft is None:
            return "no draft"
        sid = self._draft.state.id
        try:
            self.store.abandon(sid)
        except StoreError as exc:
            self._log("store_error", error=str(exc))
        self._draft = None
        self._log("abandon", state=sid, reason=reason)
        return f"abandoned {sid}"

    # -- hints and events ---------------------------------------------------

    def _state_hints(self) -> list[Hint]:
        committed = self.store.committed()
        if not committed or self.config.hint_states == 0:
            return []
        ids: dict[str, None] = {}
        if self._draft is not None:
            ids.update(
                dict.fromkeys(
                    r.related_state_id for r in self._draft.state.relations if r.related_state_id
                )
            )
        ids.update(dict.fromkeys(s.id for s in committed[-self.config.hint_states :]))
        ids.update(dict.fromkeys(sorted(self.store.stale_states())))
        hint = state_hint(self.store, list(ids))
        if hint is None:
            return []
        notice = hint.notice.model_dump(mode="json") if hint.notice else None
        self._log("hint", kind="state", states=list(hint.state_ids), notice=notice)
        return [hint]

    def _take_hints(self) -> list[Hint]:
        out, self._pending_hints = self._pending_hints, []
        return out

    def _draft_id(self) -> str | None:
        return self._draft.state.id if self._draft else None

    def _log(self, type_: str, **data: Any) -> None:
        step = self.steps[-1].step if self.steps else None
        ev = ManagerEvent(type=type_, turn=self.turn, step=step, data=data)
        self._events.append(ev)
        if self.events_path is not None:
            with open(self.events_path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps({"ts": time.time(), **ev.model_dump(mode="json")}) + "\n")


def _compact_step(s: StepView) -> dict[str, Any]:
    ex = s.execution
    return {
        "step": s.step,
        "code_head": (s.code or "").strip().splitlines()[:3],
        "status": ex.status if ex else None,
        "created": list(s.cell.created) if s.cell else [],
        "stale_reads": [r.version for r in s.cell.stale_reads] if s.cell else [],
        "answer": s.answer,
    }
