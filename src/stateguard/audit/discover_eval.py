"""Source-retrieval evaluation: recall@k of each task's gold data sources, no LLM.

For each task of a workload, `discover(task.query)` ranks the lake's files; the
task's recall@k is the share of its gold `data_sources` found among the first k
files. The figures are means over the tasks that list at least one source.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from stateguard.audit.discovery import SourceIndex
from stateguard.audit.sources import index_lake
from stateguard.audit.workload import WorkloadTask, load_workload, matches_source

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
    per_task: tuple[TaskRecall, ...] = ()


def _recall(gold: tuple[str, ...], ranked: list[str], k: int) -> float:
    top = ranked[:k]
    return sum(any(matches_source(p, g) for p in top) for g in gold) / len(gold)


def evaluate_tasks(tasks: list[WorkloadTask], index: SourceIndex) -> DiscoverEval:
    """Recall@1/5/10 of the gold data sources, discovering from each task's query alone."""
    per_task = []
    skipped = 0
    for task in tasks:
        if not task.data_sources:
            skipped += 1
            continue
        ranked = [h.path for h in index.discover(task.query, k=max(KS))]
        missed = tuple(
            g for g in task.data_sources if not any(matches_source(p, g) for p in ranked)
        )
        per_task.append(
            TaskRecall(
                id=task.id,
                gold=task.data_sources,
                ranked=tuple(ranked),
                recall_at_1=_recall(task.data_sources, ranked, 1),
                recall_at_5=_recall(task.data_sources, ranked, 5),
                recall_at_10=_recall(task.data_sources, ranked, 10),
                missed_at_10=missed,
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
        per_task=tuple(per_task),
    )


def discover_eval(workload: Path | str, lake: Path | str) -> DiscoverEval:
    """Index `lake` and evaluate source retrieval on the tasks of `workload`."""
    return evaluate_tasks(load_workload(workload), SourceIndex(index_lake(lake)))
