"""One step of a trajectory: what the worker records, the manager reviews and the verifier scores.

Each producer fills what it knows: the guarded session hands the manager the turn, the
index, the code and what the kernel and lineage recorded; the worker adds the observation
the model read and why a reply was not a valid step (`stateguard.worker.events.StepRecord`
is a `Step` with a time and a type tag); the verifier's callers mark the last step of a
turn (``final``) and the step whose value is the turn's result (``result``).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from stateguard.kernel import ExecutionResult
from stateguard.lineage import CellRecord


class Step(BaseModel):
    """One step of a trajectory: reasoning plus one code cell and its observation, or an answer.

    ``execution`` and ``cell`` are what the kernel and lineage recorded (None for an
    answer step, or a recorded trajectory without them).
    """

    model_config = ConfigDict(frozen=True)

    turn: int = 0
    step: int = 0
    """Global step index across the whole task (0-based)."""
    thought: str = ""
    code: str | None = None
    observation: str = ""
    """What the model was shown (truncated head and tail)."""
    execution: ExecutionResult | None = None
    cell: CellRecord | None = None
    answer: str | None = None
    problem: str | None = None
    """Why the model output was not a valid step (no code, two blocks, …), if so."""
    setup: bool = False
    """The worker's setup cell (`stateguard.worker.preload`), not a model step."""
    final: bool = False
    """The last step of its turn: it must carry the answer."""
    result: bool = False
    """The step's shown value is the turn's result (as DSEval judges the last cell's value):
    it must answer the question, not only prepare or explore."""

    @property
    def is_answer(self) -> bool:
        """The step proposes an answer (and runs no code)."""
        return self.answer is not None and self.code is None
