"""A subset carried over from an earlier question into one that does not ask for it.

Turn 4 asks about the Online channel and the agent writes ``online = orders[
orders["channel"] == "Online"]``; turn 5 asks for the total of the whole year, and a
small model computes it from ``online``. The cell runs, the number looks right, and it
is the Online total. `ScopeLog` remembers which variables an assignment made by
selecting rows on a value (``frame[col] == value``, ``.isin([...])``, see
`stateguard.audit.filterchecks.equality_filters`), and in which turn; `carried` names the
ones a later turn's cell reads although its question mentions none of their values.

The same selection is often written inline instead (``orders.loc[orders["channel"] ==
"Online", "net"].sum()``), and a small model copies the cell of the turn before into the
next one with it. `ScopeLog` also remembers, per turn, the values cells selected rows on
inline; `carried_filters` names the selections of a later turn's cell on a value an
earlier turn selected on while the later question mentions none of them.
"""

from __future__ import annotations

import ast
from typing import Any

from pydantic import BaseModel, ConfigDict

from stateguard.audit.filterchecks import equality_filters


class CarriedSubset(BaseModel):
    """A variable made in ``turn`` by selecting rows on ``values``, read in a later turn."""

    model_config = ConfigDict(frozen=True)

    name: str
    turn: int
    selections: list[str]
    """``frame['col'] == value`` as written, one per value."""

    def describe(self) -> str:
        """One sentence for the observation."""
        return (
            f"`{self.name}` was made in turn {self.turn} by selecting "
            + " and ".join(self.selections)
            + ", which this question does not ask for"
        )


def _assignments(code: str) -> dict[str, list[tuple[str, str, Any]]]:
    """Plain names assigned from an expression that selects rows on values."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return {}
    found: dict[str, list[tuple[str, str, Any]]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign):
            continue
        filters = equality_filters(ast.unparse(node.value))
        if not filters:
            continue
        for target in node.targets:
            if isinstance(target, ast.Name):
                found[target.id] = filters
    return found


def _reads(code: str) -> set[str]:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _mentioned(value: Any, text: str) -> bool:
    return str(value).strip().lower() in text.lower()


class CarriedFilter(BaseModel):
    """``frame[column] == value`` selected by a cell, as cells of ``turn`` did."""

    model_config = ConfigDict(frozen=True)

    frame: str
    column: str
    value: Any
    turn: int

    @property
    def selection(self) -> str:
        return f"{self.frame}[{self.column!r}] == {self.value!r}"


class ScopeLog:
    """Which variables were made by selecting rows on values, and in which turn; which
    values cells selected rows on, in which turns."""

    def __init__(self) -> None:
        self._made: dict[str, tuple[int, list[tuple[str, str, Any]]]] = {}
        self._filtered: dict[tuple[str, str, str], set[int]] = {}

    def record(self, turn: int, code: str, made: set[str] | None = None) -> None:
        """Account for a cell that ran in ``turn``: its assignments replace earlier ones
        (a name assigned without a selection is no longer a subset). ``made``: the names
        the cell actually bound (lineage's created versions; a failing cell binds those
        before the error), default every name it assigns."""
        subsets = _assignments(code)
        try:
            assigned = {
                t.id
                for n in ast.walk(ast.parse(code))
                if isinstance(n, ast.Assign)
                for t in n.targets
                if isinstance(t, ast.Name)
            }
        except SyntaxError:
            return
        for frame, column, value in equality_filters(code):
            self._filtered.setdefault((frame, column, repr(value)), set()).add(turn)
        for name in assigned if made is None else assigned & made:
            if name in subsets:
                self._made[name] = (turn, subsets[name])
            else:
                self._made.pop(name, None)

    def carried(self, turn: int, code: str, question: str) -> list[CarriedSubset]:
        """Subsets made in an earlier turn that ``code`` reads while ``question`` (with its
        context) mentions none of the values they were selected on."""
        reads = _reads(code) - set(_assignments(code))
        out = []
        for name in sorted(reads):
            made = self._made.get(name)
            if made is None or made[0] >= turn:
                continue
            made_in, filters = made
            if any(_mentioned(value, question) for _, _, value in filters):
                continue
            selections = [f"{frame}[{col!r}] == {value!r}" for frame, col, value in filters]
            out.append(CarriedSubset(name=name, turn=made_in, selections=selections))
        return out

    def carried_filters(self, turn: int, code: str, question: str) -> list[CarriedFilter]:
        """The selections on a value (`equality_filters`) ``code`` makes that cells of an
        earlier turn made too, while ``question`` (with its context) mentions none of the
        values ``code`` selects on; the latest earlier turn for each."""
        filters = equality_filters(code)
        if any(_mentioned(value, question) for _, _, value in filters):
            return []
        out = []
        for frame, column, value in filters:
            earlier = [t for t in self._filtered.get((frame, column, repr(value)), ()) if t < turn]
            found = CarriedFilter(frame=frame, column=column, value=value, turn=max(earlier or [0]))
            if earlier and found not in out:
                out.append(found)
        return out
