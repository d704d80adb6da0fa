"""What the worker remembers of one turn's attempts: repeats and progress.

A small model decoding greedily tends to send the same failing cell again and
again. `AttemptLog` recognises a cell that is the same as an earlier one of the
turn up to formatting, comments and the wording of what it prints (`cell_key`),
remembers how the earlier one failed, and counts consecutive steps without
progress so that the loop can end a turn that is going nowhere.

Progress is a cell that ran without error and showed something it had not shown
before in this turn, or an answer proposed for review. No progress is a failing
cell, a cell not run because it repeats one that failed, a malformed reply, or a
cell that ran again with the same code and showed the same output. A failure is
remembered until a successful cell changes the session.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field


class _PrintWording(ast.NodeTransformer):
    """Blank the string constants passed to ``print`` (labels, not computation)."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "print":
            node.args = [
                ast.Constant("") if isinstance(a, ast.Constant) and isinstance(a.value, str) else a
                for a in node.args
            ]
        return node


def _drop_docstrings(tree: ast.Module) -> None:
    body = tree.body
    while body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        if not isinstance(body[0].value.value, str):
            break
        body.pop(0)


def cell_key(code: str) -> str:
    """A key equal for cells that differ only in layout, comments or printed labels.

    Code that does not parse is compared with its whitespace collapsed.
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return "src:" + re.sub(r"\s+", " ", code).strip()
    _drop_docstrings(tree)
    tree = _PrintWording().visit(tree)
    return "ast:" + ast.unparse(tree)


@dataclass
class Failure:
    """How an earlier cell of the turn failed."""

    step: int
    error: str
    """``ename: evalue``, shortened."""
    context: str = ""
    """The failing line and what its names held (`error_context`), if known."""


@dataclass
class AttemptLog:
    """The attempts of one turn (see the module docstring)."""

    failures: dict[str, Failure] = field(default_factory=dict)
    shown: dict[str, str] = field(default_factory=dict)
    """Cell key -> observation of its last successful run."""
    ran: dict[str, int] = field(default_factory=dict)
    """Cell key -> step, for cells that ran without error since the session last changed
    by another cell: sent again, they would show the same again."""
    stalled: int = 0
    """Consecutive steps without progress."""

    def failure_of(self, code: str) -> Failure | None:
        """The earlier failure of this cell (up to `cell_key`), if it failed."""
        return self.failures.get(cell_key(code))

    def repeat_of(self, code: str) -> Failure | None:
        """The earlier step this cell repeats to no purpose: it failed, or it ran and
        nothing changed since (``error`` is "" then)."""
        key = cell_key(code)
        if key in self.failures:
            return self.failures[key]
        if key in self.ran:
            return Failure(step=self.ran[key], error="")
        return None

    def no_progress(self) -> None:
        """Count one step without progress."""
        self.stalled += 1

    def progress(self) -> None:
        """A step made progress."""
        self.stalled = 0

    def record_cell(
        self,
        step: int,
        code: str,
        *,
        ok: bool,
        observation: str,
        changed_state: bool = False,
        failure: str = "",
        context: str = "",
    ) -> None:
        """Account for a cell that ran: its outcome decides progress.

        A successful cell that changed the session (``changed_state``) forgets the
        earlier failures: a cell that failed before may run now.
        """
        key = cell_key(code)
        if not ok:
            self.failures[key] = Failure(step=step, error=failure, context=context)
            self.no_progress()
            return
        if changed_state:
            self.failures.clear()
            self.ran.clear()
        else:
            self.failures.pop(key, None)
        self.ran[key] = step
        if self.shown.get(key) == observation:
            self.no_progress()
        else:
            self.shown[key] = observation
            self.progress()
