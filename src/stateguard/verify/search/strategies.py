"""Best-of-N, beam search and DVTS over candidate steps, ranked by the step verifier.

- `best_of_n`: N independent greedy rollouts, each step verified; the trajectory with
  the best aggregate wins (ties: the better mean step score, then the earliest;
  `aggregate.path_rank`).
- `beam_search`: from each kept branch, K candidate next steps, each run in its own
  child branch and verified; the B children whose paths aggregate best are kept.
- `dvts`: the budget N is split into N // K independent subtrees; each advances
  greedily, keeping at every step the best of K verified candidates; the best
  subtree wins.

A rollout ends with an answer or after ``max_steps`` steps (the last one is then
marked final, so a missing answer scores 0). Every branch a strategy opens it also
closes, except the winner's, which the caller closes (`SearchResult.close`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from stateguard.checks import Step
from stateguard.verify.errors import SearchError
from stateguard.verify.models import StepVerdict, VerifyTask
from stateguard.verify.search.aggregate import (
    DEFAULT_AGGREGATE,
    Aggregate,
    aggregate,
    path_rank,
    tiebreak,
)
from stateguard.verify.search.branches import Branch, BranchFactory
from stateguard.verify.search.policy import Policy, Proposal
from stateguard.verify.verifier import Verifier


class Trajectory(BaseModel):
    """A finished (or budget-exhausted) line of search with its verdicts and score."""

    model_config = ConfigDict(frozen=True)

    steps: tuple[Step, ...]
    verdicts: tuple[StepVerdict, ...]
    score: float | None
    """The aggregate of the valid verdicts (None: no valid verdict)."""
    tiebreak: float | None = None
    """The aggregate of the verdicts' tiebreak scores (a chained verifier), else None."""
    invalid_steps: int = 0

    @property
    def answer(self) -> str | None:
        """The answer of the last step, if it gave one."""
        return self.steps[-1].answer if self.steps else None


class SearchResult(BaseModel):
    """The chosen trajectory, every trajectory scored, and the winner's live branch."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    best: Trajectory
    candidates: tuple[Trajectory, ...]
    branch: Branch | None = None
    """The winner's branch, still open (its kernel holds the final state)."""
    verifier_calls: int = 0

    def close(self) -> None:
        """Close the winner's branch."""
        if self.branch is not None:
            self.branch.close()


class _Node:
    """A branch with the verdicts of its steps."""

    def __init__(
        self, branch: Branch, verdicts: list[StepVerdict], base: int | None = None
    ) -> None:
        self.branch = branch
        self.verdicts = verdicts
        self.base = len(branch.steps) if base is None else base
        """Steps the branch had before this search (an earlier turn's): not searched here."""

    @property
    def steps(self) -> list[Step]:
        """The steps of this search."""
        return self.branch.steps[self.base :]

    @property
    def done(self) -> bool:
        steps = self.steps
        return bool(steps) and steps[-1].final

    def trajectory(self, how: Aggregate) -> Trajectory:
        return Trajectory(
            steps=tuple(self.steps),
            verdicts=tuple(self.verdicts),
            score=aggregate(self.verdicts, how),
            tiebreak=tiebreak(self.verdicts, how),
            invalid_steps=sum(1 for v in self.verdicts if not v.valid),
        )


