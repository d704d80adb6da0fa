"""A revised parameter whose old value a later result still carries as a literal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stateguard.guard import GuardedSession
from stateguard.kernel import KernelSession
from stateguard.manager.notes import RepairNotice
from stateguard.manager.revision_probe import with_new_value
from stateguard.manager.revisions import old_literals, revisions_in, value_literals

REVISION = "Finance revised the COGS rate from 42% to 47% of net revenue, for the whole year."


@pytest.mark.parametrize(
    ("text", "found"),
    [
        (REVISION, [(42.0, 47.0, True)]),
        ("The discount was lowered from 0.1 to 0.05.", [(0.1, 0.05, False)]),
        ("We updated the threshold: it changed from 5 to 8 units.", [(5.0, 8.0, False)]),
        ("Sales from 2019 to 2021, by region.", []),  # a range, not a revision
        ("What is the margin?", []),
    ],
)
def test_revision_statements_are_read_from_the_text(text: str, found: list) -> None:
    assert [(r.old, r.new, r.percent) for r in revisions_in(text, 5, 0)] == found


@pytest.mark.parametrize(
    ("code", "literals"),
    [
        ("c = rev * 0.42", ["0.42"]),
        ("c = rev * 42 / 100", ["rev * 42 / 100"]),
        ("c = rev * 0.47", []),  # the new value
        ("c = rev * 0.042", []),
        ("c = rev * 42", []),  # 42 alone is not 42 %
    ],
)
def test_old_values_are_found_as_literals(code: str, literals: list[str]) -> None:
    (revision,) = revisions_in(REVISION, 5, 0)
    assert old_literals(code, revision) == literals


@pytest.mark.parametrize(
    ("code", "options", "literals"),
    [
        ("net = price * 0.9", {}, []),  # 1 − rate only with complements
        ("net = price * 0.9", {"complements": True}, ["0.9"]),
        ("gross = price * 1.1", {"complements": True}, ["1.1"]),
        ("fee = price * 10 / 100", {}, ["price * 10 / 100"]),
        ("fee_pct = 10", {}, []),  # 10 alone is not 10 %
        ("fee_pct = 10", {"as_written": True}, ["10"]),
        ("fee = price * 0.1", {"complements": True, "as_written": True}, ["0.1"]),
        ("fee = price * 0.11", {"complements": True, "as_written": True}, []),
        ("fee = price * (", {"as_written": True}, []),  # does not parse
    ],
)
def test_a_percent_is_found_in_the_forms_asked_for(
    code: str, options: dict[str, bool], literals: list[str]
) -> None:
    assert value_literals(code, 10, percent=True, **options) == literals


def test_a_plain_value_is_found_as_itself_and_zero_never() -> None:
    assert value_literals("limit = 195\nx = 1.95", 195, percent=False) == ["195"]
    assert value_literals("limit = 0", 0, percent=False) == []


SETUP = (
    "import pandas as pd\norders = pd.DataFrame({'revenue': [100.0, 200.0], 'ship': [10.0, 20.0]})"
)


def _margin_with_the_old_rate(g: GuardedSession) -> None:
    """Turn 1 loads ``orders``; turn 2 computes ``cogs`` with 0.42 and ``margin`` from it."""
    g.begin_turn("Load.")
    g.run_cell(SETUP)
    assert g.propose_answer("loaded").accepted
    g.begin_turn("What is the total margin, rounded to 2 decimals?")
    g.run_cell(
        "orders['cogs'] = orders['revenue'] * 0.42\n"
        "orders['margin'] = orders['revenue'] - orders['cogs'] - orders['ship']\n"
        "print(round(orders['margin'].sum(), 2))"
    )
    assert g.propose_answer("144.00").accepted


@pytest.mark.kernel
def test_a_result_derived_from_the_old_rate_is_refused_after_the_revision() -> None:
    with GuardedSession(KernelSession(default_timeout=60), manager="deterministic") as g:
        _margin_with_the_old_rate(g)
        g.begin_turn("What is the total revenue?", context=REVISION)
        g.run_cell("print(orders['revenue'].sum())")
        assert g.propose_answer("300.0").accepted  # near miss: revenue never used the rate
        g.begin_turn("What is the margin per order, rounded to 2 decimals?")
        g.run_cell("print(round(orders['margin'].mean(), 2))")
        review = g.propose_answer("72.00")
        assert not review.accepted
        text = "\n".join(n.text for n in review.notes)
        assert "orders['margin']" in text and "0.42" in text and "from 42% to 47%" in text
        # recomputing with the revised rate is accepted
        g.run_cell(
            "orders['cogs'] = orders['revenue'] * 0.47\n"
            "orders['margin'] = orders['revenue'] - orders['cogs'] - orders['ship']\n"
            "print(round(orders['margin'].mean(), 2))"
        )
        assert g.propose_answer("64.50").accepted


@pytest.mark.kernel
def test_the_old_value_typed_again_after_the_revision_is_refused() -> None:
    with GuardedSession(KernelSession(default_timeout=60), manager="deterministic") as g:
        g.begin_turn("What is the total cost under the current rate?", context=REVISION)
        g.run_cell(SETUP + "\nprint(round((orders['revenue'] * 0.42).sum(), 2))")
        review = g.propose_answer("126.00")
        assert not review.accepted
        assert "0.42" in "\n".join(n.text for n in review.notes)
        # the revision is read from the turn's English; a replay with 0.47 no longer shows
        # the answer's 126.00, which corroborates it: an alarm
        (repair,) = [n for n in review.notes if n.kind == "repair"]
        assert isinstance(repair.notice, RepairNotice)
        found = [e for e in repair.notice.evidence if e.check == "revised_constant"]
        assert found and all(e.severity == "alarm" for e in found)
        assert found[0].basis == ("code", "question", "execution")
        assert "no longer shows 126.00" in found[0].corroboration


@pytest.mark.kernel
def test_a_subset_of_the_recomputed_frame_is_not_refused() -> None:
    """After the column is recomputed, a frame derived from the whole table still has the
    old version among its ancestors; lineage's staleness covers it, this check does not."""
    with GuardedSession(KernelSession(default_timeout=60), manager="deterministic") as g:
        g.begin_turn("Margin?")
        g.run_cell(SETUP + "\norders['cogs'] = orders['revenue'] * 0.42\nprint(1)")
        assert g.propose_answer("1").accepted
        g.begin_turn("And now?", context=REVISION)
        g.run_cell("orders['cogs'] = orders['revenue'] * 0.47\nprint(2)")
        assert g.propose_answer("2").accepted
        g.begin_turn("What is the cost of the big orders?")
        g.run_cell("big = orders[orders['ship'] > 15]\nprint(big['cogs'].sum())")
        review = g.propose_answer("94.0")
        assert review.accepted, [n.text for n in review.notes]


