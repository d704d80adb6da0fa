"""Errors of the verify package (API misuse; a bad model reply is a verdict, not an error)."""

from __future__ import annotations

from stateguard.errors import StateguardError


class VerifyError(StateguardError):
    """The verifier was called with inconsistent input (e.g. a step index out of range)."""


class SearchError(StateguardError):
    """A test-time search was configured wrongly (e.g. a beam wider than its candidates)."""
