"""Branch state for search: each branch owns a live kernel; a child re-creates its parent's.

Choice (measured in ``benchmarks/verify_probe_cost.py``): a child branch is a fresh
tracked kernel that re-executes its parent's cells. Its lineage is then exact (the
stale-read rule needs it), and no value crosses processes. The price is the replay,
linear in the prefix; verification itself stays a fork probe of the branch's kernel.
Branches never share a kernel, so one branch's writes cannot reach another's state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from stateguard.checks import Step
from stateguard.kernel import KernelSession
from stateguard.lineage import TrackedSession
from stateguard.verify.environment import Environment, ProbeEnvironment
from stateguard.verify.search.policy import Proposal
from stateguard.worker.formatting import format_observation


@runtime_checkable
class Branch(Protocol):
    """One line of search: its steps so far and the state they built."""

    steps: list[Step]

    def run(self, proposal: Proposal, *, final: bool = False) -> Step:
        """Execute the proposal's code (or record its answer), append and return the step."""
        ...

    def environment(self) -> Environment:
        """Probe access to this branch's state as it stands."""
        ...

    def close(self) -> None:
        """Release the branch's kernel; idempotent."""
        ...


class BranchFactory(Protocol):
    """Makes branches: an empty root, and children holding a copy of a parent's state."""

    def root(self) -> Branch:
        """A branch with only the setup state."""
        ...

    def child(self, parent: Branch) -> Branch:
        """A new branch whose state and steps equal ``parent``'s."""
        ...


class KernelBranch:
    """A branch over its own `TrackedSession` (lineage on)."""

    def __init__(self, tracked: TrackedSession, setup: str = "", timeout: float = 120) -> None:
        """Start the kernel and run ``setup`` (not a step)."""
        self.tracked = tracked
        self.timeout = timeout
        self.steps: list[Step] = []
        tracked.start()
        if setup:
            tracked.execute(setup, timeout=timeout)

    def run(self, proposal: Proposal, *, final: bool = False) -> Step:
        """Execute ``proposal.code`` in this branch's kernel; an answer runs nothing."""
        if proposal.code is None:
            step = Step(thought=proposal.thought, answer=proposal.answer, final=True)
        else:
            res = self.tracked.execute(proposal.code, timeout=self.timeout)
            step = Step(
                thought=proposal.thought,
                code=proposal.code,
                observation=format_observation(res.execution, 4000),
                execution=res.execution,
                cell=res.cell,
                final=final,
            )
        self.steps.append(step)
        return step

    def environment(self) -> Environment:
        """Fork probes of this branch's kernel."""
        return ProbeEnvironment(self.tracked.kernel)

    def close(self) -> None:
        """Stop the kernel."""
        self.tracked.stop()


class KernelBranches:
    """A `BranchFactory` of kernel branches; ``make_kernel`` builds each new kernel."""

    def __init__(
        self,
        make_kernel: Callable[[], KernelSession] = KernelSession,
        *,
        setup: str = "",
        setup_code: str = "",
        timeout: float = 120,
    ) -> None:
        """``setup`` runs as a cell in every new kernel (e.g. loading the data);
        ``setup_code`` is silent bookkeeping run after each start (e.g. the join guard)."""
        self.make_kernel = make_kernel
        self.setup = setup
        self.setup_code = setup_code
        self.timeout = timeout
        self.replayed_cells = 0
        """Cells re-executed to create children (the cost of this choice)."""

    def _new(self) -> KernelBranch:
        tracked = TrackedSession(self.make_kernel(), setup_code=self.setup_code)
        return KernelBranch(tracked, self.setup, self.timeout)

    def root(self) -> KernelBranch:
        """A fresh kernel with the setup run."""
        return self._new()

    def child(self, parent: Branch) -> KernelBranch:
        """A fresh kernel that re-executes ``parent``'s cells in order.

        The child's steps carry the child's own executions and cell records (execution
        counts, lineage), so that reading a step's result reads it from this kernel.
        """
        branch = self._new()
        steps = []
        for step in parent.steps:
            if step.code is not None:
                res = branch.tracked.execute(step.code, timeout=self.timeout)
                self.replayed_cells += 1
                step = step.model_copy(
                    update={
                        "execution": res.execution,
                        "cell": res.cell,
                        "observation": format_observation(res.execution, 4000),
                    }
                )
            steps.append(step)
        branch.steps = steps
        return branch