@pytest.mark.kernel
def test_a_grouped_read_of_the_table_is_refused_only_for_a_column_the_old_rate_made() -> None:
    """Lineage records ``orders.groupby(..)[col]`` as a read of all of ``orders``; the
    statement's column decides whether the old rate is in the result."""
    with GuardedSession(KernelSession(default_timeout=60), manager="deterministic") as g:
        g.begin_turn("Margin?")
        g.run_cell(
            SETUP + "\norders['k'] = ['a', 'b']\n"
            "orders['cogs'] = orders['revenue'] * 0.42\n"
            "orders['margin'] = orders['revenue'] - orders['cogs'] - orders['ship']\nprint(1)"
        )
        assert g.propose_answer("1").accepted
        g.begin_turn("Revenue by k?", context=REVISION)
        g.run_cell("print(orders.groupby('k')['revenue'].sum().max())")
        review = g.propose_answer("200.0")
        assert review.accepted, [n.text for n in review.notes]  # revenue: no rate in it
        g.begin_turn("Margin by k, the highest?")
        g.run_cell("by_k = orders.groupby('k')['margin'].sum()\nprint(by_k.max())")
        review = g.propose_answer("96.0")
        assert not review.accepted
        assert "0.42" in "\n".join(n.text for n in review.notes)