class _Search:
    """What every strategy shares: the task, policy, verifier, branches and limits."""

    def __init__(
        self,
        task: VerifyTask,
        policy: Policy,
        verifier: Verifier,
        branches: BranchFactory,
        max_steps: int,
        how: Aggregate,
    ) -> None:
        if max_steps < 1:
            raise SearchError(f"max_steps must be >= 1, got {max_steps}")
        self.task, self.policy, self.verifier = task, policy, verifier
        self.branches, self.max_steps, self.how = branches, max_steps, how
        self.calls = 0

    def advance(self, node: _Node, proposal: Proposal, *, fork: bool) -> _Node:
        """Run one proposal (in a child branch when ``fork``) and verify it there."""
        branch = self.branches.child(node.branch) if fork else node.branch
        final = len(node.steps) + 1 >= self.max_steps
        branch.run(proposal, final=final)
        verdict = self.verifier.verify(
            self.task, branch.steps[node.base :], env=branch.environment(), verdicts=node.verdicts
        )
        self.calls += 1
        return _Node(branch, [*node.verdicts, verdict], node.base)

    def path_key(self, node: _Node) -> tuple[float, float, float]:
        return path_rank(node.verdicts, self.how)

    def finish(self, nodes: list[_Node]) -> SearchResult:
        """Pick the best node (ties: the earliest), close the others."""
        trajectories = [n.trajectory(self.how) for n in nodes]
        best = max(range(len(nodes)), key=lambda i: path_rank(nodes[i].verdicts, self.how))
        for i, n in enumerate(nodes):
            if i != best:
                n.branch.close()
        return SearchResult(
            best=trajectories[best],
            candidates=tuple(trajectories),
            branch=nodes[best].branch,
            verifier_calls=self.calls,
        )


def best_of_n(
    task: VerifyTask,
    policy: Policy,
    verifier: Verifier,
    branches: BranchFactory,
    *,
    n: int = 4,
    max_steps: int = 10,
    how: Aggregate = DEFAULT_AGGREGATE,
) -> SearchResult:
    """N independent greedy rollouts; the best aggregate wins."""
    if n < 1:
        raise SearchError(f"best_of_n needs n >= 1, got {n}")
    s = _Search(task, policy, verifier, branches, max_steps, how)
    nodes = []
    for _ in range(n):
        node = _Node(branches.root(), [])
        while not node.done:
            node = s.advance(node, policy.propose(task, node.steps, 1)[0], fork=False)
        nodes.append(node)
    return s.finish(nodes)


def _expand(s: _Search, node: _Node, k: int) -> list[_Node]:
    """K verified children of ``node``, each in its own branch."""
    proposals = s.policy.propose(s.task, node.steps, k)
    return [s.advance(node, p, fork=True) for p in proposals]


def beam_search(
    task: VerifyTask,
    policy: Policy,
    verifier: Verifier,
    branches: BranchFactory,
    *,
    beam_width: int = 2,
    candidates: int = 4,
    max_steps: int = 10,
    how: Aggregate = DEFAULT_AGGREGATE,
) -> SearchResult:
    """Keep the ``beam_width`` best paths; expand each by ``candidates`` verified steps."""
    if not 1 <= beam_width <= candidates:
        raise SearchError(f"need 1 <= beam_width <= candidates, got {beam_width}, {candidates}")
    s = _Search(task, policy, verifier, branches, max_steps, how)
    root = _Node(branches.root(), [])
    beams = [root]
    while not all(b.done for b in beams):
        pool = [b for b in beams if b.done]
        for b in beams:
            if not b.done:
                pool.extend(_expand(s, b, candidates))
                b.branch.close()
        # stable: among equal paths the earlier candidate stays
        ranked = sorted(pool, key=s.path_key, reverse=True)
        beams, dropped = ranked[:beam_width], ranked[beam_width:]
        for d in dropped:
            d.branch.close()
    return s.finish(beams)


def dvts(
    task: VerifyTask,
    policy: Policy,
    verifier: Verifier,
    branches: BranchFactory,
    *,
    n: int = 8,
    candidates: int = 2,
    max_steps: int = 10,
    how: Aggregate = DEFAULT_AGGREGATE,
) -> SearchResult:
    """``n // candidates`` independent subtrees, each greedy over ``candidates`` per step."""
    if candidates < 1 or n < candidates:
        raise SearchError(f"dvts needs 1 <= candidates <= n, got candidates={candidates}, n={n}")
    s = _Search(task, policy, verifier, branches, max_steps, how)
    leaves = []
    for _ in range(n // candidates):
        node = _Node(branches.root(), [])
        while not node.done:
            children = _expand(s, node, candidates)
            node.branch.close()
            best = max(range(len(children)), key=lambda i: path_rank(children[i].verdicts[-1:]))
            for i, c in enumerate(children):
                if i != best:
                    c.branch.close()
            node = children[best]
        leaves.append(node)
    return s.finish(leaves)
