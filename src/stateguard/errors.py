"""The one error hierarchy of stateguard.

User code raising, timing out or killing its kernel is a *result*
(`ExecutionResult.status`), not an exception. These exceptions are for
failures of stateguard itself or misuse of its API. Exceptions never log;
the caller decides what to show.
"""

from __future__ import annotations


class StateguardError(Exception):
    """Base class of every error stateguard raises on purpose."""


class KernelError(StateguardError):
    """The kernel could not be started, reached, or is in the wrong state for a request."""


class KernelDiedError(KernelError):
    """The kernel process is dead; call `restart()` on the session."""


class LineageError(StateguardError):
    """The lineage engine got inconsistent input (e.g. a report for an unknown cell)."""


class CaseFormatError(StateguardError):
    """A lineage case file is malformed; the message names the case and field."""


class StoreError(StateguardError):
    """The state store refused an operation (e.g. modifying a committed state)."""


class ModelError(StateguardError):
    """A chat model backend failed or is not configured."""


class PolicyError(StateguardError):
    """A manager policy produced an action that is illegal in the current phase."""


class TaskFormatError(StateguardError):
    """A task or benchmark file is malformed; the message names the file and field."""


class IllegalActionError(PolicyError):
    """A manager action is not allowed in the current lifecycle phase."""

    def __init__(self, action: str, phase: str, reason: str) -> None:
        super().__init__(f"{action} is illegal in phase {phase!r}: {reason}")
        self.action = action
        self.phase = phase
        self.reason = reason
