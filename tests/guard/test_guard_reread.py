"""Through `GuardedSession` (deterministic manager): an agent that loads its data again
each turn, as small models do, is not told that what it computed from the first load is
stale, and its answers that use it are accepted; data loaded again with other values
still makes them stale."""

from __future__ import annotations

import pytest

from stateguard.guard import GuardedSession

pytestmark = pytest.mark.kernel

LOAD = """\
import pandas as pd
visits = pd.DataFrame({"vet": ["a", "b", "a", "c"], "fee": [40.0, 55.0, 60.0, 45.0]})
"""
CHANGED = LOAD.replace("45.0", "47.0")


def _turn(guard: GuardedSession, question: str, code: str) -> tuple[bool, list[str]]:
    guard.begin_turn(question)
    outcome = guard.run_cell(code)
    assert outcome.ok, outcome.execution
    review = guard.propose_answer(outcome.execution.stdout.strip())
    guard.end_turn()
    return review.accepted, [n.text for n in review.notes]


def test_loading_the_same_data_again_keeps_earlier_results_current() -> None:
    with GuardedSession(manager="deterministic") as guard:
        assert _turn(guard, "Total fees?", LOAD + "total = visits['fee'].sum()\nprint(total)")[0]
        assert _turn(guard, "How many visits?", LOAD + "print(len(visits))")[0]
        by_vet = "per_vet = visits.groupby('vet')['fee'].sum()\nprint(per_vet.max())"
        assert _turn(guard, "Largest total of one vet?", by_vet)[0]
        assert _turn(guard, "Largest total of one vet, again?", by_vet)[0]
        accepted, notes = _turn(guard, "A 10 % fee on the total?", "print(total * 0.1)")
        assert accepted, notes
        assert not guard.stale_values()
        assert guard.store is not None and not guard.store.stale_marks()

        # the data changes: the total read before it is stale, and the answer refused
        accepted, notes = _turn(guard, "Visits now?", CHANGED + "print(len(visits))")
        assert accepted
        accepted, notes = _turn(guard, "The fee on the total now?", "print(total * 0.1)")
        assert not accepted
        assert any("total@v1" in note for note in notes)
        assert "total@v1" in {v.version for v in guard.stale_values()}


def test_a_doubt_holds_an_answer_back_once_and_evidence_every_time() -> None:
    with GuardedSession(manager="deterministic") as guard:
        assert _turn(
            guard, "The fee is 10% of the total. What is the fee?", LOAD + "print(200.0 * 0.1)"
        )[0]
        guard.begin_turn("The fee was revised from 10% to 13%. What is the fee now?")
        reviews = []
        for _ in range(3):  # the agent keeps its reading of the fee
            assert guard.run_cell("print(200.0 * 0.1)").ok
            reviews.append(guard.propose_answer("20.0"))
            if reviews[-1].accepted:
                break
        guard.end_turn()
        # the revised rate is a reading of the question: a doubt, asked once
        assert [r.accepted for r in reviews] == [False, True]
        assert "13" in " ".join(n.text for n in reviews[0].notes)

        # evidence (a stale read) holds the answer back every time
        assert _turn(guard, "Total fees?", LOAD + "total = visits['fee'].sum()\nprint(total)")[0]
        assert _turn(guard, "Visits now?", CHANGED + "print(len(visits))")[0]
        guard.begin_turn("The fee on the total now?")
        assert guard.run_cell("print(total * 0.13)").ok
        accepted = [guard.propose_answer("26.26").accepted for _ in range(3)]
        guard.end_turn()
        assert accepted == [False, False, False]
