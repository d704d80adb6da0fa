"""Normalized content of a run directory, to compare a resumed run with an uninterrupted one.

Times (``ts``, wall times, hook seconds, created/committed timestamps), the run
directory's own path and files that only a resume writes are left out; everything
else must be equal.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import nbformat

from stateguard.worker.events import AnswerRecorded, StepRecord, TurnStarted, read_trajectory

_TIME_KEYS = {"ts", "seconds", "wall_time", "created_at", "committed_at", "at"}
_SESSION_KEYS = {"token", "id"}
"""Per-session values: the lineage pass's secret, nbformat's random cell ids."""
_TIME_SUFFIXES = ("_seconds", "_time", "_ms")


def _strip(value: Any, run_dir: str) -> Any:
    if isinstance(value, dict):
        if value.get("mime") == "application/vnd.stateguard.lineage+json":
            value = {**value, "data": json.loads(value["data"])}
        return {
            k: _strip(v, run_dir)
            for k, v in value.items()
            if k not in _TIME_KEYS | _SESSION_KEYS and not k.endswith(_TIME_SUFFIXES)
        }
    if isinstance(value, list):
        return [_strip(v, run_dir) for v in value]
    if isinstance(value, str):
        return value.replace(run_dir, "<run>")
    return value


def trajectory(run_dir: Path) -> list[Any]:
    """Every event of ``trajectory.jsonl`` without times."""
    out = []
    for line in (run_dir / "trajectory.jsonl").read_text().splitlines():
        out.append(_strip(json.loads(line), str(run_dir.resolve())))
    return out


def answers(run_dir: Path) -> Any:
    """``answers.json`` without times and paths."""
    data = json.loads((run_dir / "answers.json").read_text())
    data.pop("run_dir", None)
    data.pop("report", None)
    return _strip(data, str(run_dir.resolve()))


def states(run_dir: Path) -> dict[str, list[tuple]]:
    """Every row of every table of ``states.sqlite`` (timestamp columns left out)."""
    con = sqlite3.connect(f"file:{run_dir / 'states.sqlite'}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        out: dict[str, list[tuple]] = {}
        for table in sorted(tables):
            cur = con.execute(f"SELECT * FROM {table}")  # table names from the schema
            names = [d[0] for d in cur.description]
            keep = [i for i, n in enumerate(names) if n not in _TIME_KEYS]
            out[table] = sorted(tuple(row[i] for i in keep) for row in cur.fetchall())
        return out
    finally:
        con.close()


def manager_events(run_dir: Path) -> list[Any]:
    """``manager_events.jsonl`` without times."""
    lines = (run_dir / "manager_events.jsonl").read_text().splitlines()
    return [_strip(json.loads(line), str(run_dir.resolve())) for line in lines]


def notebook(run_dir: Path) -> list[Any]:
    """The cells of ``analysis.ipynb`` (source, outputs, metadata)."""
    nb = nbformat.read(run_dir / "analysis.ipynb", as_version=4)
    return [_strip(dict(cell), str(run_dir.resolve())) for cell in nb.cells]


_NUMBER_WITH_UNIT = re.compile(r"\d+(?:\.\d+)?\s?(?:ms|s)\b")
_EPOCH = re.compile(r"\b1\d{9}\.\d+")
_CUT_PREVIEW = re.compile(r"<code>[^<]*…</code>")
"""A preview cut at a fixed length: where it is cut depends on the timestamps' digits."""


def report(run_dir: Path) -> str:
    """``report.html`` with durations and the run directory's path masked."""
    text = (run_dir / "report.html").read_text()
    text = text.replace(str(run_dir.resolve()), "<run>")
    text = _CUT_PREVIEW.sub("<code>…</code>", text)
    return _EPOCH.sub("<ts>", _NUMBER_WITH_UNIT.sub("<t>", text))


def content(run_dir: Path) -> dict[str, Any]:
    """Everything compared: answers, states, events, trajectory, notebook, report."""
    return {
        "answers": answers(run_dir),
        "states": states(run_dir),
        "manager_events": manager_events(run_dir),
        "trajectory": trajectory(run_dir),
        "notebook": notebook(run_dir),
        "report": report(run_dir),
    }


def turn_keys(run_dir: Path) -> list[tuple[str, int, int | None]]:
    """(kind, turn, step) of every turn start, step and answer in the trajectory."""
    out: list[tuple[str, int, int | None]] = []
    for event in read_trajectory(run_dir / "trajectory.jsonl"):
        if isinstance(event, TurnStarted):
            out.append(("start", event.turn, None))
        elif isinstance(event, StepRecord):
            out.append(("step", event.turn, event.step))
        elif isinstance(event, AnswerRecorded):
            out.append(("answer", event.turn, None))
    return out


def assert_same_run(resumed: Path, uninterrupted: Path) -> None:
    """The two run directories hold the same results, part by part."""
    got, want = content(resumed), content(uninterrupted)
    for part in want:
        assert got[part] == want[part], f"{part} differs after the resume"
