"""Test-time search with the step verifier: Best-of-N, beam search and DVTS.

A `Policy` proposes candidate next steps; every candidate runs in its own branch
(`BranchFactory`: a live kernel per branch, a child re-created from its parent's
cells), is verified there, and the strategies keep what scores best.
"""

from stateguard.verify.search.aggregate import AGGREGATES, Aggregate, aggregate
from stateguard.verify.search.branches import Branch, BranchFactory, KernelBranches
from stateguard.verify.search.policy import ModelPolicy, Policy, Proposal
from stateguard.verify.search.strategies import (
    SearchResult,
    Trajectory,
    beam_search,
    best_of_n,
    dvts,
)
from stateguard.verify.search.turns import STRATEGIES, Strategy, TurnSearch, search_turns

__all__ = [
    "AGGREGATES",
    "STRATEGIES",
    "Aggregate",
    "Branch",
    "BranchFactory",
    "KernelBranches",
    "ModelPolicy",
    "Policy",
    "Proposal",
    "SearchResult",
    "Strategy",
    "Trajectory",
    "TurnSearch",
    "aggregate",
    "beam_search",
    "best_of_n",
    "dvts",
    "search_turns",
]
