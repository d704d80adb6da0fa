"""Through `GuardedSession` (deterministic manager): a nine-turn analysis the usual pandas
way — one frame, a new column each turn, one revised rate at turn 6, plain printed
answers. Relations and stale marks come from the versions each turn read and produced."""

from __future__ import annotations

import json

import pytest

from stateguard.guard import GuardedSession

pytestmark = pytest.mark.kernel

LOAD = """\
import pandas as pd
bookings = pd.DataFrame({
    "region": ["north", "south", "north", "east", "south", "east", "north", "south"],
    "nights": [2, 5, 1, 3, 4, 2, 6, 3],
    "price": [120.0, 95.0, 150.0, 80.0, 110.0, 130.0, 90.0, 100.0],
})
n_rows = len(bookings)
print(n_rows)
"""

TURNS: list[tuple[str, str]] = [
    ("How many bookings are there?", LOAD),
    (
        "What is the total revenue (nights x price)?",
        "bookings['revenue'] = bookings['nights'] * bookings['price']\n"
        "total_revenue = bookings['revenue'].sum()\nprint(total_revenue)\n",
    ),
    (
        "The platform fee is 15% of revenue. What is the total fee?",
        "FEE_RATE = 0.15\nbookings['fee'] = bookings['revenue'] * FEE_RATE\n"
        "total_fee = round(bookings['fee'].sum(), 2)\nprint(total_fee)\n",
    ),
    (
        "What is the total net revenue after the fee?",
        "bookings['net'] = bookings['revenue'] - bookings['fee']\n"
        "net_total = round(bookings['net'].sum(), 2)\nprint(net_total)\n",
    ),
    (
        "How many nights were booked per region?",
        "bookings['long_stay'] = bookings['nights'] >= 3\n"
        "nights_by_region = bookings.groupby('region')['nights'].sum()\n"
        "print(nights_by_region.to_dict())\n",
    ),
    (
        "The fee was revised to 18% of revenue. What is the total net revenue now?",
        "FEE_RATE = 0.18\nbookings['fee'] = bookings['revenue'] * FEE_RATE\n"
        "bookings['net'] = bookings['revenue'] - bookings['fee']\n"
        "print(round(bookings['net'].sum(), 2))\n",
    ),
    (
        "What is the average revenue per night?",
        "bookings['adr'] = bookings['revenue'] / bookings['nights']\n"
        "print(round(bookings['adr'].mean(), 2))\n",
    ),
    (
        "What is the average net revenue per night?",
        "bookings['net_per_night'] = bookings['net'] / bookings['nights']\n"
        "print(round(bookings['net_per_night'].mean(), 2))\n",
    ),
    (
        "How many bookings earn more than 100 net per night?",
        "bookings['high_value'] = bookings['net_per_night'] > 100\n"
        "print(int(bookings['high_value'].sum()))\n",
    ),
]


ANSWERS = ["8", "2645.0", "396.75", "2248.25", "{'east': 5, 'north': 9, 'south': 12}"]
ANSWERS += ["2168.9", "109.38", "89.69", "2"]


class Run:
    """What the nine turns left: states, stale marks, stale values, the next turn's notes."""

    def __init__(self, guard: GuardedSession, answers: list[str]) -> None:
        assert guard.store is not None
        self.answers = answers
        self.states = guard.states()
        self.by_turn = {s.turn: s for s in self.states}
        self.marks = guard.store.stale_marks()
        self.stale_states = guard.store.stale_states()
        self.stale_values = {v.version for v in guard.stale_values()}
        self.hint_lines = guard.store.pack_hint_states([s.id for s in self.states], 4000)
        self.notes = [n.text for n in guard.begin_turn("Anything else?")]

    def relations(self, turn: int) -> list[str]:
        return [r.summary for r in self.by_turn[turn].relations]

    def invalidated(self, turn: int) -> set[int | None]:
        ids = {r.related_state_id for r in self.by_turn[turn].relations if r.type == "invalidate"}
        return {s.turn for s in self.states if s.id in ids}


@pytest.fixture(scope="module")
def run() -> Run:
    answers: list[str] = []
    with GuardedSession(manager="deterministic") as guard:
        for question, code in TURNS:
            guard.begin_turn(question)
            outcome = guard.run_cell(code)
            assert outcome.ok, outcome.execution
            printed = outcome.execution.stdout.strip()
            review = guard.propose_answer(printed)
            assert review.accepted, [n.text for n in review.notes]
            answers.append(printed)
        guard.end_turn()
        return Run(guard, answers)


def sid(run: Run, turn: int) -> str:
    return run.by_turn[turn].id


def test_one_state_per_turn_with_the_printed_answers(run: Run) -> None:
    assert run.answers == ANSWERS
    assert [s.turn for s in run.states] == list(range(1, 10))
    assert [s.conclusions for s in run.states] == [(a,) for a in ANSWERS]


