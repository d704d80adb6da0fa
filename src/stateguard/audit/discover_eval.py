"""Source-retrieval evaluation: recall@k of each task's gold data sources, no LLM.

For each task of a workload, `discover(task.query)` ranks the lake's files; the
task's recall@k is the share of its gold `data_sources` entries found among the first
k files. Each entry is first resolved to the lake files it stands for
(`stateguard.audit.source_refs`: a bare name anywhere in the tree, a path, a glob or a
folder, ignoring letter case when it must): a file entry is found when its file is
among the first k, a glob or folder entry when any of its files is (k files cannot hold
a folder of more). An entry that matches no file of the lake cannot be retrieved: it is
reported with the task id (``unresolved``) and left out of the recall; the figures are
means over the tasks with at least one resolved entry (a task's sources are its own,
else its subtasks'). ``notes`` say where resolving had to ignore case or met an
ambiguous name.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from stateguard.audit.discovery import SourceIndex
from stateguard.audit.source_refs import SourceResolution, resolve_sources, resolved_files
from stateguard.audit.sources import index_lake
from stateguard.audit.workload import WorkloadTask, load_workload

KS = (1, 5, 10)


class TaskRecall(BaseModel):
    """One task's ranking against its gold sources."""

    model_config = ConfigDict(frozen=True)

    id: str
    gold: tuple[str, ...]
    ranked: tuple[str, ...]
    """The first max(KS) files discover returned."""
    recall_at_1: float
    recall_at_5: float
    recall_at_10: float
    missed_at_10: tuple[str, ...] = ()
    """Gold sources not among the first 10 files."""
    files: tuple[str, ...] = ()
    """The lake files the gold sources resolve to."""
    unresolved: tuple[str, ...] = ()
    """Gold sources that match no file of the lake (left out of the recall)."""
    notes: tuple[str, ...] = ()
    """What resolving needed: letter case ignored, an ambiguous name."""


class DiscoverEval(BaseModel):
    """Mean recall over a workload's tasks."""

    model_config = ConfigDict(frozen=True)

    tasks: int
    recall_at_1: float
    recall_at_5: float
    recall_at_10: float
    sources_indexed: int
    files_indexed: int
    skipped_without_sources: int = 0
    sources_unresolved: int = 0
    """Gold entries, over all tasks, that match no file of the lake."""
    tasks_unresolved: tuple[str, ...] = ()
    """``task-id: 'entry'`` for each of them."""
    per_task: tuple[TaskRecall, ...] = ()


def _recall(found: list[SourceResolution], ranked: list[str], k: int) -> float:
    top = set(ranked[:k])
    return sum(any(f in top for f in r.files) for r in found) / len(found)


def evaluate_tasks(tasks: list[WorkloadTask], index: SourceIndex) -> DiscoverEval:
    """Recall@1/5/10 of the gold data sources, discovering from each task's query alone."""
    per_task = []
    skipped = 0
    unresolved_all: list[str] = []
    files = list(index.map.paths)
    for task in tasks:
        gold = task.data_sources or task.all_sources()
        resolutions = resolve_sources(gold, files)
        unresolved = tuple(r.entry for r in resolutions if r.unresolved)
        unresolved_all += [f"{task.id}: {e!r}" for e in unresolved]
        found = [r for r in resolutions if not r.unresolved]
        if not found:
            skipped += 1
            continue
        ranked = [h.path for h in index.discover(task.query, k=max(KS))]
        top = set(ranked)
        missed = tuple(r.entry for r in found if not any(f in top for f in r.files))
        per_task.append(
            TaskRecall(
                id=task.id,
                gold=tuple(r.entry for r in resolutions),
                ranked=tuple(ranked),
                recall_at_1=_recall(found, ranked, 1),
                recall_at_5=_recall(found, ranked, 5),
                recall_at_10=_recall(found, ranked, 10),
                missed_at_10=missed,
                files=resolved_files(found),
                unresolved=unresolved,
                notes=tuple(n for r in found if (n := r.note())),
            )
        )
    n = len(per_task)

    def mean(attr: str) -> float:
        return round(sum(getattr(t, attr) for t in per_task) / n, 4) if n else 0.0

    return DiscoverEval(
        tasks=n,
        recall_at_1=mean("recall_at_1"),
        recall_at_5=mean("recall_at_5"),
        recall_at_10=mean("recall_at_10"),
        sources_indexed=len(index.map.sources),
        files_indexed=len(index.map.paths),
        skipped_without_sources=skipped,
        sources_unresolved=len(unresolved_all),
        tasks_unresolved=tuple(unresolved_all),
        per_task=tuple(per_task),
    )


def discover_eval(workload: Path | str, lake: Path | str) -> DiscoverEval:
    """Index `lake` and evaluate source retrieval on the tasks of `workload`."""
    return evaluate_tasks(load_workload(workload), SourceIndex(index_lake(lake)))
