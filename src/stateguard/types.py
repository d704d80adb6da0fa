"""Small shared identifier types used across packages."""

from __future__ import annotations

from typing import NewType

VarName = NewType("VarName", str)
"""A global variable name in the worker's namespace."""

CellId = NewType("CellId", int)
"""Index of an executed cell in a tracked session (0-based, in execution order)."""

StateId = NewType("StateId", str)
"""Identifier of an analytical state (e.g. ``S3``)."""
