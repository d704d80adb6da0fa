"""The worker's steps as the manager sees them, and where each span of them starts.

A *span* is a run of steps: the turn's, the one under review (after a repair, the
worker's new attempt) and the pending one (since the turn started or the last commit).
"""

from __future__ import annotations

from stateguard.checks import Step


class StepSpans:
    """Every step of the task so far, with the start of the turn, review and pending spans."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.turn_start = 0
        self.review_start = 0
        self.pending_start = 0

    def append(self, view: Step) -> None:
        """Record one step."""
        self.steps.append(view)

    def new_turn(self) -> None:
        """A turn starts: every span starts at the next step."""
        self.turn_start = self.review_start = self.pending_start = len(self.steps)

    def new_attempt(self) -> None:
        """After a repair the worker's next steps are reviewed, and pending, on their own."""
        self.review_start = self.pending_start = len(self.steps)

    def committed(self) -> None:
        """A state was committed: the steps after it are pending."""
        self.pending_start = len(self.steps)

    @property
    def pending(self) -> list[Step]:
        """Steps no committed state covers yet."""
        return self.steps[self.pending_start :]

    @property
    def this_turn(self) -> list[Step]:
        """Every step of the current turn, repaired attempts included."""
        return self.steps[self.turn_start :]

    @property
    def reviewed(self) -> list[Step]:
        """Steps of the attempt under review."""
        return self.steps[self.review_start :]

    def since(self, start: int) -> list[Step]:
        """Steps from index ``start`` on."""
        return self.steps[start:]

    @property
    def last_step(self) -> int | None:
        """The global index of the last step, if any."""
        return self.steps[-1].step if self.steps else None