@pytest.mark.kernel
def test_a_column_of_a_row_subset_carries_the_old_rate_of_its_table() -> None:
    with GuardedSession(KernelSession(default_timeout=60), manager="deterministic") as g:
        g.begin_turn("Cost?")
        g.run_cell(
            SETUP + "\norders['k'] = ['a', 'b']\norders['cogs'] = orders['revenue'] * 0.42\n"
            "big = orders[orders['k'] == 'b']\nprint(1)"
        )
        assert g.propose_answer("1").accepted
        g.begin_turn("Cost of the big orders now?", context=REVISION)
        g.run_cell("print(big['cogs'].sum())")
        review = g.propose_answer("84.0")
        assert not review.accepted
        assert "0.42" in "\n".join(n.text for n in review.notes)
        g.run_cell("print(big['revenue'].sum())")  # near miss: revenue carries no rate
        g.begin_turn("Revenue of the big orders?")
        g.run_cell("print(big['revenue'].sum())")
        assert g.propose_answer("200.0").accepted


@pytest.mark.kernel
def test_the_turn_that_states_a_revision_is_told_which_states_carry_the_old_value() -> None:
    from stateguard.hints import compact_state_hint

    with GuardedSession(KernelSession(default_timeout=60), manager="deterministic") as g:
        _margin_with_the_old_rate(g)
        before = g.begin_turn("What is the total revenue?")
        assert before and not any("revised it" in n.text for n in before)  # nothing revised yet
        g.run_cell("print(orders['revenue'].sum())")
        assert g.propose_answer("300.0").accepted
        question = "What is the total margin under the revised rate?"
        notes = g.begin_turn(question, context=REVISION)
        (state,) = [n for n in notes if n.kind == "state"]
        entries = {e["id"]: e for e in json.loads(state.text.splitlines()[1])}
        (stale,) = entries["S2"]["relations"][1:]
        assert "orders['cogs'] computed in cell 1 with 0.42" in stale and "to 47%" in stale
        assert not any("stale" in r for r in entries["S3"]["relations"])  # no rate in revenue
        compact = compact_state_hint(state, question)
        assert compact is not None
        first = compact.text.splitlines()[1]
        assert first.startswith("S2 ") and "STALE: orders['cogs'] computed in cell" in first


@pytest.mark.parametrize(
    ("code", "revised"),
    [
        ("c = rev * 0.42", "c = rev * 0.47"),
        ("c = rev * 42 / 100", "c = rev * 47 / 100"),
        ("c = (rev - 0.42 * rev) * 2", "c = (rev - 0.47 * rev) * 2"),
        ("c = rev * 0.5", None),  # no old literal
        ("c = rev * (", None),  # does not parse
    ],
)
def test_the_replay_writes_the_new_value_where_the_code_writes_the_old(
    code: str, revised: str | None
) -> None:
    (revision,) = revisions_in(REVISION, 5, 0)
    assert with_new_value(code, revision) == revised


def _revised_after_the_margin(g: GuardedSession) -> None:
    _margin_with_the_old_rate(g)
    g.begin_turn("What is the total revenue?", context=REVISION)
    g.run_cell("print(orders['revenue'].sum())")
    assert g.propose_answer("300.0").accepted


def _revised_constant_findings(review: object) -> list:
    notes = getattr(review, "notes", ())
    repairs = [n for n in notes if n.kind == "repair" and isinstance(n.notice, RepairNotice)]
    return [e for n in repairs for e in n.notice.evidence if e.check == "revised_constant"]


@pytest.mark.kernel
def test_an_answer_a_replay_with_the_new_value_changes_is_refused_every_time() -> None:
    """The replay corroborates the doubt: an alarm, which a second attempt giving the
    same stale count does not pass (a doubt holds a draft back only once)."""
    with GuardedSession(KernelSession(default_timeout=60), manager="deterministic") as g:
        _revised_after_the_margin(g)
        g.begin_turn("How many orders have a margin above 90 under the current rate?")
        g.run_cell("print((orders['margin'] > 90).sum())")
        first = g.propose_answer("1")  # 96 > 90 with 42 %; 86 with 47 %: none
        assert not first.accepted
        (found,) = _revised_constant_findings(first)
        assert found.severity == "alarm" and "no longer shows 1" in found.corroboration
        g.run_cell("print(int((orders['margin'] > 90).sum()))")
        second = g.propose_answer("1")
        assert not second.accepted, [n.text for n in second.notes]
        assert any(e.severity == "alarm" for e in _revised_constant_findings(second))
        g.run_cell(
            SETUP + "\norders['margin'] = orders['revenue'] * 0.53 - orders['ship']\n"
            "print(int((orders['margin'] > 90).sum()))"
        )
        assert g.propose_answer("0").accepted


