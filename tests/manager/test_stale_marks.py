"""Stale marks from lineage on a real kernel: what makes a committed state stale, and what
does not (a column added to a frame it read, its own later write)."""

from __future__ import annotations

import pytest

from stateguard.guard import GuardedSession

pytestmark = pytest.mark.kernel


def _turns(guard: GuardedSession, cells: list[str]) -> None:
    for code in cells:
        guard.begin_turn(f"step: {code.splitlines()[0]}")
        outcome = guard.run_cell(code)
        assert outcome.ok, outcome.execution
        assert guard.propose_answer(outcome.execution.stdout.strip()).accepted
    guard.end_turn()


def test_what_makes_a_state_stale_and_what_does_not() -> None:
    with GuardedSession(manager="deterministic") as guard:
        _turns(
            guard,
            [
                "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2, 3], 'b': [4, 5, 6]})\n"
                "print(len(df))",
                "total = df.sum(numeric_only=True).sum()\nprint(total)",  # reads df whole
                "df['c'] = df['a'] * 2\nprint(df['c'].sum())",  # adds a column
                "k = 3\nk_sq = k * k\nk = 4\nprint(k_sq, k)",  # its own rewrite of k
                "df['a'] = df['a'] + 10\nprint(df['a'].sum())",  # rewrites a column S2 read
            ],
        )
        assert guard.store is not None
        states = guard.states()
        marks = guard.store.stale_marks()
        by_turn = {s.turn: s.id for s in states}
        # after turn 3 (a column added) nothing was stale; turn 5 rewrote df['a']: the whole
        # frame turn 2 summed held it, and turn 3's column was derived from it
        assert states[2].stale_marks == () and states[3].stale_marks == ()
        assert set(marks) == {by_turn[2], by_turn[3]}
        # the sum read all of df@v1, which held column a; the state that loaded df did not
        # use the column, it produced the frame: not stale
        assert [m.summary for m in marks[by_turn[2]]] == [
            "df@v1 ← df['a']@v1 superseded by df['a']@v2",
            "total@v1 ← df['a']@v1 superseded by df['a']@v2",
        ]
        assert by_turn[1] not in marks
        assert {m.outdated for m in marks[by_turn[3]]} == {"df['a']@v1"}
        assert by_turn[4] not in marks  # k_sq used k@v1, which the same turn rewrote
        rels = {s.turn: [r.summary for r in s.relations] for s in states}
        assert rels[3] == [f"branch→{by_turn[1]}"]  # adding a column: no invalidate
        assert [r for r in rels[5] if r.startswith("invalidate")] == [
            f"invalidate→{by_turn[2]}",
            f"invalidate→{by_turn[3]}",
        ]
