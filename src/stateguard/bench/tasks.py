"""Task models shared by every benchmark suite.

A `BenchTask` is one multi-turn analysis (a single-turn one for InfiAgent-DABench);
each `BenchTurn` is one question the agent answers in the same persistent session.

Invariants enforced here, relied on by metrics and the runner:
- turn ids are 1-based ordinals: ``turns[i].turn_id == i + 1``;
- ``depends_on`` names only earlier turns of the same task, sorted, without repeats.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Suite = Literal["dseval", "longds", "infiagent", "kramabench"]
"""The benchmark suites stateguard ships loaders for."""


class BenchTurn(BaseModel):
    """One question of a task, with what is needed to judge the answer.

    ``gold`` is the expected answer when the suite states it (LongDS answer object,
    InfiAgent ``{name: value}``); it is None when gold has to be computed by running
    ``reference_code`` (DSEval). ``validator`` is the suite's judging configuration
    (DSEval's normalized validator), ``tolerance`` a numeric tolerance for LongDS
    answers (see `stateguard.bench.judges.longds`).
    """

    model_config = ConfigDict(frozen=True)

    turn_id: int = Field(ge=1)
    context: str = ""
    """Text shown to the agent before the question (narrative, or setup code already run)."""
    question: str
    gold: Any | None = None
    reference_code: str | None = None
    validator: dict[str, Any] | None = None
    depends_on: tuple[int, ...] = ()
    """Earlier turns whose results this turn builds on (sorted, unique)."""
    tolerance: float | None = Field(default=None, ge=0)
    meta: dict[str, Any] = Field(default_factory=dict)


class BenchTask(BaseModel):
    """One benchmark task: an ordered sequence of turns over one data folder.

    ``skipped_reason`` is set (and the task is still returned) when the task cannot
    run on this machine, e.g. a referenced input file is missing.
    """

    model_config = ConfigDict(frozen=True)

    task_id: str = Field(min_length=1)
    suite: Suite
    domain: str | None = None
    data_dir: Path | None = None
    """Folder holding the task's input files (see each loader for the path convention)."""
    turns: tuple[BenchTurn, ...]
    skipped_reason: str | None = None
    input_aliases: dict[str, str] = Field(default_factory=dict)
    """Input names the code spells that are stored under ``data_dir`` with another Unicode
    normalization: name -> stored relative path (staged under both)."""

    @model_validator(mode="after")
    def _check_turn_order(self) -> BenchTask:
        for index, turn in enumerate(self.turns):
            if turn.turn_id != index + 1:
                raise ValueError(
                    f"task {self.task_id}: turn at position {index} has turn_id "
                    f"{turn.turn_id}, expected {index + 1}"
                )
            deps = turn.depends_on
            if list(deps) != sorted(set(deps)) or any(d < 1 or d >= turn.turn_id for d in deps):
                raise ValueError(
                    f"task {self.task_id}: turn {turn.turn_id} depends_on {deps} must be "
                    "sorted, unique earlier turn ids"
                )
        return self

    @property
    def skipped(self) -> bool:
        """True when the task cannot be run (see ``skipped_reason``)."""
        return self.skipped_reason is not None


class TaskRejection(BaseModel):
    """A task that could not be loaded (or run), and why: file, cell/turn and field."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    source: str
    """The file or folder the task comes from."""
    reason: str


class SuiteLoad(BaseModel):
    """What loading a suite gave: the tasks that loaded and those rejected (with reasons)."""

    model_config = ConfigDict(frozen=True)

    tasks: tuple[BenchTask, ...] = ()
    rejected: tuple[TaskRejection, ...] = ()
