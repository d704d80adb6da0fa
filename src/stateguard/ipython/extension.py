"""``%load_ext stateguard``: warn when a cell reads a stale value; explain on demand.

After each cell that read a stale value, one compact line per value goes to stderr,
naming the value, what it was derived from and which cell superseded that. Nothing
is printed when nothing stale was read. ``%stateguard status`` lists every stale
value; ``%stateguard why NAME`` explains one. Everything goes through a
`GuardedSession` over the running shell (`ShellExecutor`).
"""

from __future__ import annotations

import sys
from typing import Any

from stateguard.guard import CellOutcome, GuardedSession, GuardError, StaleValue
from stateguard.ipython.executor import ShellExecutor
from stateguard.lineage import StaleReason

_UNINSTALL = "__import__('stateguard.lineage.runtime', fromlist=['agent']).agent().uninstall()"
USAGE = "usage: %stateguard status | %stateguard why NAME"


class StaleWatch:
    """The extension's state in one shell: the guarded session and cell numbering."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.executor = ShellExecutor(shell)
        self.guard = GuardedSession(self.executor, manager="none")
        self.guard.start()
        self.prompts: dict[int, int] = {}
        """Lineage cell index -> the shell's prompt number (``In [n]``)."""
        shell.events.register("post_run_cell", self.post_run_cell)
        shell.register_magic_function(self.magic, magic_kind="line", magic_name="stateguard")

    def close(self) -> None:
        """Unregister the hook and the lineage pass; the shell and its namespace stay."""
        if self.post_run_cell in self.shell.events.callbacks["post_run_cell"]:
            self.shell.events.unregister("post_run_cell", self.post_run_cell)
        self.shell.magics_manager.magics["line"].pop("stateguard", None)
        self.executor.execute(_UNINSTALL, silent=True)
        self.guard.close()

    # -- after every cell ---------------------------------------------------------
    def post_run_cell(self, result: Any) -> None:
        """Record the cell's lineage; warn about every stale value it read."""
        raw = result.info.raw_cell if result.info is not None else ""
        self.executor.set_pending(result)
        outcome = self.guard.run_cell(raw)
        if outcome.cell is not None and result.execution_count is not None:
            self.prompts[outcome.cell.cell] = result.execution_count
        warning = self.warning(outcome)
        if warning:
            print(warning, file=sys.stderr)

    def _where(self, cell: int) -> str:
        prompt = self.prompts.get(cell)
        return f"In [{prompt}]" if prompt is not None else f"cell {cell}"

    def describe(self, reason: StaleReason) -> str:
        """One line: the stale value, what it came from, and which cell superseded that."""
        return (
            f"{reason.version} is stale: derived from {reason.outdated}, "
            f"which {self._where(reason.superseding_cell)} superseded with {reason.superseded_by}"
        )

    def warning(self, outcome: CellOutcome) -> str:
        """The compact warning after a cell, or "" when it read nothing stale."""
        reasons = {r.version: r for r in outcome.stale_reads}
        if not reasons:
            return ""
        lines = [f"stateguard: {self.describe(r)}" for r in reasons.values()]
        return "\n".join(lines)

    # -- %stateguard ----------------------------------------------------------------
    def magic(self, line: str) -> None:
        """``%stateguard status`` or ``%stateguard why NAME``."""
        words = line.split()
        if words == ["status"]:
            print(self.status())
        elif len(words) == 2 and words[0] == "why":
            print(self.why(words[1]))
        else:
            print(USAGE)

    def status(self) -> str:
        """Every stale live value, one per line."""
        values: list[StaleValue] = self.guard.stale_values()
        if not values:
            return "stateguard: nothing is stale."
        return "\n".join(f"stateguard: {self.describe(v.reason)}" for v in values)

    def why(self, name: str) -> str:
        """Why ``name`` is stale (the whole derivation chain), or that it is current."""
        try:
            value = self.guard.why_stale(name)
        except GuardError as exc:
            return f"stateguard: {exc}"
        if value is None:
            return f"stateguard: {self.guard.lineage_of(name).version} is current."
        chain = " -> ".join(value.reason.chain)
        return f"stateguard: {self.describe(value.reason)} (chain: {chain})"


_WATCHES: dict[int, StaleWatch] = {}


def load_ipython_extension(shell: Any) -> None:
    """Called by ``%load_ext stateguard``; loading twice keeps the first watch."""
    if id(shell) not in _WATCHES:
        _WATCHES[id(shell)] = StaleWatch(shell)


def unload_ipython_extension(shell: Any) -> None:
    """Called by ``%unload_ext stateguard``."""
    watch = _WATCHES.pop(id(shell), None)
    if watch is not None:
        watch.close()