def test_states_record_the_columns_read_and_produced_not_frame_versions(run: Run) -> None:
    def keys(turn: int, role: str) -> list[str]:
        return [v.key for v in run.by_turn[turn].versions_with_role(role)]  # type: ignore[arg-type]

    assert keys(1, "produced") == ["bookings@v1", "n_rows@v1"]  # not pd@v1
    assert keys(2, "read") == ["bookings['nights']@v1", "bookings['price']@v1"]
    assert keys(2, "produced") == ["bookings['revenue']@v1", "total_revenue@v1"]
    assert keys(6, "read") == ["bookings['revenue']@v1"]
    assert keys(6, "produced") == ["FEE_RATE@v2", "bookings['fee']@v2", "bookings['net']@v2"]
    # adding a column makes a "part" version of the frame: no turn produced one
    for state in run.states:
        produced = [v.key for v in state.versions_with_role("produced")]
        assert not [k for k in produced if k.startswith("bookings@") and k != "bookings@v1"]


def test_relations_turn_by_turn(run: Run) -> None:
    s = {t: sid(run, t) for t in range(1, 10)}
    assert run.relations(1) == ["init"]
    assert run.relations(2) == [f"progress→{s[1]}"]
    assert run.relations(3) == [f"progress→{s[2]}"]
    assert run.relations(4) == [f"combine→{s[2]}", f"combine→{s[3]}"]
    assert f"branch→{s[2]}" in run.relations(6)  # the revision reads revenue from turn 2
    assert run.relations(7) == [f"combine→{s[1]}", f"combine→{s[2]}"]
    assert run.relations(8) == [f"combine→{s[1]}", f"combine→{s[6]}"]  # the revised net
    assert run.relations(9) == [f"progress→{s[8]}"]


def test_only_the_revision_invalidates_and_only_states_that_used_the_old_rate(run: Run) -> None:
    for turn in (1, 2, 3, 4, 5, 7, 8, 9):
        assert run.invalidated(turn) == set(), (turn, run.relations(turn))
    # turn 3 set the 15% rate and the fee column, turn 4 read the fee and made net
    assert {3, 4} <= run.invalidated(6) <= {3, 4, 5}


def test_stale_states_name_the_superseded_rate(run: Run) -> None:
    stale_turns = {run.by_turn[t].turn for t in range(1, 10) if sid(run, t) in run.stale_states}
    assert {3, 4} <= stale_turns <= {3, 4, 5}
    for turn in (3, 4):
        marks = run.marks[sid(run, turn)]
        assert {m.superseded_by for m in marks} <= {
            "FEE_RATE@v2", "bookings['fee']@v2", "bookings['net']@v2"
        }  # fmt: skip
        assert any(m.outdated == "FEE_RATE@v1" for m in marks), marks
    assert [m.summary for m in run.marks[sid(run, 3)]] == [
        "FEE_RATE@v1 superseded by FEE_RATE@v2",
        "bookings['fee']@v1 superseded by bookings['fee']@v2",
        "total_fee@v1 ← FEE_RATE@v1 superseded by FEE_RATE@v2",
    ]
    # marks are recorded on the revision's state, the one whose commit found them
    assert {m.state_id for m in run.by_turn[6].stale_marks} == {sid(run, t) for t in stale_turns}


def test_stale_values_hold_the_results_not_recomputed(run: Run) -> None:
    # the fee and net columns were recomputed at turn 6; the two totals were not
    assert {"total_fee@v1", "net_total@v1"} <= run.stale_values
    assert not [k for k in run.stale_values if k.startswith("bookings")]
    assert "total_revenue@v1" not in run.stale_values  # revenue never changed


def test_the_next_turns_hint_marks_stale_states_with_the_superseded_version(run: Run) -> None:
    (note,) = [n for n in run.notes if "<analytical_state_hint>" in n]
    inside = note.split("<analytical_state_hint>\n", 1)[1].split("\n</analytical_state_hint>")[0]
    entries = {e["id"]: e for e in json.loads(inside)}
    s3, s6, s8 = sid(run, 3), sid(run, 6), sid(run, 8)
    assert (
        f"invalidated by {s6} (FEE_RATE@v1 superseded by FEE_RATE@v2, +2 more)"
        in (entries[s3]["relations"])
    )
    # turn 8 read the revised net column and the nights: no invalidation in its note
    assert entries[s8]["relations"] == [f"combine→{sid(run, 1)}", f"combine→{s6}"]
    assert f"[{s3}] (INVALIDATED by {s6})" in run.hint_lines
    assert f"[{sid(run, 8)}] issue" in run.hint_lines


def test_a_row_count_is_not_stale(run: Run) -> None:
    assert "n_rows@v1" not in run.stale_values


def test_a_per_group_sum_of_an_unchanged_column_is_not_stale(run: Run) -> None:
    assert "nights_by_region@v1" not in run.stale_values


def test_stale_values_are_exactly_the_two_totals(run: Run) -> None:
    assert run.stale_values == {"total_fee@v1", "net_total@v1"}


def test_the_per_group_turn_neither_invalidated_nor_stale(run: Run) -> None:
    assert run.relations(5) == [f"branch→{sid(run, 1)}"]  # region and nights, from turn 1
    assert run.invalidated(6) == {3, 4}
    assert sid(run, 5) not in run.stale_states
