"""Every shipped multi-turn example: its data regenerate byte for byte, its gold answers
are the reference computation's, and its revision changes a later answer."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from stateguard.worker.tasks import load_task

ROOT = Path(__file__).resolve().parents[2] / "examples"
EXAMPLES = (
    "unit_economics",
    "freight_margin",
    "energy_bills",
    "course_fees",
    "ticket_sales",
    "rental_fleet",
)


def _module(example: str, name: str) -> ModuleType:
    path = ROOT / example / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"{example}_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("example", EXAMPLES)
def test_data_is_regenerated_byte_for_byte(example: str, tmp_path: Path) -> None:
    make = _module(example, "make_data")
    default = Path(make.DEFAULT_OUT)
    written = make.write(tmp_path / default.name if default.suffix else tmp_path)
    paths = written if isinstance(written, tuple) else (written,)
    for path in paths:
        shipped = ROOT / example / "data" / path.name
        assert path.read_bytes() == shipped.read_bytes(), path.name
        assert shipped.stat().st_size < 1_000_000
    assert {p.name for p in paths} == {p.name for p in (ROOT / example / "data").iterdir()}


@pytest.mark.parametrize("example", EXAMPLES)
def test_gold_answers_match_the_reference_computation(example: str) -> None:
    assert _module(example, "reference").check() == []
    assert len(load_task(ROOT / example).turns) >= 8


def test_the_energy_revision_and_join_change_later_answers() -> None:
    reference = _module("energy_bills", "reference")
    task = load_task(ROOT / "energy_bills")
    assert "0.27" in task.turns[1].context and "0.31" in task.turns[4].context
    stale = list(reference.TURN_CODE)
    stale[4] = "UNIT_RATE = 0.31\nNone\n"  # the rate changes, the cost column is not rebuilt
    reference.TURN_CODE = tuple(stale)
    answers = reference.compute_answers()
    assert answers[5] != task.turns[5].answer and answers[7] != task.turns[7].answer
    inner = list(_module("energy_bills", "reference").TURN_CODE)
    inner[2] = inner[2].replace('how="left"', 'how="inner"')
    reference.TURN_CODE = tuple(inner)
    assert reference.compute_answers()[3] != task.turns[3].answer  # unlisted households lost


def test_the_fee_revision_and_join_change_later_course_answers() -> None:
    reference = _module("course_fees", "reference")
    task = load_task(ROOT / "course_fees")
    assert "180" in task.turns[1].context and "195" in task.turns[4].context
    stale = list(reference.TURN_CODE)
    stale[4] = "FEE_PER_CREDIT = 195\nNone\n"  # the fee changes, tuition is not rebuilt
    reference.TURN_CODE = tuple(stale)
    answers = reference.compute_answers()
    assert [answers[i] != task.turns[i].answer for i in (5, 7, 8)] == [True] * 3
    inner = list(_module("course_fees", "reference").TURN_CODE)
    inner[2] = inner[2].replace('how="left"', 'how="inner"')
    reference.TURN_CODE = tuple(inner)
    assert reference.compute_answers()[3] != task.turns[3].answer  # unlisted courses lost


def test_the_service_fee_revision_and_join_change_later_ticket_answers() -> None:
    reference = _module("ticket_sales", "reference")
    task = load_task(ROOT / "ticket_sales")
    assert "8 %" in task.turns[1].context and "10 %" in task.turns[4].context
    stale = list(reference.TURN_CODE)
    stale[4] = "FEE_RATE = 0.10\nNone\n"  # the fee changes, fee and net are not rebuilt
    reference.TURN_CODE = tuple(stale)
    answers = reference.compute_answers()
    assert [answers[i] != task.turns[i].answer for i in (5, 7, 8)] == [True] * 3
    assert [answers[i] == task.turns[i].answer for i in (3, 6)] == [True] * 2  # fee-free
    inner = list(_module("ticket_sales", "reference").TURN_CODE)
    inner[2] = inner[2].replace('how="left"', 'how="inner"')
    reference.TURN_CODE = tuple(inner)
    assert reference.compute_answers()[3] != task.turns[3].answer  # unlisted events lost


def test_the_levy_revision_and_join_change_later_rental_answers() -> None:
    reference = _module("rental_fleet", "reference")
    task = load_task(ROOT / "rental_fleet")
    assert "6 %" in task.turns[1].context and "8 %" in task.turns[4].context
    stale = list(reference.TURN_CODE)
    stale[4] = "LEVY_RATE = 0.08\nNone\n"  # the levy changes, levy and net are not rebuilt
    reference.TURN_CODE = tuple(stale)
    answers = reference.compute_answers()
    assert [answers[i] != task.turns[i].answer for i in (5, 7, 8)] == [True] * 3
    assert [answers[i] == task.turns[i].answer for i in (3, 6)] == [True] * 2  # levy-free
    inner = list(_module("rental_fleet", "reference").TURN_CODE)
    inner[2] = inner[2].replace('how="left"', 'how="inner"')
    reference.TURN_CODE = tuple(inner)
    assert reference.compute_answers()[3] != task.turns[3].answer  # unlisted branches lost
