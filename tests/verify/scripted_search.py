"""A scripted search environment: in-process branches over dict namespaces, a table policy."""

from __future__ import annotations

import contextlib
import copy
import io
from collections.abc import Sequence

from stateguard.checks import Step
from stateguard.kernel import ErrorInfo, ExecutionResult, ProbeResult
from stateguard.verify import VerifyTask
from stateguard.verify.search import Proposal


class DictBranch:
    def __init__(self, factory: DictBranches, ns: dict) -> None:
        self.factory, self.ns, self.steps, self.closed = factory, ns, [], False

    def run(self, proposal: Proposal, *, final: bool = False) -> Step:
        assert not self.closed, "ran a step on a closed branch"
        if proposal.code is None:
            step = Step(thought=proposal.thought, answer=proposal.answer, final=True)
        else:
            out = io.StringIO()
            try:
                with contextlib.redirect_stdout(out):
                    exec(proposal.code, self.ns)
                ex = ExecutionResult(status="ok", stdout=out.getvalue(), wall_time=0.0)
            except Exception as exc:
                ex = ExecutionResult(
                    status="error",
                    wall_time=0.0,
                    error=ErrorInfo(ename=type(exc).__name__, evalue=str(exc)),
                )
            step = Step(
                thought=proposal.thought,
                code=proposal.code,
                observation=ex.stdout,
                execution=ex,
                final=final,
            )
        self.steps.append(step)
        return step

    def environment(self) -> DictBranch:
        return self

    def probe(self, code: str, timeout: float = 30.0) -> ProbeResult:
        return ProbeResult(status="ok", wall_time=0.0)

    def close(self) -> None:
        self.closed = True


class DictBranches:
    def __init__(self, setup: str = "data = [1, 2, 3, 4]") -> None:
        self.setup = setup
        self.made: list[DictBranch] = []

    def root(self) -> DictBranch:
        ns: dict = {}
        exec(self.setup, ns)
        return self._keep(DictBranch(self, ns))

    def child(self, parent: DictBranch) -> DictBranch:
        ns = {k: copy.deepcopy(v) for k, v in parent.ns.items() if k != "__builtins__"}
        branch = DictBranch(self, ns)
        branch.steps = list(parent.steps)
        return self._keep(branch)

    def _keep(self, b: DictBranch) -> DictBranch:
        self.made.append(b)
        return b

    def open(self) -> list[DictBranch]:
        return [b for b in self.made if not b.closed]


def code(c: str) -> Proposal:
    return Proposal(code=c)


def answer(a: str) -> Proposal:
    return Proposal(answer=a)


class TablePolicy:
    """Candidates by the code/answers of the steps so far; ``queue`` for repeated prefixes."""

    def __init__(self, table: dict[tuple[str, ...], list[list[Proposal]]]) -> None:
        self.table = {k: list(v) for k, v in table.items()}
        self.calls: list[tuple[tuple[str, ...], int]] = []

    def propose(self, task: VerifyTask, steps: Sequence[Step], n: int) -> list[Proposal]:
        key = tuple(s.code or s.answer or "" for s in steps)
        self.calls.append((key, n))
        options = self.table[key]
        batch = options.pop(0) if len(options) > 1 else options[0]
        assert len(batch) >= n, f"script has {len(batch)} candidates for {key}, asked {n}"
        return batch[:n]
