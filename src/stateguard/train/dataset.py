"""`stateguard train synth`: synthesize, export and describe a manager dataset.

The output directory holds:

* ``trajectories.jsonl`` — every kept `ManagerTrajectory` (the raw views and labels);
* ``train.jsonl`` / ``validation.jsonl`` — chat rows ``{"messages": [...]}``;
* ``train.index.jsonl`` / ``validation.index.jsonl`` — one `SampleInfo` per row;
* ``card.json`` / ``card.md`` — the dataset card (`DatasetCard`);
* ``cache/`` — the clean runs and fault plans (reused by a re-run and by ``train eval``).
"""

from __future__ import annotations

import json
import shutil
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from stateguard.errors import StateguardError
from stateguard.train.export import ExportConfig, build_samples, counts, write_split
from stateguard.train.records import RECORDS_VERSION, write_trajectories
from stateguard.train.synth import Filtered, SynthConfig, TaskSynth, synthesize

CARD_VERSION = 1


class DatasetCard(BaseModel):
    """What a synthesized dataset holds and how it was made."""

    model_config = ConfigDict(frozen=True)

    version: int = CARD_VERSION
    records_version: int = RECORDS_VERSION
    created: str
    synth: SynthConfig
    export: ExportConfig
    seconds: float
    jobs: int
    tasks: int
    branches: int
    """Replays run (clean and faulted)."""
    trajectories: dict[str, int]
    """Kept trajectories by kind."""
    trajectories_by_injector: dict[str, int]
    activations: int
    filtered: dict[str, int]
    """Filtered branches and clean turns by ``unit: reason``."""
    filtered_by_injector: dict[str, int]
    filter_rate: float
    """Filtered faulted branches / faulted branches planned."""
    samples_available: dict[str, int]
    duplicates_dropped: int
    validation_tasks: list[str]
    rows: dict[str, int]
    train: dict[str, dict[str, int]]
    validation: dict[str, dict[str, int]]
    proposal_disagreements: dict[str, int]
    """Activations where the deterministic proposal's kind differs from the label's."""
    revisions: dict[str, int] = {}
    """Revised tasks kept (some branch kept), by revision kind."""
    revisions_filtered: dict[str, int] = {}
    """Revisions filtered (no effect on a later result, revision turn fails), by kind."""
    revision_filter_rate: float = 0.0
    """Filtered revisions / revisions applied."""
    trajectories_by_revision: dict[str, int] = {}
    """Kept trajectories of revised tasks, by ``revision kind: trajectory kind``."""


def _card_md(card: DatasetCard) -> str:
    lines = [
        f"# Manager dataset: {card.synth.suite} ({card.synth.path})",
        "",
        f"Created {card.created} by `stateguard train synth` in {card.seconds:.0f} s "
        f"({card.jobs} job(s)). Split seed {card.export.split_seed}, "
        f"validation share of tasks {card.export.val_fraction}, lifecycle share "
        f"{card.export.lifecycle_share}. Fault seed {card.synth.seed}, "
        f"{card.synth.faults_per_task} fault(s) per task and injector.",
        "",
        "Labels are forced from the planted faults (not from a policy): the faulted turn's "
        "review ends in REPAIR; after the repair the turn commits without a second repair; "
        "clean turns commit with the relations inferred from lineage.",
        "",
        f"- tasks: {card.tasks}; replays: {card.branches}; activations kept: {card.activations}",
        f"- trajectories: {_inline(card.trajectories)}",
        f"- trajectories by injector: {_inline(card.trajectories_by_injector)}",
        f"- filter rate (faulted branches): {card.filter_rate:.3f}",
        f"- revisions kept by kind: {_inline(card.revisions) or '0'}; filtered: "
        f"{_inline(card.revisions_filtered) or '0'} (rate {card.revision_filter_rate:.3f})",
        f"- trajectories of revised tasks: {_inline(card.trajectories_by_revision) or '0'}",
        f"- samples available: {_inline(card.samples_available)}; duplicates dropped: "
        f"{card.duplicates_dropped}",
        f"- rows: {_inline(card.rows)}",
        f"- validation tasks: {', '.join(card.validation_tasks) or '(none)'}",
        f"- deterministic proposal ≠ label: {_inline(card.proposal_disagreements) or '0'}",
        "",
        "## Filtered",
        "",
        "| unit: reason | count |",
        "| --- | --- |",
        *[f"| {k} | {v} |" for k, v in card.filtered.items()],
        "",
        f"By injector: {_inline(card.filtered_by_injector)}",
        "",
    ]
    for split in ("train", "validation"):
        lines += [f"## {split}", ""]
        for name, table in getattr(card, split).items():
            lines.append(f"- {name.replace('_', ' ')}: {_inline(table)}")
        lines.append("")
    return "\n".join(lines)


