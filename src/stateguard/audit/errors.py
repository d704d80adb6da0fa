"""Errors of the audit package (all `StateguardError`s, each naming what was wrong)."""

from __future__ import annotations

from stateguard.errors import StateguardError


class AuditError(StateguardError):
    """Base class of the audit package's errors."""


class SourceMapError(AuditError):
    """A lake cannot be indexed, or a source id or path is not in the map."""


class WorkloadFormatError(AuditError):
    """A KramaBench-style workload file is malformed; the message names the file and field."""


class OperatorRefused(AuditError):
    """An operator refused its arguments (e.g. a shell command that writes)."""
