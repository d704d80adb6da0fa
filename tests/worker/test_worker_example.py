"""The shipped unit-economics example: its revision, and scripted end-to-end runs (its data
and gold answers are checked with the other examples', in test_worker_examples_data)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import nbformat
import pytest

from stateguard.llm import ChatMessage, ScriptedModel
from stateguard.worker.preload import SETUP_THOUGHT
from stateguard.worker.run import run_task
from stateguard.worker.tasks import Task, load_task

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "unit_economics"


def _module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"unit_economics_{name}", EXAMPLE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_revision_changes_the_later_answers() -> None:
    """The turns after the revision would be wrong with the old rate (the point of the task)."""
    task = load_task(EXAMPLE)
    assert "42%" in task.turns[1].context and "47%" in task.turns[4].context
    assert task.turns[1].answer != task.turns[4].answer
    reference = _module("reference")
    stale = list(reference.TURN_CODE)
    stale[4] = "COGS_RATE = 0.47\nNone\n"  # the rate changes, the cost columns are not rebuilt
    reference.TURN_CODE = tuple(stale)
    answers = reference.compute_answers()
    assert answers[5] != task.turns[5].answer
    assert answers[8] != task.turns[8].answer
    assert answers[9] != task.turns[9].answer


def _cell(code: str) -> str:
    return f"I compute it.\n```python\n{code}```"


class ReferencePlayer:
    """The worker's scripted model: per turn the reference cell, then its value.

    The values come from running the reference solution apart (`compute_answers`), so the
    player never reads what the worker shows it (the test checks the kernel showed them).
    It tells turns apart by the task's own questions, not by the worker's wording, and
    keeps its own count of what it sent. ``first_try`` maps a turn to a (cell, value)
    sent before the reference ones: they come only if that first answer is refused.
    """

    def __init__(self, task: Task, first_try: dict[int, tuple[str, object]] | None = None):
        reference = _module("reference")
        self.turns = list(zip(reference.TURN_CODE, reference.compute_answers(), strict=True))
        self.questions = [t.question.strip() for t in task.turns]
        self.first_try = first_try or {}
        self.sent: dict[int, list[str]] = {}

    def __call__(self, messages: list[ChatMessage]) -> str:
        asked = "\n".join(m.content for m in messages if m.role == "user")
        turn = max(i for i, q in enumerate(self.questions, 1) if q in asked)
        sent = self.sent.setdefault(turn, [])
        first = turn in self.first_try and "answer" not in sent
        code, value = self.first_try[turn] if first else self.turns[turn - 1]
        if sent and sent[-1] == "code":
            sent.append("answer")
            return f"<answer>{value!r}</answer>"
        sent.append("code")
        return _cell(code)


def shown_results(run_dir: Path) -> list[str]:
    """The result each code step showed, whitespace removed (as the kernel printed it)."""
    events = [json.loads(line) for line in (run_dir / "trajectory.jsonl").open()]
    steps = [e for e in events if e["type"] == "step" and e.get("execution")]
    assert steps[0]["setup"] and steps[0]["thought"] == SETUP_THOUGHT  # the data, loaded first
    steps = steps[1:]
    return ["".join((s["execution"].get("result") or "").split()) for s in steps]


@pytest.mark.kernel
def test_example_end_to_end_with_the_reference_player(tmp_path: Path) -> None:
    task = load_task(EXAMPLE)
    model = ScriptedModel(fn=ReferencePlayer(task))
    summary = run_task(task, model, "none", tmp_path / "run", max_steps_per_turn=4)
    assert [t.correct for t in summary.turns] == [True] * len(task.turns), [
        (t.turn, t.answer, t.gold) for t in summary.turns if not t.correct
    ]
    assert all(t.steps == 2 for t in summary.turns), [t.steps for t in summary.turns]
    values = _module("reference").compute_answers()
    assert shown_results(tmp_path / "run") == ["".join(repr(v).split()) for v in values]
    answers = json.loads((tmp_path / "run" / "answers.json").read_text())
    assert len(answers["turns"]) == len(task.turns)
    nb = nbformat.read(tmp_path / "run" / "analysis.ipynb", as_version=4)
    nbformat.validate(nb)
    # the worker's setup cell (loading the data), then one cell per turn
    assert sum(c.cell_type == "code" for c in nb.cells) == len(task.turns) + 1


SLOPPY = 'COGS_RATE = 0.47\nround(float(orders["contribution"].sum()), 2)\n'
"""At the revision (turn 5): the rate changes, the old cost columns are reused."""


@pytest.mark.kernel
def test_example_with_hybrid_manager_catches_the_stale_revision(tmp_path: Path) -> None:
    from stateguard.report import write_report
    from stateguard.state import StateStore

    task = load_task(EXAMPLE)
    # first the stale cell and what it gives (turn 2's value), then, once refused, the reference
    stale_value = _module("reference").compute_answers()[1]
    player = ReferencePlayer(task, first_try={5: (SLOPPY, stale_value)})
    model = ScriptedModel(fn=player)
    # the manager has its own scripted model, for ambiguous evidence only
    namer = ScriptedModel(fn=lambda messages: '{"issue": "unit-economics step", "conclusions": []}')
    run_dir = tmp_path / "run"
    summary = run_task(task, model, "hybrid", run_dir, max_steps_per_turn=8, manager_model=namer)
    assert player.sent[5] == ["code", "answer", "code", "answer"]  # the stale answer was refused

    assert [t.correct for t in summary.turns] == [True] * len(task.turns), [
        (t.turn, t.answer, t.gold) for t in summary.turns if not t.correct
    ]
    # exactly one repair, at the revision, naming the stale columns and the new rate
    assert [t.repairs for t in summary.turns] == [0, 0, 0, 0, 1, 0, 0, 0, 0, 0]
    events = [json.loads(line) for line in (run_dir / "trajectory.jsonl").open()]
    repair_hints = [
        e["hint"] for e in events if e["type"] == "hint" and e["hint"]["kind"] == "repair"
    ]
    assert len(repair_hints) == 1
    assert "COGS_RATE@v2" in repair_hints[0]["text"] and "orders" in repair_hints[0]["text"]
    assert "99209" not in repair_hints[0]["text"]  # never the answer
    # one committed state per turn; the recompute invalidates the margin states before it
    with StateStore(run_dir / "states.sqlite") as store:
        committed = store.committed()
        assert len(committed) == len(task.turns)
        revision = next(s for s in committed if s.turn == 5)
        assert any(r.type == "invalidate" for r in revision.relations)
        assert store.stale_states()
    # state hints after the revision mark invalidated states
    state_hints = [e for e in events if e["type"] == "hint" and e["hint"]["kind"] == "state"]
    notes = [n for e in state_hints if e["turn"] == 6 for n in e["hint"]["notice"]["states"]]
    assert any(n["invalidated_by"] for n in notes)
    # hybrid: states are named from the evidence and nothing was ambiguous: no LLM call
    assert sum(t.manager_llm_calls for t in summary.turns) == 0
    assert namer.requests == []
    nbformat.validate(nbformat.read(run_dir / "analysis.ipynb", as_version=4))
    html = write_report(run_dir).read_text(encoding="utf-8")
    assert html.count('class="state-node') == len(task.turns)