def _inline(d: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in d.items())


def build_card(
    synth: SynthConfig,
    export: ExportConfig,
    results: list[TaskSynth],
    filtered: list[Filtered],
    out: Path,
    *,
    seconds: float,
    jobs: int,
) -> DatasetCard:
    """Export the samples of ``results`` into ``out`` and return the card describing them."""
    trajs = [t for r in results for t in r.trajectories]
    write_trajectories(out / "trajectories.jsonl", trajs)
    exported = build_samples(trajs, export)
    write_split(out, "train", exported.train)
    write_split(out, "validation", exported.validation)
    all_filtered = [*filtered, *(f for r in results for f in r.filtered)]
    faulted = Counter(t.branch_id for t in trajs if t.kind == "repair")
    fault_filtered = [f for f in all_filtered if f.unit == "branch" and f.injector]
    planned = len(faulted) + len(fault_filtered)
    rev_kept = {
        (t.task_id, t.branch_id.split("/revision-", 1)[1].split("/", 1)[0], t.revision.kind)
        for t in trajs
        if t.revision is not None
    }
    rev_filtered = [
        f for f in all_filtered if f.revision and f.injector is None and f.unit == "branch"
    ]
    rev_applied = len(rev_kept) + len(rev_filtered)
    disagree: Counter[str] = Counter()
    for t in trajs:
        for a in t.activations:
            got = (a.proposed or {}).get("kind")
            if got not in a.label_kinds:
                disagree[f"{got} -> {a.label_kind}"] += 1
    return DatasetCard(
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        synth=synth,
        export=export,
        seconds=round(seconds, 1),
        jobs=jobs,
        tasks=len(results),
        branches=sum(r.branches for r in results),
        trajectories=dict(Counter(t.kind for t in trajs)),
        trajectories_by_injector=dict(Counter(t.injector or "none (clean)" for t in trajs)),
        activations=len({(t.branch_id, a.index) for t in trajs for a in t.activations}),
        filtered=dict(Counter(f"{f.unit}: {f.reason}" for f in all_filtered).most_common()),
        filtered_by_injector=dict(Counter(f.injector for f in fault_filtered if f.injector)),
        filter_rate=round(len(fault_filtered) / planned, 4) if planned else 0.0,
        samples_available=exported.available,
        duplicates_dropped=exported.duplicates,
        validation_tasks=exported.val_tasks,
        rows={"train": len(exported.train), "validation": len(exported.validation)},
        train=counts(exported.train),
        validation=counts(exported.validation),
        proposal_disagreements=dict(disagree.most_common()),
        revisions=dict(Counter(kind for _, _, kind in rev_kept)),
        revisions_filtered=dict(Counter(f.revision for f in rev_filtered if f.revision)),
        revision_filter_rate=round(len(rev_filtered) / rev_applied, 4) if rev_applied else 0.0,
        trajectories_by_revision=dict(
            Counter(f"{t.revision.kind}: {t.kind}" for t in trajs if t.revision is not None)
        ),
    )


def write_card(out: Path, card: DatasetCard) -> None:
    """``card.json`` and ``card.md``."""
    (out / "card.json").write_text(card.model_dump_json(indent=1) + "\n", encoding="utf-8")
    (out / "card.md").write_text(_card_md(card), encoding="utf-8")


def read_card(data: Path) -> DatasetCard:
    """The card of a dataset directory (typed error naming the file when absent or bad)."""
    path = data / "card.json"
    if not path.exists():
        raise StateguardError(f"{path}: no dataset card (run `stateguard train synth` first)")
    try:
        return DatasetCard.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise StateguardError(f"{path}: not a dataset card: {exc}") from None


def synth_dataset(
    synth: SynthConfig,
    export: ExportConfig,
    out: Path,
    *,
    jobs: int = 1,
    progress: Callable[[TaskSynth], None] | None = None,
) -> DatasetCard:
    """Synthesize, export and describe a dataset in ``out``."""
    started = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    results, filtered = synthesize(synth, out, jobs=jobs, progress=progress)
    shutil.rmtree(out / "work", ignore_errors=True)
    card = build_card(
        synth, export, results, filtered, out, seconds=time.monotonic() - started, jobs=jobs
    )
    write_card(out, card)
    return card


def card_json(card: DatasetCard) -> str:
    """The card as indented JSON."""
    return json.dumps(card.model_dump(mode="json"), indent=1)
