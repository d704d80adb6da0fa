"""Every shipped multi-turn example: its data regenerate byte for byte, its gold answers
are the reference computation's, and its revision changes a later answer."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import NamedTuple

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
    "food_delivery",
    "parcel_shipping",
    "tutoring_sessions",
    "clinic_visits",
    "laundry_rounds",
    "ferry_crossings",
    "bike_share",
    "paddle_hire",
    "audio_guides",
    "plant_sales",
    "campsite_stays",
    "kiln_firings",
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


class Revision(NamedTuple):
    """How an example's revision shows: the old and new value in its turns' context, the
    reference's turn-5 code that states the new value without rebuilding what it feeds,
    the later turns that change then, and those that do not depend on it."""

    example: str
    old: str
    new: str
    stale_turn_code: str
    changed: tuple[int, ...]
    unchanged: tuple[int, ...] = ()


REVISIONS = (
    Revision("energy_bills", "0.27", "0.31", "UNIT_RATE = 0.31\nNone\n", (5, 7)),
    Revision("course_fees", "180", "195", "FEE_PER_CREDIT = 195\nNone\n", (5, 7, 8)),
    Revision("ticket_sales", "8 %", "10 %", "FEE_RATE = 0.10\nNone\n", (5, 7, 8), (3, 6)),
    Revision("rental_fleet", "6 %", "8 %", "LEVY_RATE = 0.08\nNone\n", (5, 7, 8), (3, 6)),
    Revision("food_delivery", "15 %", "18 %", "COMMISSION_RATE = 0.18\nNone\n", (5, 7, 8), (3, 6)),
    Revision("parcel_shipping", "2 %", "3 %", "SURCHARGE_RATE = 0.03\nNone\n", (5, 6, 7, 8), (3,)),
    Revision(
        "tutoring_sessions", "12 %", "15 %", "COMMISSION_RATE = 0.15\nNone\n", (5, 6, 7, 8), (3,)
    ),
    Revision(
        "clinic_visits", "10 %", "13 %", "PRACTICE_FEE_RATE = 0.13\nNone\n", (5, 6, 7, 8), (3,)
    ),
    Revision(
        "laundry_rounds", "12 %", "15 %", "COMMISSION_RATE = 0.15\nNone\n", (5, 6, 7, 8), (3,)
    ),
    Revision("ferry_crossings", "5 %", "7 %", "LEVY_RATE = 0.07\nNone\n", (5, 6, 7, 8), (3,)),
    Revision("bike_share", "9 %", "11 %", "SPACE_CHARGE_RATE = 0.11\nNone\n", (5, 6, 7, 8), (3,)),
    Revision("paddle_hire", "7 %", "9 %", "LEVY_RATE = 0.09\nNone\n", (5, 6, 7, 8), (3,)),
    Revision("audio_guides", "11 %", "14 %", "CONCESSION_RATE = 0.14\nNone\n", (5, 6, 7, 8), (3,)),
    Revision("plant_sales", "6 %", "8 %", "PITCH_RATE = 0.08\nNone\n", (5, 6, 7, 8), (3,)),
    Revision("campsite_stays", "5 %", "7 %", "LEVY_RATE = 0.07\nNone\n", (5, 6, 7, 8), (3,)),
    Revision("kiln_firings", "9 %", "12 %", "SHARE_RATE = 0.12\nNone\n", (5, 6, 7, 8), (3,)),
)


@pytest.mark.parametrize("revision", REVISIONS, ids=lambda r: r.example)
def test_the_revision_changes_later_answers_and_the_rest_stay(revision: Revision) -> None:
    reference = _module(revision.example, "reference")
    task = load_task(ROOT / revision.example)
    assert revision.old in task.turns[1].context and revision.new in task.turns[4].context
    stale = list(reference.TURN_CODE)
    stale[4] = revision.stale_turn_code  # the value changes, what it feeds is not rebuilt
    reference.TURN_CODE = tuple(stale)
    answers = reference.compute_answers()
    assert [answers[i] != task.turns[i].answer for i in revision.changed] == [True] * len(
        revision.changed
    )
    assert [answers[i] == task.turns[i].answer for i in revision.unchanged] == [True] * len(
        revision.unchanged
    )


@pytest.mark.parametrize("example", [r.example for r in REVISIONS])
def test_an_inner_join_loses_the_unlisted_rows_and_changes_turn_four(example: str) -> None:
    reference = _module(example, "reference")
    task = load_task(ROOT / example)
    assert 'how="left"' in reference.TURN_CODE[2]
    inner = list(reference.TURN_CODE)
    inner[2] = inner[2].replace('how="left"', 'how="inner"')
    reference.TURN_CODE = tuple(inner)
    assert reference.compute_answers()[3] != task.turns[3].answer