@pytest.mark.kernel
def test_an_answer_the_old_value_does_not_reach_is_not_refused() -> None:
    """Both orders are profitable at 42 % and at 47 %: the replay shows the same, and the
    stale column does not hold the answer back."""
    with GuardedSession(KernelSession(default_timeout=60), manager="deterministic") as g:
        _revised_after_the_margin(g)
        g.begin_turn("How many orders are profitable under the current rate?")
        g.run_cell("print((orders['margin'] > 0).sum())")
        review = g.propose_answer("2")
        assert review.accepted, [n.text for n in review.notes]


@pytest.mark.kernel
def test_a_question_that_names_the_old_value_keeps_the_finding_a_doubt() -> None:
    with GuardedSession(KernelSession(default_timeout=60), manager="deterministic") as g:
        _revised_after_the_margin(g)
        g.begin_turn("How much higher was the total margin under the original 42% rate?")
        g.run_cell(
            "print(round(orders['margin'].sum() - "
            "(orders['revenue'] * 0.53 - orders['ship']).sum(), 2))"
        )
        first = g.propose_answer("15.00")
        assert not first.accepted  # a second look, once
        assert [e.severity for e in _revised_constant_findings(first)] == ["doubt"]
        g.run_cell(
            "print(round(orders['margin'].sum() - "
            "(orders['revenue'] * 0.53 - orders['ship']).sum(), 2))"
        )
        assert g.propose_answer("15.00").accepted


@pytest.mark.kernel
def test_a_step_that_compares_with_a_value_of_the_new_rate_keeps_the_finding_a_doubt() -> None:
    with GuardedSession(KernelSession(default_timeout=60), manager="deterministic") as g:
        _revised_after_the_margin(g)
        g.begin_turn("What is the total margin now?")
        g.run_cell(
            "orders['margin_now'] = orders['revenue'] - orders['revenue'] * 0.47 - "
            "orders['ship']\nprint(orders['margin_now'].sum())"
        )
        assert g.propose_answer("129.0").accepted
        g.begin_turn("By how much did the revision lower the total margin?")
        g.run_cell("print(round(orders['margin'].sum() - orders['margin_now'].sum(), 2))")
        first = g.propose_answer("15.0")
        assert not first.accepted
        assert [e.severity for e in _revised_constant_findings(first)] == ["doubt"]


@pytest.mark.kernel
def test_a_step_that_writes_a_file_is_not_replayed(tmp_path: Path) -> None:
    """A fork keeps the namespace apart, not the file system: a replay with the new value
    would write the file again, so the finding stays a doubt and the file is the step's."""
    kernel = KernelSession(workdir=tmp_path, default_timeout=60)
    with GuardedSession(kernel, manager="deterministic") as g:
        _revised_after_the_margin(g)
        g.begin_turn("How many orders have a margin above 90 under the current rate?")
        g.run_cell("orders['margin'].to_csv('m.csv')\nprint((orders['margin'] > 90).sum())")
        first = g.propose_answer("1")
        assert not first.accepted
        assert [e.severity for e in _revised_constant_findings(first)] == ["doubt"]
        assert "96.0" in (tmp_path / "m.csv").read_text()  # 86.0 with 47 %


@pytest.mark.kernel
def test_the_replay_is_of_the_step_that_shows_the_answer() -> None:
    """Two steps read the stale column; the first shows another number. The finding of
    the step that shows the answer is the one the replay corroborates."""
    with GuardedSession(KernelSession(default_timeout=60), manager="deterministic") as g:
        _revised_after_the_margin(g)
        g.begin_turn("How many orders have a margin above 90 under the current rate?")
        g.run_cell("print(round(orders['margin'].mean(), 2))")
        g.run_cell("print((orders['margin'] > 90).sum())")
        review = g.propose_answer("1")
        assert not review.accepted
        (found,) = _revised_constant_findings(review)  # one per version read
        assert found.severity == "alarm" and "no longer shows 1" in found.corroboration
