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

from collections.abc import Sequence

from stateguard.errors import IllegalActionError, PolicyError, StoreError
from stateguard.manager import actions as A
from stateguard.manager import events as E
from stateguard.manager.config import HarnessConfig
from stateguard.manager.drafts import Draft, normalize_relations, updated_state
from stateguard.manager.lifecycle import CHAINING, Phase, check_legal, phase_of
from stateguard.manager.notes import Evidence
from stateguard.manager.notices import hint_state_ids, repair_hint, state_hint
from stateguard.manager.policies.base import Observation, Policy, PolicyContext, compact_step
from stateguard.manager.protocol import AnswerReview, Hint, ManagerEvent, StepView
from stateguard.manager.repairs import repair_mode, rollback_names, suspect_names
from stateguard.manager.tools import run_tool
from stateguard.manager.verify import is_current, verify_state
from stateguard.manager.workspace import Workspace
from stateguard.state import AnalyticalState, Relation, StateStore


class StateHarness:
    """The manager: owns states and bookkeeping, asks a policy what to do."""

    def __init__(
        self,
        policy: Policy,
        workspace: Workspace,
        store: StateStore,
        *,
        config: HarnessConfig | None = None,
    ) -> None:
        self.policy = policy
        self.workspace = workspace
        self.store = store
        self.config = config or HarnessConfig()
        self.phase: Phase = "idle"
        self.turn = -1
        self.question = ""
        self.steps: list[StepView] = []
        self._turn_start_step = 0
        self._review_start_step = 0
        self._segment_start_step = 0
        self._draft: Draft | None = None
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
        self._log(E.TurnEnd(answer=answer))
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
        self.phase = phase_of(event)  # type: ignore[assignment]
        last_result: str | None = None
        for chain in range(self.config.max_chain + 1):
            self._log(E.Activation(event=event, chain=chain, draft=self._draft_id()))
            kind, last_result = self._run_activation(event, last_result)
            # at turn start the worker must run next; elsewhere OPEN/UPDATE/FINALIZE chain on
            if (
                event == "turn_start"
                or kind not in CHAINING
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
                self._log(E.PolicyFailed(error=str(exc)))
                action = A.Abstain(reason=f"policy error: {exc}")
            if not A.is_control(action):
                result = run_tool(action, ctx)  # type: ignore[arg-type]
                self._log(E.ToolCall(action=action.model_dump(mode="json"), result=result[:2000]))
                last_result = result
                continue
            try:
                result = self._apply(action, event)  # type: ignore[arg-type]
            except IllegalActionError as exc:
                dumped = action.model_dump(mode="json")
                self._log(E.IllegalAction(action=dumped, error=str(exc)))
                last_result = f"error: {exc}"
                continue
            self._log(E.Control(action=action.model_dump(mode="json"), result=result))
            return action.kind, result  # type: ignore[attr-defined]
        self._log(E.BudgetExhausted(max_actions=self.config.max_actions))
        return "ABSTAIN", None

    def _context(self) -> PolicyContext:
        return PolicyContext(
            graph=self.workspace.graph,
            probe=self.workspace.run_probe,
            committed=tuple(self.store.committed()),
            load_state=self.store.get,
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
            pending_steps=tuple(compact_step(s) for s in pending[-6:]),
            draft=self.draft,
            draft_updated=bool(self._draft and self._draft.updated),
            relations_final=bool(self._draft and self._draft.relations_final),
            repair_attempts=self._draft.repairs if self._draft else 0,
            last_action_result=last_result,
            committed_index=tuple(e.model_dump() for e in self.store.index()),
        )

    # -- control actions ----------------------------------------------------

    def _apply(self, action: A.ControlAction, event: str) -> str:
        check_legal(action.kind, event, self._draft, self.config.max_repairs)
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
        self._draft = Draft(state=state, step_start=self._segment_start_step)
        return f"opened {state.id}"

    def _update(self, action: A.UpdateState) -> str:
        assert self._draft is not None
        d = self._draft
        d.state, d.external_reads = updated_state(d, action, self.steps, self.workspace.graph)
        self.store.save_draft(d.state)
        d.updated = True
        return f"updated {d.state.id}: {len(d.state.used_variables)} variables bound from lineage"

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
        return normalize_relations(self.store, rels, self._draft)

    def _commit(self, event: str) -> str:
        assert self._draft is not None
        d = self._draft
        problems = self.verify_draft()
        if problems:
            raise IllegalActionError("COMMIT_STATE", event, "; ".join(e.message for e in problems))
        graph = self.workspace.graph
        created = [v.name for v in d.state.used_variables if v.version and is_current(graph, v)]
        ckpt = f"ckpt-{d.state.id}"
        saved = self.workspace.checkpoint(ckpt, created)
        unverified = tuple(
            v.step
            for v in self.steps[self._segment_start_step :]
            if v.cell is not None and v.cell.unverified is not None
        )
        state = d.state.with_changes(
            relations=self._normalize(d.state.relations),
            checkpoint_id=ckpt,
            unverified_steps=unverified,
        )
        self.store.save_draft(state)
        committed = self.store.commit(state.id)
        self._last_checkpoint = ckpt
        self._draft = None
        self._segment_start_step = len(self.steps)
        self._log(E.Commit(state=committed.model_dump(mode="json"), checkpoint=saved))
        if unverified:
            steps = ", ".join(map(str, unverified))
            return f"committed {committed.id} on unverified lineage (steps {steps})"
        return f"committed {committed.id}"

    def verify_draft(self) -> list[Evidence]:
        """Checks run before any commit: stale variables and executable constraints."""
        assert self._draft is not None
        d = self._draft
        return verify_state(
            self.workspace.graph,
            d.state.used_variables,
            d.external_reads,
            d.state.constraints,
            self.workspace.run_probe,
        )

    def _repair(self, action: A.Repair, event: str) -> str:
        assert self._draft is not None
        d = self._draft
        d.repairs += 1
        mode = repair_mode(d.repairs, self.config.max_repairs)
        evidence = list(action.evidence) or [
            Evidence(check="policy", message=m, variables=tuple(action.suspected_variables))
            for m in action.analytical_evidence
        ]
        removed: list[str] = []
        restored: list[str] = []
        suspects = suspect_names(action.suspected_variables)
        if mode == "heavy" and suspects:
            removed = self.workspace.delete_variables(suspects)
        state_id = d.state.id
        if mode == "rollback":
            touched = rollback_names(self.steps[d.step_start :])
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
            E.RepairLogged(
                state=state_id,
                attempt=d.repairs,
                mode=mode,
                removed=removed,
                restored=restored,
                notice=hint.notice.model_dump(mode="json") if hint.notice else None,
            )
        )
        if mode == "rollback":
            self._log(
                E.Rollback(state=state_id, checkpoint=self._last_checkpoint, restored=restored)
            )
        return f"repair {d.repairs} ({mode})"

    def _abandon(self, reason: str) -> str:
        if self._draft is None:
            return "no draft"
        sid = self._draft.state.id
        try:
            self.store.abandon(sid)
        except StoreError as exc:
            self._log(E.StoreFailed(error=str(exc)))
        self._draft = None
        self._log(E.Abandon(state=sid, reason=reason))
        return f"abandoned {sid}"

    # -- hints and events ---------------------------------------------------

    def _state_hints(self) -> list[Hint]:
        if self.config.hint_states == 0:
            return []
        ids = hint_state_ids(self.store, self.draft, self.config.hint_states)
        hint = state_hint(self.store, ids)
        if hint is None:
            return []
        notice = hint.notice.model_dump(mode="json") if hint.notice else None
        self._log(E.HintLogged(kind="state", states=list(hint.state_ids), notice=notice))
        return [hint]

    def _take_hints(self) -> list[Hint]:
        out, self._pending_hints = self._pending_hints, []
        return out

    def _draft_id(self) -> str | None:
        return self._draft.state.id if self._draft else None

    def _log(self, payload: E.Payload) -> None:
        step = self.steps[-1].step if self.steps else None
        self._events.append(ManagerEvent.of(payload, turn=self.turn, step=step))
