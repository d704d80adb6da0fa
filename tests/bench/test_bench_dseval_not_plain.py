"""Values that are not plain data are judged in the kernel; the host never unpickles them.

The fixture session (`fixtures/dseval_not_plain/01-models.py`, DSEval's format) fits a
model object defined in the session, returns it, and checks it with ``model``,
``namespace_check`` (type only) and compare_fn validators. A hostile object planted
where the model is expected must be refused without ending the session.
"""

from __future__ import annotations

import os
import pickle
import shutil
from pathlib import Path

import pytest

from stateguard.bench.capture import NOT_PLAIN
from stateguard.bench.gold import run_gold
from stateguard.bench.loaders import load_dseval_session
from stateguard.bench.observe import (
    REFUSED,
    _load,
    capture,
    checked_names,
    judge,
    kernel_extras,
    namespace_diff,
    observation,
    open_session,
)
from stateguard.bench.records import RunConfig, RunStore
from stateguard.bench.report import write_metrics
from stateguard.bench.runner import run_benchmark

pytestmark = pytest.mark.kernel

SUITE = Path(__file__).parent / "fixtures" / "dseval_not_plain"
SESSION = SUITE / "01-models.py"


def _hostile_model(marker: Path) -> str:
    """A cell binding `model` to an object whose pickle, unpickled in this (host) process,
    would create ``marker``; it predicts nothing useful."""
    payload = (
        "import os, pathlib\n"
        f"if os.getpid() == {os.getpid()}: pathlib.Path({str(marker)!r}).touch()"
    )
    return (
        "class Hostile:\n"
        "    def __reduce__(self):\n"
        f"        return (exec, ({payload!r},))\n"
        "    def predict(self, X):\n"
        "        return np.zeros(len(X), dtype=int)\n"
        "model = Hostile()\n"
        "model"
    )


@pytest.fixture(scope="module")
def gold(tmp_path_factory):
    task = load_dseval_session(SESSION)
    return task, run_gold(task, tmp_path_factory.mktemp("gold") / "work")


def _judge_with(task, gold, workdir: Path, turn_id: int, code: str | None):
    session = open_session(task, workdir)
    try:
        for turn in task.turns[:turn_id]:
            if turn.meta.get("setup_code"):
                session.execute(turn.meta["setup_code"])
            source = code if turn.turn_id == turn_id and code is not None else turn.reference_code
            res = session.execute(source)
        captured = capture(session, res.execution, checked_names(task, turn), "sub")
        diff = namespace_diff(session.graph, [res.cell], res.cell.cell)
        ref = gold.turn(turn_id).observation
        extras = kernel_extras(session, task, turn, "sub", ref)
        sub = observation(res.execution, captured, diff, extras=extras, source=source)
        return sub, judge(task, turn, ref, sub, session=session)
    finally:
        session.stop()


def test_gold_holds_stand_ins_and_plain_metrics(gold) -> None:
    _, g = gold
    assert all(t.skipped_reason is None for t in g.turns)
    fitted = g.turn(2).observation
    assert set(fitted.result) == {NOT_PLAIN}
    assert fitted.result[NOT_PLAIN]["type"].endswith("Threshold")
    assert isinstance(fitted.result[NOT_PLAIN]["pickle"], bytes)
    metrics = fitted.extras["model#3"]["metrics"]
    assert metrics == {"accuracy": 1.0, "f1": 1.0}
    assert g.turn(4).observation.result == (8.0, 1.0)  # a named tuple crosses as a tuple


@pytest.mark.parametrize("turn_id", [2, 3, 4, 5])
def test_reference_passes_against_itself(gold, tmp_path, turn_id: int) -> None:
    task, g = gold
    _, verdict = _judge_with(task, g, tmp_path / "w", turn_id, None)
    assert verdict.correct and not verdict.excluded, verdict.details


def test_another_model_fails_the_compare_fn_in_the_kernel(gold, tmp_path) -> None:
    task, g = gold
    code = "model = Threshold().fit(X.iloc[:6], (X.iloc[:6, 0] >= 3).astype(int))\nmodel"
    _, verdict = _judge_with(task, g, tmp_path / "w", 3, code)
    assert not verdict.correct and not verdict.excluded
    assert "another model" in str(verdict.details)


def test_hostile_model_is_refused_and_the_turn_judged(gold, tmp_path) -> None:
    task, g = gold
    marker = tmp_path / "host-ran-the-pickle"
    sub, verdict = _judge_with(task, g, tmp_path / "w", 2, _hostile_model(marker))
    assert not marker.exists()
    assert set(sub.result) == {NOT_PLAIN}  # crossed as opaque bytes, never unpickled here
    assert sub.extras["model#3"]["metrics"]["accuracy"] == 0.4  # judged in the kernel
    assert not verdict.excluded and verdict.correct is False
    reasons = [c["reason"] for c in verdict.details["checks"] if c["verdict"] != "yes"]
    assert any("metric accuracy" in r for r in reasons), reasons


def test_a_capture_file_replaced_by_a_hostile_pickle_is_refused(tmp_path) -> None:
    marker = tmp_path / "host-ran-the-pickle"

    class Exploit:
        def __reduce__(self):
            return (exec, (f"open({str(marker)!r}, 'w').close()",))

    path = tmp_path / "capture.pkl"
    path.write_bytes(pickle.dumps({"has_result": True, "result": Exploit()}))
    got = _load(path)
    assert not marker.exists()
    assert got["has_result"] is False and got["error"].startswith(REFUSED)
    assert "builtins.exec" in got["error"]


def test_replay_with_a_hostile_model_still_judges_the_session(tmp_path) -> None:
    """The whole session runs; only the planted turn is wrong, and nothing is lost."""
    suite = tmp_path / "suite"
    shutil.copytree(SUITE, suite)
    marker = tmp_path / "host-ran-the-pickle"
    text = SESSION.read_text()
    hostile = text.replace("model = Threshold()\nmodel.fit(X, y)", _hostile_model(marker))
    assert hostile != text
    (suite / "02-hostile.py").write_text(hostile)
    out = tmp_path / "run"
    outcome = run_benchmark(RunConfig(suite="dseval", path=str(suite)), out)
    assert outcome.errors == 0 and outcome.tasks_rejected == 0
    assert not marker.exists()
    turns = {(t.task_id, t.turn_id): t for t in RunStore(out).results()}
    clean = [t for (task, _), t in turns.items() if task == "dseval-01-models"]
    assert len(clean) == 5 and all(t.correct is True for t in clean), [
        (t.turn_id, t.judge_reason) for t in clean if not t.correct
    ]
    # Planted in the reference itself, the object is still judged, in the kernel: its own
    # metrics match; its compare_fn, which revives it there (its pickle runs in the kernel,
    # not here), finds no model; the turn reading a threshold it lacks is skipped.
    planted = sorted(
        (t for (task, _), t in turns.items() if task == "dseval-02-hostile"),
        key=lambda t: t.turn_id,
    )
    assert [t.correct for t in planted] == [True, True, False, None, True]
    assert "comparison failure" in planted[2].judge_reason
    assert planted[3].skipped and "AttributeError" in planted[3].skipped_reason
    metrics = write_metrics(out)
    assert metrics["tasks_failed"] == 0 and metrics["turns_total"] == 10
    assert metrics["turns_scored"] == 9
    assert metrics["skipped_by_reason"] == {"reference code fails: AttributeError": 1}
