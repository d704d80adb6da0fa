"""Loader for KramaBench workload files (the benchmark's native format).

A workload is a JSON list of tasks ``{id, query, answer, answer_type, data_sources,
subtasks}`` over one domain's data lake, read by `stateguard.audit.workload` (the
same reader ``stateguard audit discover-eval`` uses). Each task becomes one
multi-turn `BenchTask`:

- the turns are its subtasks in order (depth first), then the main question
  (`WorkloadTask.turns`); a (sub)task's own question depends on its subtasks' turns;
- ``gold`` is the turn's ``answer``, scored by its ``answer_type``
  (`stateguard.bench.judges.kramabench`); ``meta`` keeps ``answer_type``,
  ``data_sources`` and the (sub)task id;
- ``task_id`` is the task's ``id``; ``domain`` its first dash-separated part
  (KramaBench ids read ``domain-difficulty-n``); ``data_dir`` is the lake, exposed
  read-only to the kernel as ``data/``;
- ``data_sources`` entries (a string or a list, at every level) are resolved against the
  lake's files by `stateguard.audit.source_refs`: bare names anywhere in the tree, paths,
  globs and folders, ignoring letter case when the exact case is absent; each turn's
  ``meta`` keeps the files (``source_files``) and what resolving needed
  (``source_notes``: case ignored, an ambiguous name);
- a task with an entry that matches no file of the lake is returned with a
  ``skipped_reason`` naming the entry and the (sub)task id; a malformed task is
  rejected with its index and field.

The lake is ``lake`` when given, else, as KramaBench lays it out,
``<root>/data/<domain>/input`` for ``<root>/workload/<domain>.json``, else a ``lake/``
folder beside the workload file.
"""

from __future__ import annotations

from pathlib import Path

from stateguard.audit.errors import WorkloadFormatError
from stateguard.audit.source_refs import resolve_sources, resolved_files
from stateguard.audit.workload import WorkloadTask, scan_workload
from stateguard.bench.tasks import BenchTask, BenchTurn, SuiteLoad, TaskRejection
from stateguard.errors import TaskFormatError


def default_lake(workload: Path) -> Path | None:
    """Where KramaBench (or our fixture) keeps the lake of `workload`, if it exists."""
    candidates = [
        workload.parent.parent / "data" / workload.stem / "input",
        workload.parent / "lake",
    ]
    return next((c for c in candidates if c.is_dir()), None)


def _turns(task: WorkloadTask, files: list[str]) -> tuple[list[BenchTurn], list[str]]:
    """Subtasks depth first, then the question itself, which depends on its subtasks;
    and the entries that match no file, each with the (sub)task id naming it."""
    turns: list[BenchTurn] = []
    unresolved: list[str] = []

    def walk(node: WorkloadTask) -> None:
        first = len(turns) + 1
        for sub in node.subtasks:
            walk(sub)
        turn_id = len(turns) + 1
        resolved = resolve_sources(node.data_sources, files)
        unresolved.extend(f"{r.entry!r} ({node.id})" for r in resolved if r.unresolved)
        turns.append(
            BenchTurn(
                turn_id=turn_id,
                question=node.query,
                gold=node.answer,
                depends_on=tuple(range(first, turn_id)),
                meta={
                    "id": node.id,
                    "answer_type": node.answer_type,
                    "data_sources": list(node.data_sources),
                    "source_files": list(resolved_files(resolved)),
                    "source_notes": [n for r in resolved if (n := r.note()) and r.files],
                    "subtask": node is not task,
                },
            )
        )

    walk(task)
    return turns, list(dict.fromkeys(unresolved))


def _lake_files(lake: Path) -> list[str]:
    """The lake's files (relative, ``/``-separated), hidden files and folders left out,
    as the source map indexes them."""
    files = (p.relative_to(lake).as_posix() for p in lake.rglob("*") if p.is_file())
    return sorted(f for f in files if not any(part.startswith(".") for part in f.split("/")))


def load_kramabench(workload: Path | str, lake: Path | str | None = None) -> SuiteLoad:
    """The tasks of a KramaBench workload file over `lake` (see the module docstring)."""
    file = Path(workload)
    if file.is_dir():
        raise TaskFormatError(f"{file}: give a KramaBench workload file (JSON), not a folder")
    try:
        tasks, bad = scan_workload(file)
    except WorkloadFormatError as exc:
        raise TaskFormatError(str(exc)) from exc
    root = Path(lake) if lake is not None else default_lake(file)
    if root is None:
        raise TaskFormatError(
            f"{file}: no data lake found (looked for data/{file.stem}/input and lake/); "
            "give it with --lake"
        )
    if not root.is_dir():
        raise TaskFormatError(f"lake {root} is not a directory")
    root = root.resolve()
    files = _lake_files(root)
    rejected = [TaskRejection(task_id=b.task_id, source=str(file), reason=b.reason) for b in bad]
    loaded: list[BenchTask] = []
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            rejected.append(
                TaskRejection(task_id=task.id, source=str(file), reason=f"duplicate id {task.id}")
            )
            continue
        seen.add(task.id)
        turns, missing = _turns(task, files)
        skipped = None
        if missing:
            skipped = f"data source(s) matching no file of the lake {root}: {', '.join(missing)}"
        loaded.append(
            BenchTask(
                task_id=task.id,
                suite="kramabench",
                domain=task.id.split("-", 1)[0] or None,
                data_dir=root,
                turns=tuple(turns),
                skipped_reason=skipped,
            )
        )
    return SuiteLoad(tasks=tuple(loaded), rejected=tuple(rejected))
