"""The fixed dev/validation split by session, and `verify eval|bon-eval --split`."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from typer.testing import CliRunner

from stateguard.cli.main import app
from stateguard.verify import StepVerdict
from stateguard.verify.labelling import LabelledStep
from stateguard.verify.splits import SPLITS, in_split, split_of

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "benchmarks" / "dseval"


def test_a_session_falls_on_one_side_whatever_else_is_run() -> None:
    ids = [f"dseval-session-{i:03d}" for i in range(400)]
    first = {s: split_of(s) for s in ids}
    # the same ids, in another order and mixed with others: the same sides
    again = {s: split_of(s) for s in reversed([*ids, "dseval-other"])}
    assert all(first[s] == again[s] for s in ids)
    counts = Counter(first.values())
    assert set(counts) == set(SPLITS)
    assert 160 <= counts["dev"] <= 240  # about half on each side


def test_in_split_all_holds_everything_and_sides_are_disjoint() -> None:
    ids = [f"s{i}" for i in range(50)]
    assert all(in_split(s, "all") for s in ids)
    dev = {s for s in ids if in_split(s, "dev")}
    val = {s for s in ids if in_split(s, "validation")}
    assert dev and val and not dev & val and dev | val == set(ids)


def test_every_shared_suite_has_sessions_on_both_sides() -> None:
    from stateguard.bench.loaders.dseval import load_dseval_suite

    for suite in ("exercise", "kaggle-dev", "so", "leetcode"):
        folder = SHARED / suite
        if not folder.is_dir():
            continue
        sides = Counter(split_of(t.task_id) for t in load_dseval_suite(folder) if not t.skipped)
        assert sides["dev"] > 0 and sides["validation"] > 0, (suite, sides)


def _labelled(path: Path, sessions: list[str]) -> None:
    rows = []
    for s in sessions:
        for label, score, out in ((1.0, 1.0, "ok"), (0.0, 0.0, "bad1"), (0.0, 0.5, "bad2")):
            rows.append(
                LabelledStep(
                    session=s,
                    turn=1,
                    label=label,
                    kind="k",
                    code="c",
                    output=out,
                    verdicts={
                        "deterministic": StepVerdict(
                            score=score, rationale="r", layer="deterministic"
                        )
                    },
                )
            )
    path.write_text("".join(r.model_dump_json() + "\n" for r in rows), encoding="utf-8")


def test_bon_eval_split_keeps_only_that_sides_sessions(tmp_path: Path) -> None:
    sessions = [f"sess-{i}" for i in range(12)]
    data = tmp_path / "steps.jsonl"
    _labelled(data, sessions)
    turns = {}
    for side in ("all", "dev", "validation"):
        res = CliRunner().invoke(
            app,
            ["verify", "bon-eval", "--labelled", str(data), "--n", "2", "--split", side, "--json"],
        )
        assert res.exit_code == 0, res.output
        report = json.loads(res.output)
        assert report["split"] == side
        turns[side] = report["selection"][0]["turns"]
    # each session has one turn; the sides add up to all
    expect_dev = sum(1 for s in sessions if split_of(s) == "dev")
    assert turns == {"all": 12, "dev": expect_dev, "validation": 12 - expect_dev}
    bad = CliRunner().invoke(app, ["verify", "bon-eval", "--labelled", str(data), "--split", "x"])
    assert bad.exit_code == 2 and "--split 'x'" in bad.output
