"""A labelled step set from replays: reference steps (1), planted silent errors (0), and
inserted exploration errors followed by their correction (0.5), each verified live.

Per session, one tracked kernel runs the reference turns in order (their steps are
labelled 1, verified with probes of that kernel). For each turn, a second kernel is
reset and re-executes everything run before the turn, then runs one variant:

- a mutant from a `Mutator` (flipped comparison, dropped filter, widened scope, join
  faults…). It counts as a silent error only if it runs without error and shows a
  different output than the reference; otherwise it is dropped (loud or no-op);
- an exploration error: the reference with one string key misspelled, which must fail
  with a grounding error; the reference then runs as the correction.

No model is needed to build the set; the verifiers given score every step.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from stateguard.checks import Step
from stateguard.lineage import TrackedSession
from stateguard.verify.models import StepVerdict, VerifyTask
from stateguard.verify.rules import GROUNDING_ERRORS
from stateguard.verify.search.branches import KernelBranch
from stateguard.verify.search.policy import Proposal
from stateguard.verify.verifier import StepVerifier

Mutator = Callable[[str, Sequence[str]], list[str]]
"""(reference code, column names of the session's frames) -> mutated versions of the code
(empty when the mutation does not apply)."""

MAX_VARIANTS = 40
"""Variants tried per turn at most, taken round-robin over the mutation kinds."""

_COLUMNS = (
    "sorted({str(c) for v in list(globals().values()) if type(v).__name__ == 'DataFrame'"
    " for c in v.columns})"
)


class EvalTurn(BaseModel):
    """One turn of a replayed session."""

    model_config = ConfigDict(frozen=True)

    question: str
    code: str
    setup: str = ""
    """Context code run before the turn (not a step of the agent)."""


class EvalSession(BaseModel):
    """A session to label: its turns in order."""

    model_config = ConfigDict(frozen=True)

    name: str
    turns: tuple[EvalTurn, ...]


class LabelledStep(BaseModel):
    """One step of the set with its label and every verifier's verdict."""

    model_config = ConfigDict(frozen=True)

    session: str
    turn: int
    label: float
    kind: str
    """``reference``, ``exploration`` or the mutation kind."""
    code: str
    output: str = ""
    verdicts: dict[str, StepVerdict]


def _output(step: Step) -> str:
    ex = step.execution
    if ex is None:
        return ""
    return "\n".join(
        [ex.stdout, ex.result or ""] + [str(d.data.get("text/plain", "")) for d in ex.displays]
    )


def misspell_key(code: str) -> str | None:
    """The code with its first string subscript key misspelled (``df['a']`` → ``df['a_x']``)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)
            and isinstance(node.ctx, ast.Load)
        ):
            node.slice = ast.Constant(node.slice.value + "_x")
            return ast.unparse(tree)
    return None


class _Replayer:
    """The second kernel: reset, re-run the prefix, then a variant."""

    def __init__(self, tracked: TrackedSession, timeout: float) -> None:
        self.branch = KernelBranch(tracked, timeout=timeout)

    def prepare(self, prefix: Sequence[str], steps: Sequence[Step]) -> KernelBranch:
        self.branch.tracked.reset()
        for code in prefix:
            self.branch.tracked.execute(code, timeout=self.branch.timeout)
        self.branch.steps = list(steps)
        return self.branch


def _as_result(branch: KernelBranch) -> None:
    """Mark the branch's last step as the turn's result step (a DSEval cell is one)."""
    branch.steps[-1] = branch.steps[-1].model_copy(update={"result": True})


def _round_robin(groups: Iterable[list[tuple[str, str]]]) -> list[tuple[str, str]]:
    """The first variant of every kind, then the second of every kind, … (no duplicates)."""
    lists = [g for g in groups if g]
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for i in range(max((len(g) for g in lists), default=0)):
        for g in lists:
            if i < len(g) and g[i][1] not in seen:
                seen.add(g[i][1])
                out.append(g[i])
    return out


def label_session(
    session: EvalSession,
    make_tracked: Callable[[], TrackedSession],
    verifiers: Mapping[str, StepVerifier],
    mutators: Mapping[str, Mutator],
    *,
    timeout: float = 60,
    on_step: Callable[[LabelledStep], None] | None = None,
) -> list[LabelledStep]:
    """Label and verify every step of ``session`` (see the module docstring)."""
    out: list[LabelledStep] = []

    def verify(
        kind: str,
        label: float,
        turn_no: int,
        task: VerifyTask,
        branch: KernelBranch,
        index: int | None = None,
    ) -> None:
        steps = branch.steps
        i = len(steps) - 1 if index is None else index
        env = branch.environment() if index is None else None
        verdicts = {name: v.verify(task, steps, i, env) for name, v in verifiers.items()}
        item = LabelledStep(
            session=session.name,
            turn=turn_no,
            label=label,
            kind=kind,
            code=steps[i].code or "",
            output=_output(steps[i])[:2000],
            verdicts=verdicts,
        )
        out.append(item)
        if on_step is not None:
            on_step(item)

    main = KernelBranch(make_tracked(), timeout=timeout)
    replay = _Replayer(make_tracked(), timeout)
    prefix: list[str] = []
    try:
        for turn_no, turn in enumerate(session.turns, 1):
            if turn.setup:
                main.tracked.execute(turn.setup, timeout=timeout)
                prefix.append(turn.setup)
            task = VerifyTask(question=turn.question)
            before = list(main.steps)
            ref = main.run(Proposal(code=turn.code))
            if ref.execution is None or not ref.execution.ok:
                prefix.append(turn.code)
                continue  # a reference that fails here (e.g. a removed pandas API) is skipped
            _as_result(main)
            verify("reference", 1.0, turn_no, task, main)
            probe = main.environment().probe(_COLUMNS, timeout=timeout)
            columns = [str(c) for c in probe.value] if probe.ok and probe.value else []
            variants = _round_robin(
                [(kind, m) for m in mut(turn.code, columns) if m.strip() != turn.code.strip()]
                for kind, mut in mutators.items()
            )[:MAX_VARIANTS]
            for kind, code in variants:
                branch = replay.prepare(prefix, before)
                step = branch.run(Proposal(code=code))
                _as_result(branch)
                if step.execution is None or not step.execution.ok or _output(step) == _output(ref):
                    continue
                verify(kind, 0.0, turn_no, task, branch)
            wrong = misspell_key(turn.code)
            if wrong is not None:
                branch = replay.prepare(prefix, before)
                step = branch.run(Proposal(code=wrong))
                err = step.execution.error if step.execution is not None else None
                if err is not None and err.ename in GROUNDING_ERRORS:
                    branch.run(Proposal(code=turn.code))
                    _as_result(branch)
                    verify("exploration", 0.5, turn_no, task, branch, index=len(before))
            prefix.append(turn.code)
    finally:
        main.close()
        replay.branch.close()
    return out


def load_labelled(path: Path) -> list[LabelledStep]:
    """Read a JSONL file of labelled steps."""
    return [
        LabelledStep.model_validate_json(line)
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
