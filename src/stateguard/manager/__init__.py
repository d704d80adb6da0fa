"""The StateGuard manager: analytical-state lifecycle harness and policies.

The worker sees only `Supervisor` (protocol.py) and the hints it returns.
"""

from stateguard.manager.protocol import (
    AnswerReview,
    Hint,
    ManagerEvent,
    NullSupervisor,
    Supervisor,
)

__all__ = [
    "AnswerReview",
    "Hint",
    "ManagerEvent",
    "NullSupervisor",
    "Supervisor",
]

from stateguard.manager.factory import SUPERVISOR_KINDS, build_supervisor
from stateguard.manager.harness import HarnessConfig, StateHarness

__all__ += ["SUPERVISOR_KINDS", "HarnessConfig", "StateHarness", "build_supervisor"]
