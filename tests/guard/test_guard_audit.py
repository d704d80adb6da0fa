"""The audit in a guarded kernel: findings in the outcome, evidence for the manager, and
results byte-identical with and without it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from stateguard.guard import GuardedSession
from stateguard.kernel import KernelSession
from stateguard.lineage import TrackedSession
from stateguard.manager.notes import RepairNotice

pytestmark = pytest.mark.kernel

FRAMES = (
    "import pandas as pd\n"
    "sales = pd.DataFrame({'year': [2018, 2019, 2020], 'v': [1, 2, 3]})\n"
    "targets = pd.DataFrame({'year': [2018, 2020], 't': [1, 2]})\n"
)
DEFAULT_INNER = "m = sales.merge(targets, on='year')\nm"


@pytest.fixture
def guard() -> Iterator[GuardedSession]:
    with GuardedSession(KernelSession(default_timeout=60), manager="deterministic") as g:
        yield g


def test_a_lossy_merge_the_question_forbids_is_refused_once(guard: GuardedSession) -> None:
    guard.begin_turn("Merge sales with their targets, keeping every year.")
    assert guard.run_cell(FRAMES).audit is not None  # no join: an empty audit
    out = guard.run_cell(DEFAULT_INNER)
    assert out.ok and out.audit is not None
    (f,) = out.audit.alarms
    assert f.check == "dropped_rows" and f.variables == ("m",)
    assert "dropped 1 of 3 left rows" in out.audit.describe()
    assert "2019 is missing from the right side" in out.audit.describe()
    review = guard.propose_answer("the merged table has 2 rows")
    assert not review.accepted
    (repair,) = [h for h in review.notes if h.kind == "repair"]
    assert any("dropped 1 of 3 left rows" in line for line in repair.evidence)
    # no how= written: the code alone makes it an alarm
    assert not f.from_question and isinstance(repair.notice, RepairNotice)
    (found,) = repair.notice.evidence
    assert (found.check, found.severity, found.basis) == ("silent_join", "alarm", ("code", "data"))
    # the agent was told and keeps the same merge: its known choice, accepted
    guard.run_cell(DEFAULT_INNER)
    assert guard.propose_answer("the merged table has 2 rows").accepted


def test_an_inner_merge_the_question_forbids_is_a_doubt_refused_all_the_same(
    guard: GuardedSession,
) -> None:
    guard.begin_turn("Merge sales with their targets, keeping every year.")
    guard.run_cell(FRAMES)
    out = guard.run_cell("m = sales.merge(targets, on='year', how='inner')\nm")
    assert out.audit is not None
    (f,) = out.audit.alarms
    # from the code alone (how='inner' written) it is a note: a doubt on the question
    assert f.severity == "doubt" and f.from_question
    review = guard.propose_answer("the merged table has 2 rows")
    assert not review.accepted
    (repair,) = [h for h in review.notes if h.kind == "repair"]
    assert isinstance(repair.notice, RepairNotice)
    (found,) = repair.notice.evidence
    assert (found.check, found.severity) == ("silent_join", "doubt")
    assert found.basis == ("code", "data", "question")


def test_a_lossy_default_merge_under_a_plain_question_is_a_note(guard: GuardedSession) -> None:
    guard.begin_turn("Merge sales with their targets.")
    guard.run_cell(FRAMES)
    out = guard.run_cell(DEFAULT_INNER)
    assert out.audit is not None and out.audit.findings and not out.audit.alarms
    assert "dropped 1 of 3 left rows" in out.audit.describe()  # still shown to the agent
    assert guard.propose_answer("the merged table has 2 rows").accepted


def test_an_inner_merge_the_code_asks_for_is_a_note(guard: GuardedSession) -> None:
    guard.begin_turn("Keep only years with a target.")
    guard.run_cell(FRAMES)
    out = guard.run_cell("m = sales.merge(targets, on='year', how='inner')\nm")
    assert out.audit is not None and out.audit.findings and not out.audit.alarms
    assert out.audit.describe().startswith("audit note: inner merge")
    assert guard.propose_answer("2 rows").accepted


def test_a_fixed_merge_later_in_the_turn_clears_the_alarm(guard: GuardedSession) -> None:
    guard.begin_turn("Merge sales with their targets, keeping every year.")
    guard.run_cell(FRAMES)
    guard.run_cell(DEFAULT_INNER)
    guard.run_cell("m = sales.merge(targets, on='year', how='left')\nm")
    assert guard.propose_answer("3 rows").accepted


CELLS = [
    FRAMES,
    "a = sales.merge(targets, on='year')",
    "b = pd.merge(sales, targets, how='cross')",
    "c = sales.set_index('year').join(targets.set_index('year'), how='outer')",
    "d = pd.concat([sales, targets])",
    "import pickle, hashlib\n"
    "print(hashlib.sha256(pickle.dumps([a, b, c, d])).hexdigest())\n"
    "a.merge(targets, on='year', how='left')",
]


def _run_all(audit: bool) -> list[tuple[str, str, str | None, str]]:
    with GuardedSession(KernelSession(default_timeout=60), manager="none", audit=audit) as g:
        outs = [g.run_cell(c) for c in CELLS]
        assert all(o.ok for o in outs)
        assert (outs[1].audit is not None) is audit
        return [
            (
                o.execution.stdout,
                o.execution.stderr,
                o.execution.result,
                repr([d.data for d in o.execution.displays]),
            )
            for o in outs
        ]


def test_results_are_byte_identical_with_and_without_the_audit() -> None:
    with_audit, without = _run_all(True), _run_all(False)
    assert with_audit == without
    assert len(with_audit[-1][0].strip()) == 64  # the hash of every result was printed


def test_a_running_tracked_session_gets_the_audit_installed() -> None:
    tracked = TrackedSession(KernelSession(default_timeout=60))
    tracked.start()
    try:
        with GuardedSession(tracked, manager="none") as g:
            g.run_cell(FRAMES)
            out = g.run_cell(DEFAULT_INNER)
            assert out.audit is not None and out.audit.alarms
    finally:
        tracked.stop()
