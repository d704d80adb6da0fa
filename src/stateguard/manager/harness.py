"""The lifecycle harness: deterministic bookkeeping around a pluggable policy.

It implements `Supervisor`. At each activation point the policy is asked for actions
(`activation`); each control action's legality is checked (`lifecycle`) and applied.
The harness owns what a policy must not: state ids, versions bound from lineage
(`drafts`), the commit gate (`commit`, `verify`) and the repair schedule (`repairs`,
`repair_effects`: light, heavy, then rollback and abandon). It decides; the words the
worker reads are rendered by `stateguard.hints`.

Lifecycles: ``turn`` (one state per user turn, opened at its start, committed or
repaired at the answer) and ``segment`` (activated every `cadence` steps and at the
answer; the policy decides whether pending steps form a state).
"""

from __future__ import annotations

from stateguard.checks import Step
from stateguard.errors import StoreError
from stateguard.finding import Finding
from stateguard.manager import actions as A
from stateguard.manager import events as E
from stateguard.manager.activation import run_activation
from stateguard.manager.commit import commit_draft
from stateguard.manager.config import HarnessConfig
from stateguard.manager.drafts import Draft, new_draft, normalize_relations, revise_draft
from stateguard.manager.eventlog import EventLog
from stateguard.manager.evidence import refusal_key
from stateguard.manager.lifecycle import CHAINING, Phase, check_legal, phase_of
from stateguard.manager.notices import turn_state_hint
from stateguard.manager.policies.base import Observation, Policy, PolicyContext
from stateguard.manager.protocol import AnswerReview, Hint, ManagerEvent
from stateguard.manager.repair_effects import carry_out_repair
from stateguard.manager.revisions import Revision, revised_versions, revisions_in
from stateguard.manager.snapshot import observation, policy_context
from stateguard.manager.spans import StepSpans
from stateguard.manager.workspace import Workspace
from stateguard.state import AnalyticalState, StateStore


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
        self.revisions: list[Revision] = []
        self.spans = StepSpans()
        self._draft: Draft | None = None
        self._events = EventLog()
        self._last_checkpoint: str | None = None
        self._pending_hints: list[Hint] = []
        self._answer: str | None = None
        self._answer_rejected = False
        self._refused: dict[str, tuple[Finding, ...]] = {}
        """Answers refused on review in this turn, with the findings that refused them."""

    # -- Supervisor ---------------------------------------------------------

    @property
    def llm_calls(self) -> int:
        """LLM calls made by the policy so far."""
        return self.policy.llm_calls

    @property
    def steps(self) -> list[Step]:
        """Every step of the task so far."""
        return self.spans.steps

    @property
    def draft(self) -> AnalyticalState | None:
        """The open draft state, if any."""
        return self._draft.state if self._draft else None

    def begin_turn(self, turn: int, question: str, context: str = "") -> list[Hint]:
        """Activation at turn start (turn lifecycle: OPEN_STATE with proposed relations).

        Revisions stated in the turn's context or question ("revised the rate from 42% to
        47%") are remembered for `stateguard.manager.revisions`."""
        self.turn, self.question = turn, question
        first_cell = len(self.workspace.graph.cells)
        self.revisions += revisions_in(f"{context}\n{question}", turn, first_cell)
        self.spans.new_turn()
        self._pending_hints = []
        self._refused = {}
        if self.config.lifecycle == "turn":
            self._activation("turn_start")
        return self._state_hints() + self._take_hints()

    def after_step(self, view: Step) -> list[Hint]:
        """Record a step; in the segment lifecycle, activate every `cadence` steps."""
        self.spans.append(view)
        self.phase = "working"
        if self.config.lifecycle == "segment" and len(self.spans.pending) >= self.config.cadence:
            self._activation("segment")
        return self._take_hints()

    def review_answer(self, view: Step) -> AnswerReview:
        """Activation when the worker proposes an answer."""
        if view.code is not None or view.cell is not None:
            self.spans.append(view)
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
        return self._events.drain()

    # -- activations --------------------------------------------------------

    def _activation(self, event: str) -> None:
        self.phase = phase_of(event)  # type: ignore[assignment]
        last_result: str | None = None
        for chain in range(self.config.max_chain + 1):
            self._log(E.Activation(event=event, chain=chain, draft=self._draft_id()))
            kind, last_result = run_activation(
                self.policy,
                self._context(),
                observe=lambda result: self._observe(event, result),
                apply=lambda action: self._apply(action, event),
                log=self._log,
                max_actions=self.config.max_actions,
                last_result=last_result,
            )
            # at turn start the worker must run next; elsewhere OPEN/UPDATE/FINALIZE chain on
            if event == "turn_start" or kind not in CHAINING or self._draft is None:
                break

    def _context(self) -> PolicyContext:
        return policy_context(
            self.workspace,
            self.store,
            self.spans,
            self.question,
            self._answer,
            self._draft,
            revisions=tuple(self.revisions),
            refused=dict(self._refused),
        )

    def _observe(self, event: str, last_result: str | None) -> Observation:
        q, a, d = self.question, self._answer, self._draft
        return observation(event, self.store, self.spans, self.turn, q, a, d, last_result)

    # -- control actions ----------------------------------------------------

    def _apply(self, action: A.ControlAction, event: str) -> str:
        check_legal(action.kind, event, self._draft, self.config.max_repairs)
        if isinstance(action, A.OpenState):
            start = self.spans.pending_start
            self._draft = new_draft(
                action, self.store, question=self.question, turn=self.turn, step_start=start
            )
            return f"opened {self._draft.state.id}"
        if isinstance(action, A.UpdateState | A.FinalizeRelations):
            assert self._draft is not None
            graph = self.workspace.graph
            return revise_draft(self._draft, action, self.store, self.spans.steps, graph)
        if isinstance(action, A.CommitState):
            return self._commit(event)
        if isinstance(action, A.Repair):
            return self._repair(action, event)
        if isinstance(action, A.AbandonState):
            return self._abandon(action.reason or "abandoned by policy")
        return "ok"  # ABSTAIN / RESUME_WORKER

    def _commit(self, event: str) -> str:
        assert self._draft is not None
        rels = normalize_relations(
            self.store, self._draft.state.relations, self._draft, self.workspace.graph
        )
        done = commit_draft(
            self._draft, self.spans.pending, self.workspace, self.store, rels, event=event
        )
        self._last_checkpoint, self._draft = done.checkpoint, None
        self.spans.committed()
        self._log(E.Commit(state=done.state.model_dump(mode="json"), checkpoint=done.saved))
        if done.unverified_steps:
            steps = ", ".join(map(str, done.unverified_steps))
            return f"committed {done.state.id} on unverified lineage (steps {steps})"
        return f"committed {done.state.id}"

    def _repair(self, action: A.Repair, event: str) -> str:
        assert self._draft is not None
        d = self._draft
        d.repairs += 1
        done = carry_out_repair(
            action,
            attempt=d.repairs,
            max_repairs=self.config.max_repairs,
            state_id=d.state.id,
            draft_steps=self.spans.since(d.step_start),
            workspace=self.workspace,
            last_checkpoint=self._last_checkpoint,
        )
        if done.mode == "rollback":
            self._abandon(f"repair budget spent after {d.repairs} attempts")
        self._pending_hints.append(done.hint)
        # the worker's next attempt is reviewed on its own steps, and forms the state
        self.spans.new_attempt()
        if self._draft is not None:
            self._draft.step_start, self._draft.updated = len(self.spans.steps), False
        self._answer_rejected = self._answer_rejected or event == "review"
        if event == "review" and self._answer is not None and action.evidence:
            self._refused.setdefault(refusal_key(self._answer), tuple(action.evidence))
        for payload in done.events(d.state.id, self._last_checkpoint):
            self._log(payload)
        return f"repair {done.attempt} ({done.mode})"

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
        revised = revised_versions(self.workspace.graph, self.revisions) if self.revisions else {}
        hint = turn_state_hint(self.store, self.draft, self.config.hint_states, revised)
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
        self._events.log(payload, turn=self.turn, step=self.spans.last_step)
