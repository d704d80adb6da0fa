"""DSEval's kernel-evaluated validators on a real kernel: compare_fn code, model, table_test.

The fixture session (`fixtures/dseval_spec/01-validators.py`) is written in DSEval's
format. Its gold run is judged against submissions that replace one turn's code: the
reference's own code must pass, a wrong variant must fail.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from stateguard.bench.gold import run_gold
from stateguard.bench.loaders import load_dseval_session
from stateguard.bench.observe import (
    capture,
    checked_names,
    judge,
    kernel_extras,
    namespace_diff,
    observation,
    open_session,
)

pytestmark = pytest.mark.kernel

FIXTURE = Path(__file__).parent / "fixtures" / "dseval_spec" / "01-validators.py"

NO_MODEL = (
    "class Zero:\n    def predict(self, X):\n        return np.zeros(len(X), dtype=int)\n"
    "X_test, y_test = df[['x']].iloc[1::2], df['label'].iloc[1::2]\nmodel = Zero()"
)
MEAN_LINE = (
    "class Mean:\n    def predict(self, X):\n        return np.full(len(X), df['y'].mean())\n"
    "yr_test = df['y'].iloc[1::2]\nreg = Mean()"
)
# (id, turn, submission code, expected verdict)
CASES = [
    ("result_code_right", 2, "round(df['x'].mean(), 3)", "yes"),
    ("result_code_wrong", 2, "df['x'].mean() + 0.1", "no"),
    ("namespace_code_wrong", 3, "df['z'] = df['x'] - df['y']", "no"),
    ("metrictol_lower", 5, "float(df['label'].mean()) * 0.9", "no"),
    ("printed_not_returned", 2, "print(f\"mean: {df['x'].mean()}\")", "partial"),
    ("assigned_not_returned", 2, "m = df['x'].mean()", "partial"),
    ("printed_wrong", 2, "print(df['x'].sum())", "no"),
    ("model_worse", 7, NO_MODEL, "no"),
    ("model_missing", 7, "X_test, y_test = df[['x']], df['label']", "no"),
    ("regression_worse", 8, MEAN_LINE, "no"),
    (
        "table_right_renamed",
        9,
        "def scale(s, k):\n    out = s * k\n"
        "    return out.rename('v') if hasattr(out, 'name') else out",
        "yes",
    ),
    ("table_wrong", 9, "def scale(s, k):\n    return s * k + 1", "no"),
    ("table_raises", 9, "def scale(s, k):\n    raise ValueError('no')", "no"),
    ("inputs_not_changed_loose", 10, "def sort_in_place(values):\n    return None", "partial"),
    (
        "output_checker_code",
        10,
        "def sort_in_place(values):\n    values.sort()\n    return 1",
        "no",
    ),
]


@pytest.fixture(scope="module")
def gold(tmp_path_factory):
    task = load_dseval_session(FIXTURE)
    return task, run_gold(task, tmp_path_factory.mktemp("gold") / "work")


def _judge_with(task, gold, workdir: Path, turn_id: int, code: str | None) -> dict:
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
        return judge(task, turn, ref, sub, session=session).details
    finally:
        session.stop()


def test_every_reference_turn_passes_against_itself(gold, tmp_path) -> None:
    task, g = gold
    assert all(t.skipped_reason is None for t in g.turns)
    assert "metrics" in g.turn(7).observation.extras["model#2"]
    assert len(g.turn(9).observation.extras["table_test#2"]["cases"]) == 4
    for turn_id in (2, 3, 7, 8, 9, 10):
        details = _judge_with(task, g, tmp_path / f"w{turn_id}", turn_id, None)
        assert details["verdict"] == "yes", details


@pytest.mark.parametrize(
    ("turn_id", "code", "verdict"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_submission_variants(gold, tmp_path, turn_id: int, code: str, verdict: str) -> None:
    task, g = gold
    details = _judge_with(task, g, tmp_path / "w", turn_id, code)
    assert details.get("verdict") == verdict, details


def test_generated_cases_are_seeded_per_case(gold) -> None:
    _, g = gold
    cases = g.turn(9).observation.extras["table_test#2"]["cases"]
    generated, repeated = cases[1][0], cases[2][0]
    assert len(generated) == 5 and not generated.equals(repeated)  # "//" reseeds
    assert cases[3] == {"k": 4, "s": 0.5}


def test_replay_of_the_spec_suite_with_a_broken_session(tmp_path) -> None:
    """Every turn of the spec session is right; a session DSEval would reject is reported."""
    import json
    import shutil

    from stateguard.bench.records import RunConfig, RunStore
    from stateguard.bench.report import write_metrics
    from stateguard.bench.runner import run_benchmark

    suite = tmp_path / "suite"
    shutil.copytree(FIXTURE.parent, suite)
    (suite / "02-broken.py").write_text(
        '# %%\n"""\nquestion: q\nvalidator:\n  model:\n    model_name: m\n"""\nx = 1\n'
    )
    out = tmp_path / "run"
    outcome = run_benchmark(RunConfig(suite="dseval", path=str(suite)), out)
    assert outcome.tasks_rejected == 1 and outcome.tasks_run == 1
    turns = RunStore(out).results()
    assert len(turns) == 10 and all(t.correct is True for t in turns), [
        (t.turn_id, t.judge_reason, t.skipped_reason) for t in turns if not t.correct
    ]
    metrics = write_metrics(out)
    (rejection,) = metrics["rejections"]
    assert rejection["task_id"] == "dseval-02-broken"
    assert "cell 0" in rejection["reason"] and "validator.model.inputs_name" in rejection["reason"]
    assert json.loads((out / "rejections.json").read_text())[0]["source"].endswith("02-broken.py")
