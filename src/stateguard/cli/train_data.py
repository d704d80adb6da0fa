"""`stateguard train synth` and `stateguard train eval`: manager datasets and their benchmark."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from stateguard.errors import StateguardError
from stateguard.llm import UsageMeter, build_model, load_model_config
from stateguard.train.dataset import synth_dataset
from stateguard.train.evaluate import EVAL_POLICIES, EvalReport, evaluate
from stateguard.train.export import ExportConfig
from stateguard.train.revisions import REVISION_KINDS
from stateguard.train.synth import INJECTORS, SynthConfig, TaskSynth

_SUITES = ("dseval", "longds", "infiagent")


def synth_command(
    suite: str = typer.Option(..., help="dseval | longds | infiagent."),
    path: Path = typer.Option(..., exists=True, help="Suite folder (or one LongDS task folder)."),
    out: Path = typer.Option(..., help="Dataset directory to write."),
    inject: str = typer.Option(
        ",".join(INJECTORS), help="Comma-separated injectors planting the counterfactuals."
    ),
    faults_per_task: int = typer.Option(2, min=0, help="Faults per task and injector."),
    revisions: str = typer.Option(
        ",".join(REVISION_KINDS),
        help="Comma-separated revisions applied to the task itself ('none' for none).",
    ),
    revisions_per_kind: int = typer.Option(
        1, min=0, help="Revised tasks per task and revision kind."
    ),
    seed: int = typer.Option(0, help="Seed of the fault choice."),
    limit: int | None = typer.Option(None, min=1, help="Only the first N tasks."),
    start_index: int = typer.Option(0, min=0, help="Skip the first N tasks."),
    turn_limit: int | None = typer.Option(None, min=1, help="Only the first N turns per task."),
    path_map: list[str] = typer.Option([], help="LongDS PREFIX=TARGET path rewrite."),
    cell_timeout: float = typer.Option(120.0, help="Seconds per cell."),
    lifecycle_share: float = typer.Option(
        0.25, min=0.0, max=1.0, help="Share of full state lifecycles among the rows."
    ),
    val_fraction: float = typer.Option(
        0.2, min=0.0, max=0.9, help="Share of tasks held out for validation."
    ),
    split_seed: int = typer.Option(0, help="Seed of the train/validation split and the mix."),
    jobs: int = typer.Option(1, min=1, help="Tasks replayed in parallel (spawned processes)."),
    as_json: bool = typer.Option(False, "--json", help="Print the dataset card as JSON."),
) -> None:
    """Synthesize manager trajectories (clean, counterfactual, repair) and export chat JSONL."""
    if suite not in _SUITES:
        raise typer.BadParameter(f"choose one of {', '.join(_SUITES)}", param_hint="--suite")
    kinds = tuple(k.strip() for k in inject.split(",") if k.strip())
    unknown = [k for k in kinds if k not in INJECTORS]
    if unknown:
        raise typer.BadParameter(
            f"unknown injector(s) {', '.join(unknown)}; known: {', '.join(INJECTORS)}",
            param_hint="--inject",
        )
    rkinds = tuple(k.strip() for k in revisions.split(",") if k.strip() and k.strip() != "none")
    bad = [k for k in rkinds if k not in REVISION_KINDS]
    if bad:
        raise typer.BadParameter(
            f"unknown revision kind(s) {', '.join(bad)}; known: {', '.join(REVISION_KINDS)}",
            param_hint="--revisions",
        )
    console = Console(stderr=as_json)
    synth = SynthConfig(
        suite=suite,  # type: ignore[arg-type]
        path=path.resolve(),
        injectors=kinds,
        faults_per_task=faults_per_task,
        seed=seed,
        limit=limit,
        start_index=start_index,
        turn_limit=turn_limit,
        path_maps=tuple(path_map),
        cell_timeout=cell_timeout,
        revisions=rkinds,
        revisions_per_kind=revisions_per_kind,
    )
    export = ExportConfig(
        lifecycle_share=lifecycle_share, val_fraction=val_fraction, split_seed=split_seed
    )

    def progress(r: TaskSynth) -> None:
        console.print(
            f"{escape(r.task_id)}: {r.branches} replays, {len(r.trajectories)} trajectories, "
            f"{len(r.filtered)} filtered, {r.seconds:.0f} s"
        )

    try:
        card = synth_dataset(synth, export, out, jobs=jobs, progress=progress)
    except StateguardError as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(1) from None
    if as_json:
        typer.echo(card.model_dump_json(indent=1))
        return
    console.print((out / "card.md").read_text(encoding="utf-8"), markup=False)
    console.print(f"wrote {escape(str(out))}: train.jsonl, validation.jsonl, card.md, card.json")


def _table(report: EvalReport) -> Table:
    t = Table(title=f"manager decisions: {report.policy} ({report.split}, {report.scored} scored)")
    t.add_column("metric")
    t.add_column("value", justify="right")

    def fmt(v: float | None) -> str:
        return "n/a" if v is None else f"{v:.3f}"

    t.add_row("decision accuracy", fmt(report.decision_accuracy))
    t.add_row(
        "repair precision",
        f"{fmt(report.repair_precision)} ({report.repairs_predicted} predicted)",
    )
    t.add_row("repair recall", f"{fmt(report.repair_recall)} ({report.repairs_labelled} labelled)")
    t.add_row("protocol-valid rate", fmt(report.protocol_valid_rate))
    t.add_row("replay drift (not scored)", str(report.drift))
    t.add_row("not reached in the time budget", str(report.unasked))
    t.add_row("LLM calls", str(report.llm_calls))
    t.add_row("seconds", f"{report.seconds:.0f}")
    for kind, acc in report.accuracy_by_label.items():
        t.add_row(f"  correct on {kind}", acc)
    return t


def eval_command(
    data: Path = typer.Option(..., exists=True, help="Dataset directory from `train synth`."),
    policy: str = typer.Option(..., help="deterministic | none | llm."),
    split: str = typer.Option("validation", help="validation | train | all."),
    limit: int | None = typer.Option(None, min=1, help="Score a seeded subset of N activations."),
    seed: int = typer.Option(0, help="Seed of the --limit subset."),
    base_url: str | None = typer.Option(None, help="--policy llm: OpenAI-compatible endpoint."),
    model: str | None = typer.Option(None, help="--policy llm: model name."),
    model_config: Path | None = typer.Option(None, help="--policy llm: model config file."),
    max_tokens: int = typer.Option(400, min=16, help="--policy llm: tokens per reply."),
    time_budget: float | None = typer.Option(
        None, min=1, help="Stop asking after this many seconds; the rest is reported unasked."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Score a manager policy on held-out activations against the forced labels."""
    if policy not in EVAL_POLICIES:
        raise typer.BadParameter(f"choose one of {', '.join(EVAL_POLICIES)}", param_hint="--policy")
    if split not in ("validation", "train", "all"):
        raise typer.BadParameter("choose validation, train or all", param_hint="--split")
    console = Console(stderr=True)
    chat = None
    try:
        if policy == "llm":
            overrides = {k: v for k, v in {"base_url": base_url, "model": model}.items() if v}
            chat = build_model(load_model_config(overrides, model_config), meter=UsageMeter())
            load = getattr(chat, "load", None)
            if callable(load):
                load()

        def progress(done: int, total: int) -> None:
            console.print(f"{done}/{total} activations asked", highlight=False)

        report = evaluate(
            data,
            policy,  # type: ignore[arg-type]
            model=chat,
            split=split,  # type: ignore[arg-type]
            limit=limit,
            seed=seed,
            max_tokens=max_tokens,
            progress=progress if policy == "llm" else None,
            time_budget=time_budget,
        )
    except StateguardError as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(1) from None
    if as_json:
        typer.echo(json.dumps(report.model_dump(mode="json"), indent=1))
        return
    Console().print(_table(report))
