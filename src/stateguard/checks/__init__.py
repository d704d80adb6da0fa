"""Checks over a step: one `Step` type, one `Finding` type, one registry, severity that
follows evidence.

`Step` is one step of a trajectory as the worker records it, the manager reviews it and
the verifier scores it (`stateguard.checks.step`). `stateguard.finding.Finding` is the
one shape of what a check found (re-exported here); `CheckRegistry` holds named checks
over a context and runs them in order. The verifier's rules (`stateguard.verify.rules`)
and the worker's doubts (`stateguard.worker.doubts`) are registered checks; the verifier
turns findings into scores, the worker into notes the agent reads. The data checks both
run (a Series printed for one value, a filter on an absent value, a blank column, a
mapping that lost values) are written once, in `stateguard.checks.data`: each finds the
facts and words them, and each consumer only weighs them.
"""

from stateguard.checks.registry import Check, CheckError, CheckRegistry
from stateguard.checks.step import Step
from stateguard.finding import SEVERITIES, Basis, Finding, Severity

__all__ = [
    "SEVERITIES",
    "Basis",
    "Check",
    "CheckError",
    "CheckRegistry",
    "Finding",
    "Severity",
    "Step",
]
