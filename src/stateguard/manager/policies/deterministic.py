"""The deterministic policy: states and interventions from lineage and execution alone.

No LLM call, ever. At a review point it repairs on concrete evidence only:
a stale version used (with the superseding write), a claimed number no
successful execution produced in the turn, an executable constraint that
fails, a violated machine-checkable output requirement, a join-guard alarm
on a result the turn still uses (a merge that silently dropped, multiplied or
mis-paired rows; `stateguard.audit.joinpolicy`), or a result that still carries a
revised parameter's old value as a literal (`stateguard.manager.revisions`; an alarm when a
probe with the new value no longer shows the answer, `stateguard.manager.revision_probe`).
Otherwise it binds
the state's variables from lineage, infers relations and commits.
"""

from __future__ import annotations

from stateguard.finding import Finding
from stateguard.manager import actions as A
from stateguard.manager.binding import infer_relations
from stateguard.manager.evidence import (
    decimal_requirement,
    grounding_steps,
    off_answer,
    output_requirements,
    refused_again,
    silent_joins,
    stale_uses,
    unsupported_claims,
)
from stateguard.manager.notes import EvidenceFacts
from stateguard.manager.policies.base import Observation, PolicyContext
from stateguard.manager.revision_probe import corroborate
from stateguard.manager.revisions import suspects
from stateguard.manager.verify import constraint_failures
from stateguard.state import Constraint


def issue_from_question(question: str) -> str:
    """A short issue line taken from the question text."""
    line = " ".join((question or "").split())
    return (line[:157] + "…") if len(line) > 160 else (line or "(no question)")


class DeterministicPolicy:
    """Lineage- and execution-based decisions; zero LLM calls."""

    name = "deterministic"
    llm_calls = 0

    def constraints_for(self, question: str) -> tuple[Constraint, ...]:
        """Machine-checkable requirements stated in the question."""
        places = decimal_requirement(question)
        if places is None:
            return ()
        if places == 0:
            return (Constraint(text="report whole numbers (rounded to the nearest integer)"),)
        return (Constraint(text=f"report numbers with {places} decimal place(s)"),)

    def evidence(self, obs: Observation, ctx: PolicyContext) -> list[Finding]:
        """Every concrete finding against the steps under review."""
        steps = ctx.turn_steps if obs.event == "review" else ctx.pending_steps
        found = stale_uses(steps, ctx.graph)
        if obs.event == "review" and obs.answer is not None:
            # a doubt (the places are read from the question): the manager still asks for
            # the stated format on it
            found += output_requirements(ctx.question, obs.answer)
            before = [
                s for s in ctx.steps if steps and s.turn == steps[0].turn and s.step < steps[0].step
            ]  # the turn's attempts before a repair
            found += silent_joins(steps, before, ctx.question or None)
            grounds = grounding_steps(ctx.this_turn_steps or steps, obs.answer, ctx.question)
            suspected = suspects(steps, ctx.graph, ctx.revisions)
            found += off_answer(
                corroborate(suspected, ctx.graph, ctx.probe, obs.answer, ctx.question), grounds
            )
            claims = unsupported_claims(
                steps, obs.answer, ctx.question, grounds=ctx.this_turn_steps
            )
            found += claims
            # the claim check sees every step of the turn: what it no longer finds, a step
            # after the refusal printed
            settled = frozenset() if claims else frozenset({"unsupported_claim"})
            found += refused_again(obs.answer, ctx.refused, settled=settled)
        if obs.draft is not None:
            found += constraint_failures(obs.draft.constraints, ctx.probe)
        return found

    def decide_evidence(
        self, found: list[Finding], obs: Observation, ctx: PolicyContext
    ) -> list[Finding]:
        """Which findings justify a repair; ambiguous ones do not (no judge here).

        Severity does not decide the first repair: a doubt repairs as an alarm does (the
        decimal places the question asks for, a revised constant, a join loss the question
        forbids). It decides the next ones: once a draft was repaired, doubts alone no
        longer hold it back (`next_action`), so only evidence climbs the ladder."""
        return [e for e in found if not EvidenceFacts.of(e).ambiguous]

    def name_state(self, obs: Observation, ctx: PolicyContext) -> tuple[str, tuple[str, ...]]:
        """Issue and conclusions of the state under review."""
        conclusions = (obs.answer.strip(),) if obs.answer else ()
        return issue_from_question(ctx.question), conclusions

    def next_action(self, obs: Observation, ctx: PolicyContext) -> A.ControlAction | A.ToolAction:
        """One control action per activation; the harness chains OPEN/UPDATE/FINALIZE."""
        if obs.event == "turn_start":
            return A.OpenState(
                issue=issue_from_question(obs.question),
                constraints=self.constraints_for(obs.question),
            )
        steps = ctx.turn_steps if obs.event == "review" else ctx.pending_steps
        if obs.draft is None:
            if obs.event == "segment" and not any(s.cell and s.cell.created for s in steps):
                return A.ResumeWorker()
            if (
                obs.event == "review"
                and obs.repair_attempts == 0
                and not steps
                and not (obs.answer and refused_again(obs.answer, ctx.refused))
            ):
                # an answer refused earlier in the turn is reviewed again even after its
                # state was abandoned (a rollback leaves no steps): it does not slip through
                return A.Abstain(reason="nothing to record")
            return A.OpenState(
                issue=issue_from_question(ctx.question),
                constraints=self.constraints_for(ctx.question),
            )
        if not obs.draft_updated:
            bad = self.decide_evidence(self.evidence(obs, ctx), obs, ctx)
            if bad and obs.repair_attempts and not any(e.severity == "alarm" for e in bad):
                # a doubt is a second look, asked once: after a repair, the same draft
                # with doubts only goes on (alarms climb the ladder: heavy, rollback…)
                bad = []
            if bad:
                return A.Repair(
                    analytical_evidence=tuple(e.message for e in bad),
                    checks=tuple(dict.fromkeys(e.check for e in bad)),
                    evidence=tuple(bad),
                    suspected_variables=tuple(dict.fromkeys(v for e in bad for v in e.variables)),
                )
            if obs.event == "segment" and not any(s.cell and s.cell.created for s in steps):
                return A.ResumeWorker()
            issue, conclusions = self.name_state(obs, ctx)
            return A.UpdateState(issue=issue, conclusions=conclusions)
        if (obs.last_action_result or "").startswith("error: COMMIT_STATE"):
            # the harness refused the commit (its own verification): do not retry blindly
            return A.AbandonState(reason=obs.last_action_result or "")
        if not obs.relations_final:
            rels = infer_relations(obs.draft.used_variables, list(ctx.committed), ctx.graph)
            return A.FinalizeRelations(mode="reselect", relations=rels)
        return A.CommitState()
