"""Shared fixtures for the analytical-state tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from stateguard.state import AnalyticalState, Relation, StateStore, VariableRef


def make_state(
    state_id: str,
    issue: str = "an issue",
    *,
    rels: tuple[tuple[str, str | None], ...] = (),
    variables: tuple[tuple[str, int, str], ...] = (),
    conclusions: tuple[str, ...] = (),
    **extra: object,
) -> AnalyticalState:
    """Build a draft from compact tuples: rels=(("progress", "S1"),), variables=(("x", 1, "3"),)."""
    return AnalyticalState(
        id=state_id,
        issue=issue,
        relations=tuple(Relation(type=t, related_state_id=r) for t, r in rels),
        used_variables=tuple(
            VariableRef(name=n, version=v, value_summary=s) for n, v, s in variables
        ),
        conclusions=conclusions,
        **extra,
    )


@pytest.fixture
def mk() -> Callable[..., AnalyticalState]:
    """Factory for draft states (see ``make_state``)."""
    return make_state


@pytest.fixture
def store() -> Iterator[StateStore]:
    """A fresh in-memory store."""
    with StateStore(":memory:") as s:
        yield s
