"""A corrupt line in a run's record files is skipped with a warning, never a crash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stateguard.bench.records import RunConfig, RunStore, TurnResult


def _store(tmp_path: Path) -> RunStore:
    store = RunStore(tmp_path / "run")
    store.prepare(RunConfig(suite="longds", path="/nowhere"))
    for turn in (1, 2):
        store.append_turn(TurnResult(task_id="t", turn_id=turn, n_turns=2, suite="longds"))
    return store


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        (b"\xff\xfe not utf-8", "UnicodeDecodeError"),
        (b'{"task_id": "t", "turn_id": "three"}', "schema error"),
        (b"[1, 2, 3]", "not a JSON object"),
        (b"{" * 5000 + b"}" * 5000, "RecursionError|JSONDecodeError"),
    ],
    ids=["non-utf8", "schema-invalid", "not-an-object", "deeply-nested"],
)
def test_corrupt_turn_lines_are_skipped_with_a_warning(
    tmp_path: Path, bad: bytes, why: str
) -> None:
    store = _store(tmp_path)
    lines = store.turns_path.read_bytes().splitlines()
    store.turns_path.write_bytes(b"\n".join([lines[0], bad, lines[1]]) + b"\n")
    with pytest.warns(UserWarning, match=why):
        results = store.results()
    assert sorted(r.turn_id for r in results) == [1, 2]
    assert json.loads(lines[0])["turn_id"] == 1
