"""Suite loaders: benchmark files in their native formats -> `BenchTask` lists.

`load_suite` is the runner's entry point: every suite, one call, and a `SuiteLoad`
in which a task that fails to load is a `TaskRejection` (file, cell/turn, field)
instead of an exception that loses the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from stateguard.bench.loaders.dseval import (
    load_dseval_session,
    load_dseval_suite,
    resolve_inputs_dir,
    scan_dseval_suite,
    stage_inputs,
)
from stateguard.bench.loaders.infiagent import load_infiagent
from stateguard.bench.loaders.kramabench import load_kramabench
from stateguard.bench.loaders.longds import (
    PathMap,
    load_longds_suite,
    load_longds_task,
    parse_dependency_comments,
    scan_longds,
)
from stateguard.bench.tasks import BenchTask, Suite, SuiteLoad

__all__ = [
    "PathMap",
    "load_dseval_session",
    "load_dseval_suite",
    "load_infiagent",
    "load_kramabench",
    "load_longds_suite",
    "load_longds_task",
    "load_suite",
    "parse_dependency_comments",
    "resolve_inputs_dir",
    "scan_dseval_suite",
    "scan_longds",
    "stage_inputs",
]


def _cut_turns(task: BenchTask, turn_limit: int | None) -> BenchTask:
    if turn_limit is None or len(task.turns) <= turn_limit:
        return task
    return task.model_copy(update={"turns": task.turns[:turn_limit]})


def load_suite(
    suite: Suite,
    path: Path | str,
    *,
    start_index: int = 0,
    task_limit: int | None = None,
    turn_limit: int | None = None,
    path_maps: Sequence[str] = (),
    lake: Path | str | None = None,
) -> SuiteLoad:
    """Load a suite; malformed tasks are rejected with their reason, the rest loads.

    ``start_index`` / ``task_limit`` cut the ordered task list, ``turn_limit`` every
    task (LongDS's runner options, applied to every suite). ``path_maps`` are LongDS
    ``PREFIX=TARGET`` rewrites; ``lake`` is a KramaBench workload's data lake (default:
    found beside the workload file). A suite-level problem (no DSEval manifest, an unreadable
    InfiAgent file, a malformed mapping) raises `TaskFormatError`.
    """
    if suite == "longds":
        maps = tuple(PathMap.parse(m) for m in path_maps)
        return scan_longds(
            path,
            path_maps=maps,
            start_index=start_index,
            task_limit=task_limit,
            turn_limit=turn_limit,
        )
    if suite == "dseval":
        loaded = scan_dseval_suite(path)
    elif suite == "kramabench":
        loaded = load_kramabench(path, lake)
    else:
        loaded = SuiteLoad(tasks=tuple(load_infiagent(path)))
    tasks = loaded.tasks[start_index:]
    if task_limit is not None:
        tasks = tasks[:task_limit]
    return SuiteLoad(
        tasks=tuple(_cut_turns(t, turn_limit) for t in tasks), rejected=loaded.rejected
    )
