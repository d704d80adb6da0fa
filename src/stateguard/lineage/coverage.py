"""Which guarded blocks of a cell ran: markers inserted into the cell's code.

Runs inside the kernel. Before a tracked cell runs, `BlockMarkers` gives each
guarded block of the cell (see `lineage._paths`) a slot in one shared list;
an IPython AST transformer then inserts, at the head of each such block, the
statement ``__sg_cov__[slot] = 1``. A ``for`` body is marked without any cost
per iteration: its iterable is wrapped once by ``__sg_for__(slot, iterable)``,
which looks at whether there is a first element and hands back an equivalent
iterable. Markers inside function bodies keep their slots, so a later call of
the function shows which of its branches ran during that call's cell.

Silent executions (host bookkeeping, probes) are not transformed.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable, Iterable
from typing import Any

from stateguard.lineage._paths import after_key, block_key

COVER_NAME = "__sg_cov__"
FOR_NAME = "__sg_for__"
SNAP_NAME = "__sg_snap__"

_SIZED = (list, tuple, range, dict, set, frozenset, str, bytes)

#: The marker slots of this kernel (one lineage agent per kernel). Module-level, like
#: `for_marker`, so functions defined in cells stay picklable by reference (joblib, Ray).
COVER: list[int] = []


#: top-level statement index -> slots of function blocks its calls reached (statements of a
#: cell that call functions with guarded reads; the last statement's are left in COVER)
SNAPS: dict[int, frozenset[int]] = {}
#: the function-block slots watched per statement, and every one seen this cell
WATCH: list[int] = []
SEEN: set[int] = set()


def snapshot(index: int) -> None:
    """After top-level statement `index`: note which watched slots it reached, then clear
    them for the next statement (`restore` puts them back for the cell as a whole)."""
    hit = frozenset(s for s in WATCH if COVER[s])
    SNAPS[index] = hit
    for s in hit:
        COVER[s] = 0
    SEEN.update(hit)


def restore() -> None:
    """Mark again every watched slot a statement of the cell reached."""
    for s in SEEN:
        COVER[s] = 1


#: slot of a ``for`` body -> the ``range`` its loop ran over in the current cell (None when
#: it ran over several different ones): ``lst[i]`` in the body read those positions.
RANGES: dict[int, range | None] = {}


def for_marker(slot: int, iterable: Any) -> Any:
    """Mark `slot` when `iterable` yields a first element; return an equivalent iterable."""
    if type(iterable) in _SIZED:
        if len(iterable):
            COVER[slot] = 1
            if type(iterable) is range:
                RANGES[slot] = iterable if RANGES.get(slot, iterable) == iterable else None
        return iterable
    it = iter(iterable)
    for first in it:
        COVER[slot] = 1
        return itertools.chain((first,), it)
    return it


class BlockMarkers(ast.NodeTransformer):
    """Allocates marker slots and inserts the markers (an IPython AST transformer)."""

    def __init__(self) -> None:
        self.cov = COVER
        self.ranges = RANGES
        self.snaps = SNAPS
        self._snap_after: set[int] = set()
        self._keys: dict[int, int] = {}  # block key -> slot, for the cell being run
        self.active = False
        self.armed = False
        self.failed = False
        self.on_tree: Callable[[ast.Module], None] | None = None
        """Called with the cell's parsed tree before markers go in (the lineage agent
        analyses the tree IPython already parsed instead of parsing the cell again)."""

    # -- slots ---------------------------------------------------------------

    def prepare(self, keys: Iterable[int]) -> dict[int, int]:
        """Give every guarded block key of the next cell a fresh slot."""
        self._keys = {}
        for key in keys:
            if key not in self._keys:
                self._keys[key] = len(self.cov)
                self.cov.append(0)
        self.active = bool(self._keys)
        self.failed = False
        RANGES.clear()
        SNAPS.clear()
        SEEN.clear()
        self._snap_after = set()
        return dict(self._keys)

    def watch(self, slots: Iterable[int], after: Iterable[int]) -> None:
        """Snapshot the function-block `slots` after each top-level statement in `after`."""
        WATCH[:] = sorted(slots)
        self._snap_after = set(after) if WATCH else set()
        if self._snap_after:
            self.active = True

    def ran(self, slots: dict[int, int]) -> set[int]:
        """Keys among `slots` whose marker was reached."""
        cov = self.cov
        return {k for k, s in slots.items() if cov[s]}

    def reset(self, slots: Iterable[int]) -> None:
        """Clear slots (a function's markers, before a cell that may call it)."""
        cov = self.cov
        for s in slots:
            cov[s] = 0

    for_wrapper = staticmethod(for_marker)

    # -- the transformer -------------------------------------------------------

    def visit_Module(self, node: ast.Module) -> ast.Module:
        if self.armed:
            self.armed = False
            if self.on_tree is not None:
                try:
                    self.on_tree(node)
                except Exception:  # IPython would drop a transformer that raises
                    self.active = False
                    return node
        if not self.active:
            return node
        self.active = False  # one cell, one pass
        try:
            if self._snap_after:
                top = list(node.body)
                self._walk(node.body)
                for index in sorted(self._snap_after, reverse=True):
                    if index < len(top) - 1:
                        at = node.body.index(top[index]) + 1
                        node.body.insert(at, _snap(index, top[index]))
            else:
                self._walk(node.body)
            ast.fix_missing_locations(node)
        except Exception:  # some markers may be missing: every block counts as run
            self.failed = True
        return node

    def _walk(self, body: list[ast.stmt], for_body: bool = False) -> None:
        i = 0
        while i < len(body):
            stmt = body[i]
            for sub in _bodies(stmt):
                self._walk(sub, for_body=isinstance(stmt, ast.For) and sub is stmt.body)
            if isinstance(stmt, ast.For) and stmt.body:
                slot = self._keys.get(block_key(stmt.body[0]))
                if slot is not None:
                    call = ast.Call(
                        func=ast.Name(id=FOR_NAME, ctx=ast.Load()),
                        args=[ast.Constant(slot), stmt.iter],
                        keywords=[],
                    )
                    stmt.iter = ast.copy_location(call, stmt.iter)
            slot = self._keys.get(block_key(stmt))
            if slot is not None and not (for_body and i == 0):
                body.insert(i, _marker(slot, stmt))
                i += 1
            after = self._keys.get(after_key(stmt))
            if after is not None:
                body.insert(i + 1, _marker(after, stmt))  # reached when stmt completed
                i += 1
            i += 1

    def visit(self, node: ast.AST) -> Any:  # only modules are transformed
        if isinstance(node, ast.Module):
            return self.visit_Module(node)
        return node


def _marker(slot: int, at: ast.stmt) -> ast.stmt:
    target = ast.Subscript(
        value=ast.Name(id=COVER_NAME, ctx=ast.Load()), slice=ast.Constant(slot), ctx=ast.Store()
    )
    node = ast.Assign(targets=[target], value=ast.Constant(1), lineno=at.lineno)
    return ast.copy_location(node, at)


def _snap(index: int, at: ast.stmt) -> ast.stmt:
    call = ast.Call(
        func=ast.Name(id=SNAP_NAME, ctx=ast.Load()), args=[ast.Constant(index)], keywords=[]
    )
    return ast.copy_location(ast.Expr(value=call), at)


def _bodies(stmt: ast.stmt) -> list[list[ast.stmt]]:
    out: list[list[ast.stmt]] = []
    for field in ("body", "orelse", "finalbody"):
        sub = getattr(stmt, field, None)
        if isinstance(sub, list) and sub and isinstance(sub[0], ast.stmt):
            out.append(sub)
    for h in getattr(stmt, "handlers", ()) or ():
        out.append(h.body)
    for c in getattr(stmt, "cases", ()) or ():
        out.append(c.body)
    return out
