"""`StepVerifier`: the deterministic layer first, an LLM only where the evidence is not decisive.

Modes:

- ``execution``: the baseline: a cell that ran is 1, one that failed is 0 (an answer is 1);
- ``deterministic``: the rules of `stateguard.verify.rules`; a step no rule decides is 1,
  or 0.5 when a rule reported a warning (lost rows…);
- ``hybrid``: the rules; a step they do not decide goes to the LLM layer with their facts;
- ``llm``: every step goes to the LLM layer (the rules' findings are its facts).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Literal, Protocol

from stateguard.checks import Step
from stateguard.finding import Finding
from stateguard.llm import ChatModel
from stateguard.verify.environment import Environment
from stateguard.verify.errors import VerifyError
from stateguard.verify.llm_layer import LLMLayer
from stateguard.verify.models import StepVerdict, VerifyTask
from stateguard.verify.rules import CHECKS, RULES, Rule, RuleInput

VerifierMode = Literal["execution", "deterministic", "hybrid", "llm"]
VERIFIER_MODES: tuple[VerifierMode, ...] = ("execution", "deterministic", "hybrid", "llm")


class Verifier(Protocol):
    """What a search needs of a verifier: a `StepVerifier`, or a `ChainedVerifier`
    (`stateguard.verify.chain`)."""

    def verify(
        self,
        task: VerifyTask,
        steps: Sequence[Step],
        index: int | None = None,
        env: Environment | None = None,
        verdicts: Sequence[StepVerdict | None] = (),
    ) -> StepVerdict: ...


class StepVerifier:
    """Scores steps of a trajectory in {0, 0.5, 1} (or invalid), with rationale and evidence."""

    def __init__(
        self,
        mode: VerifierMode = "deterministic",
        *,
        model: ChatModel | None = None,
        max_rounds: int = 3,
        probe_timeout: float = 30.0,
        rules: Sequence[Rule] = RULES,
    ) -> None:
        """``model`` is required for ``hybrid`` and ``llm``; ``rules``: the deterministic
        layer's rules (default: all of `stateguard.verify.rules.RULES`)."""
        if mode not in VERIFIER_MODES:
            raise VerifyError(f"unknown verifier mode {mode!r}; expected one of {VERIFIER_MODES}")
        if mode in ("hybrid", "llm") and model is None:
            raise VerifyError(f"verifier mode {mode!r} needs a model")
        self.mode = mode
        self.probe_timeout = probe_timeout
        self.rules = tuple(rules)
        self.llm = (
            LLMLayer(model, max_rounds=max_rounds, probe_timeout=probe_timeout)
            if model is not None
            else None
        )

    def verify(
        self,
        task: VerifyTask,
        steps: Sequence[Step],
        index: int | None = None,
        env: Environment | None = None,
        verdicts: Sequence[StepVerdict | None] = (),
    ) -> StepVerdict:
        """The verdict on ``steps[index]`` (default: the last), ``env`` being the state after it.

        ``verdicts`` are the earlier steps' verdicts (the LLM layer reads them).
        """
        steps = tuple(steps)
        index = self.step_index(steps, index)
        if self.mode == "execution":
            return self._execution(steps[index])
        results, spent = self.rule_results(task, steps, index, env)
        return self.conclude(task, steps, index, env, verdicts, results, spent)

    @staticmethod
    def step_index(steps: Sequence[Step], index: int | None) -> int:
        """``index`` checked against ``steps`` (None: the last step)."""
        index = len(steps) - 1 if index is None else index
        if not 0 <= index < len(steps):
            raise VerifyError(f"step index {index} is out of range for {len(steps)} steps")
        return index

    def rule_results(
        self,
        task: VerifyTask,
        steps: Sequence[Step],
        index: int,
        env: Environment | None,
    ) -> tuple[list[Finding], float]:
        """The deterministic layer's results on ``steps[index]``, and the seconds they took."""
        started = time.perf_counter()
        results = CHECKS.run(
            RuleInput(
                task=task,
                steps=tuple(steps),
                index=index,
                env=env,
                probe_timeout=self.probe_timeout,
            ),
            self.rules,
        )
        return results, time.perf_counter() - started

    def conclude(
        self,
        task: VerifyTask,
        steps: Sequence[Step],
        index: int,
        env: Environment | None,
        verdicts: Sequence[StepVerdict | None],
        results: Sequence[Finding],
        spent: float = 0.0,
    ) -> StepVerdict:
        """The verdict from the rules' ``results`` (`rule_results`), by this verifier's mode:
        the worst settled score (alarms, firm doubts), else the doubts (``deterministic``)
        or the LLM layer."""
        evidence = tuple(results)
        decisive = [r for r in results if r.settles]
        if decisive and self.mode != "llm":
            worst = min(decisive, key=lambda r: r.score or 0.0)
            return StepVerdict(
                score=worst.score,  # type: ignore[arg-type]
                rationale=worst.message,
                evidence=evidence,
                layer="deterministic",
                probe_seconds=spent,
            )
        if self.mode == "deterministic":
            warned = [r.score for r in results if r.score is not None]
            score = min(warned) if warned else 1.0
            why = "; ".join(e.message for e in evidence) or "no rule found a problem"
            return StepVerdict(
                score=score,
                rationale=why,
                evidence=evidence,
                layer="deterministic",
                probe_seconds=spent,
            )
        if self.llm is None:
            raise VerifyError(f"verifier mode {self.mode!r} needs a model")
        verdict = self.llm.judge(task, tuple(steps), index, env, evidence, verdicts)
        return verdict.model_copy(update={"probe_seconds": verdict.probe_seconds + spent})

    def verify_all(
        self, task: VerifyTask, steps: Sequence[Step], env: Environment | None = None
    ) -> list[StepVerdict]:
        """Verdicts for every step of a recorded trajectory, earlier ones fed to later ones.

        ``env`` (the state after the *last* step) is used for the last step only: the
        earlier states are gone from a recorded trajectory.
        """
        out: list[StepVerdict] = []
        for i in range(len(steps)):
            out.append(self.verify(task, steps, i, env if i == len(steps) - 1 else None, out))
        return out

    @staticmethod
    def _execution(step: Step) -> StepVerdict:
        ex = step.execution
        if ex is None or ex.ok:
            return StepVerdict(score=1.0, rationale="ran without error", layer="execution")
        err = f"{ex.error.ename}: {ex.error.evalue}" if ex.error else ex.status
        return StepVerdict(score=0.0, rationale=f"failed: {err}", layer="execution")
