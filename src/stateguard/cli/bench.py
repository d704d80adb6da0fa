"""`stateguard bench run` and `stateguard bench report`: benchmark runs and their reports."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from stateguard.bench.judging import rejudge_run
from stateguard.bench.losses import LOST_SHARE_LIMIT, Losses, summary_lines
from stateguard.bench.records import RunConfig
from stateguard.bench.report import HEADLINE, build_report, run_losses, write_metrics
from stateguard.bench.runner import run_benchmark
from stateguard.errors import StateguardError
from stateguard.kernel.interpreter import KERNEL_PYTHON_ENV, use_for_kernels
from stateguard.verify.chain import SEARCH_VERIFIERS

bench_app = typer.Typer(
    help="Benchmarks: replayed or agent runs over DSEval, LongDS and InfiAgent tasks.",
    no_args_is_help=True,
)

_SUITES = ("dseval", "longds", "infiagent", "kramabench")
_WORKERS = ("replay", "llm")
_MANAGERS = ("none", "window", "freeform", "deterministic", "llm", "hybrid")
_INJECT = ("stale-reuse", "dropped-constraint", "flipped-comparison", "scope-change", "join-fault")


def _check(value: str | None, allowed: tuple[str, ...], option: str) -> None:
    if value is not None and value not in allowed:
        raise typer.BadParameter(
            f"{value!r}; choose one of {', '.join(allowed)}", param_hint=option
        )


class _Live:
    """Rich progress over turns, fed by runner events."""

    def __init__(self, progress: Progress, console: Console) -> None:
        self.progress = progress
        self.console = console
        self.bar = progress.add_task("turns", total=None)
        self.correct = 0
        self.scored = 0

    def __call__(self, event: Any) -> None:
        p = event.payload
        if event.kind == "task_start" and event.task_id == "*":
            self.progress.update(self.bar, total=p["turns_total"], completed=p["turns_done"])
            self.console.print(
                f"{p['tasks']} tasks, {p['turns_total']} turns ({p['turns_done']} already done)"
            )
        elif event.kind == "turn":
            self.progress.advance(self.bar)
            if not p.get("skipped") and p.get("correct") is not None:
                self.scored += 1
                self.correct += bool(p["correct"])
            acc = f"{self.correct}/{self.scored} correct" if self.scored else ""
            self.progress.update(self.bar, description=f"{event.task_id[:40]} {acc}")
        elif event.kind == "error":
            self.console.print(f"[red]error in {escape(event.task_id)}:[/red] {escape(p['error'])}")


def _headline_table(title: str, metrics: dict[str, dict[str, Any]]) -> Table:
    table = Table(title=title)
    table.add_column("metric")
    for label in metrics:
        table.add_column(label, justify="right")
    for key in HEADLINE:
        cells = []
        for m in metrics.values():
            v = m.get(key)
            cells.append("n/a" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v))
        table.add_row(key, *cells)
    return table


def _print_losses(console: Console, lost: Losses) -> None:
    """The lost-work figures, first and in red when anything was lost."""
    style = "red" if lost.anything_lost else "green"
    for line in summary_lines(lost):
        console.print(f"[{style}]{escape(line)}[/{style}]")


@bench_app.command("run")
def run(
    suite: str = typer.Option(..., help="dseval | longds | infiagent | kramabench."),
    path: Path = typer.Option(
        ..., exists=True, help="Suite folder (one LongDS task folder, a KramaBench workload file)."
    ),
    lake: Path | None = typer.Option(
        None, exists=True, file_okay=False, help="KramaBench: the workload's data lake folder."
    ),
    out: Path = typer.Option(..., "--out", help="Run directory (resumed when it exists)."),
    worker: str = typer.Option("replay", help="replay (reference code) | llm (the agent)."),
    manager: str = typer.Option("none", help="none|window|freeform|deterministic|llm|hybrid."),
    inject: str | None = typer.Option(
        None,
        help="Plant faults (replay only): "
        "stale-reuse|dropped-constraint|flipped-comparison|scope-change|join-fault.",
    ),
    jobs: int = typer.Option(1, min=1, help="Tasks run in parallel (process pool)."),
    backend: str = typer.Option("local", help="local | ray (tasks as Ray tasks)."),
    ray_address: str | None = typer.Option(None, help="Ray cluster address (default: auto)."),
    seed: int = typer.Option(0, help="Seed of the fault choice."),
    limit: int | None = typer.Option(None, min=1, help="Only the first N tasks."),
    max_injections: int = typer.Option(1, min=1, help="Injected turns per task at most."),
    max_repairs: int = typer.Option(3, min=0, help="Replay re-runs after repair hints per turn."),
    cell_timeout: float = typer.Option(120.0, help="Seconds per executed cell."),
    model_config: Path | None = typer.Option(
        None, help="Chat model config file (llm worker/manager)."
    ),
    base_url: str | None = typer.Option(None, help="OpenAI-compatible endpoint."),
    model: str | None = typer.Option(None, help="Model name at the endpoint."),
    start_index: int = typer.Option(0, min=0, help="Skip the first N tasks (loader order)."),
    task_limit: int | None = typer.Option(None, min=1, help="Run at most N tasks (= --limit)."),
    turn_limit: int | None = typer.Option(None, min=1, help="Only the first N turns per task."),
    path_map: list[str] = typer.Option(
        [],
        "--path-map",
        help="LongDS: rewrite PREFIX=TARGET in reference code; PREFIX may use {domain}, "
        "{dataset}, {task} (e.g. /data/longds/{domain}/{dataset}/{task}/data=data).",
    ),
    judge: str = typer.Option(
        "deterministic",
        help="Text answers: deterministic | llm (LLM judge scores every answer) | hybrid "
        "(LLM judge decides what the deterministic rules leave undecided).",
    ),
    judge_prompt_file: Path | None = typer.Option(
        None,
        exists=True,
        dir_okay=False,
        help="LLM judge template ({question} {ground_truth} {solution}).",
    ),
    judge_base_url: str | None = typer.Option(
        None, help="LLM judge endpoint (default --base-url)."
    ),
    judge_model: str | None = typer.Option(None, help="LLM judge model (default --model)."),
    strict: bool = typer.Option(
        False,
        help="Exit 1 when a task is rejected or its run fails, or more than a tenth of "
        "the turns are not scored.",
    ),
    worker_protocol: str = typer.Option(
        "native", help="--worker llm message protocol: native | longds (LongDS's own shape)."
    ),
    worker_prompt_file: Path | None = typer.Option(
        None, exists=True, dir_okay=False, help="System prompt for --worker-protocol longds."
    ),
    kernel_python: Path | None = typer.Option(
        None, help="Run the task kernels on this Python (e.g. a venv with pandas 2)."
    ),
    search: str | None = typer.Option(
        None, help="--worker llm: answer each turn by test-time search: best-of-n | beam | dvts."
    ),
    search_n: int = typer.Option(
        4, "--n", min=1, help="--search budget: rollouts, candidates per step, or DVTS budget."
    ),
    verifier: str = typer.Option(
        "deterministic",
        help="Step verifier ranking --search candidates: deterministic|llm|hybrid, or "
        "deterministic>hybrid (the rules rank, the hybrid breaks their ties).",
    ),
    max_steps: int = typer.Option(20, min=1, help="--worker llm: steps per turn at most."),
) -> None:
    """Run (or resume) a benchmark and print its headline metrics."""

    _check(suite, _SUITES, "--suite")
    _check(worker, _WORKERS, "--worker")
    _check(manager, _MANAGERS, "--manager")
    _check(inject, _INJECT, "--inject")
    _check(backend, ("local", "ray"), "--backend")
    _check(judge, ("deterministic", "llm", "hybrid"), "--judge")
    _check(worker_protocol, ("native", "longds"), "--worker-protocol")
    _check(search, ("best-of-n", "beam", "dvts"), "--search")
    _check(verifier, SEARCH_VERIFIERS, "--verifier")
    if limit is not None and task_limit is not None and limit != task_limit:
        raise typer.BadParameter("give --limit or --task-limit, not both", param_hint="--limit")
    judge_overrides = {
        k: v for k, v in {"base_url": judge_base_url, "model": judge_model}.items() if v
    }
    console = Console()
    overrides = {k: v for k, v in {"base_url": base_url, "model": model}.items() if v}
    try:
        if described := use_for_kernels(kernel_python):
            console.print(f"kernels run on {escape(described)}")
        config = RunConfig(
            suite=suite,  # type: ignore[arg-type]
            path=str(path.resolve()),
            lake=str(lake.resolve()) if lake else None,
            kernel_python=os.environ.get(KERNEL_PYTHON_ENV) or None,
            worker=worker,  # type: ignore[arg-type]
            manager=manager,
            inject=inject,  # type: ignore[arg-type]
            seed=seed,
            limit=task_limit or limit,
            start_index=start_index,
            turn_limit=turn_limit,
            path_maps=list(path_map),
            judge=judge,  # type: ignore[arg-type]
            worker_protocol=worker_protocol,  # type: ignore[arg-type]
            worker_prompt_file=str(worker_prompt_file.resolve()) if worker_prompt_file else None,
            judge_prompt_file=str(judge_prompt_file.resolve()) if judge_prompt_file else None,
            judge_llm_overrides=judge_overrides,
            max_injections=max_injections,
            max_repairs=max_repairs,
            cell_timeout=cell_timeout,
            llm_overrides=overrides,
            llm_config_file=str(model_config) if model_config else None,
            search=search,  # type: ignore[arg-type]
            search_n=search_n,
            verifier=verifier,  # type: ignore[arg-type]
            max_steps_per_turn=max_steps,
        )
        columns = (
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
        )
        with Progress(*columns, console=console) as progress:
            outcome = run_benchmark(
                config,
                out,
                jobs=jobs,
                backend=backend,  # type: ignore[arg-type]
                progress=_Live(progress, console),
                ray_address=ray_address,
            )
        metrics = write_metrics(out)
    except StateguardError as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(2) from exc
    lost = run_losses(metrics)
    _print_losses(console, lost)
    console.print(_headline_table(f"{out}", {"run": metrics}))
    for rejection in metrics.get("rejections", []):
        console.print(
            f"[yellow]rejected[/yellow] {escape(rejection['task_id'])}: "
            f"{escape(rejection['reason'])}"
        )
    if metrics.get("turns_undecided"):
        console.print(
            f"{metrics['turns_undecided']} turn(s) undecided by the deterministic judge "
            "(--judge hybrid lets the LLM judge decide them)"
        )
    console.print(
        f"{outcome.tasks_run} task(s) run, {outcome.turns_recorded} turn(s) recorded, "
        f"{outcome.errors} runner error(s), {outcome.tasks_rejected} task(s) rejected; "
        f"metrics in {out / 'metrics.json'}"
    )
    if lost.over_limit:
        share = f"{lost.turns_lost} of {lost.turns_total} turns were not scored"
        if strict:
            console.print(f"[red]--strict:[/red] {share}, more than {LOST_SHARE_LIMIT:.0%}")
            raise typer.Exit(1)
        console.print(
            f"[red]{share}, more than {LOST_SHARE_LIMIT:.0%}[/red] "
            "(--strict makes this exit non-zero)"
        )
    if strict and (outcome.tasks_rejected or metrics.get("tasks_failed")):
        console.print("[red]--strict:[/red] rejected or failed tasks (see above)")
        raise typer.Exit(1)


@bench_app.command("report")
def report(
    run_dir: Path = typer.Argument(..., exists=True, file_okay=False, help="Run A."),
    run_dir_b: Path | None = typer.Argument(None, exists=True, file_okay=False, help="Run B."),
    out: Path | None = typer.Option(None, help="Report folder (default RUN_DIR/report)."),
    resamples: int = typer.Option(10_000, min=1, help="Bootstrap resamples."),
    seed: int = typer.Option(0, help="Bootstrap seed."),
    judge: str | None = typer.Option(
        None,
        help="Re-judge the runs' LongDS answers first: llm (every answer) | hybrid "
        "(the turns the deterministic judge left undecided).",
    ),
    judge_prompt_file: Path | None = typer.Option(
        None,
        exists=True,
        dir_okay=False,
        help="LLM judge template ({question} {ground_truth} {solution}).",
    ),
    judge_base_url: str | None = typer.Option(None, help="LLM judge endpoint."),
    judge_model: str | None = typer.Option(None, help="LLM judge model."),
) -> None:
    """metrics.json per run; with RUN_DIR_B the paired bootstrap of B − A; plots and HTML."""

    console = Console()
    if judge is not None:
        _check(judge, ("llm", "hybrid"), "--judge")
        overrides = {
            k: v for k, v in {"base_url": judge_base_url, "model": judge_model}.items() if v
        }
        prompt = str(judge_prompt_file.resolve()) if judge_prompt_file else None
        for rd in [run_dir] + ([run_dir_b] if run_dir_b is not None else []):
            try:
                counts = rejudge_run(
                    rd, judge, judge_llm_overrides=overrides, judge_prompt_file=prompt
                )
            except StateguardError as exc:
                console.print(f"[red]error:[/red] {escape(str(exc))}")
                raise typer.Exit(2) from exc
            console.print(
                f"{rd}: {counts['judged']} turn(s) judged by the LLM judge, "
                f"{counts['unparseable']} without a parseable score"
            )
    try:
        summary = build_report(run_dir, run_dir_b, out, n_resamples=resamples, seed=seed)
    except StateguardError as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(2) from exc
    labels = {"A": summary["metrics"]["A"]}
    if "B" in summary["metrics"]:
        labels["B"] = summary["metrics"]["B"]
    for label, metrics in labels.items():
        if len(labels) > 1:
            console.print(f"{label}:")
        _print_losses(console, run_losses(metrics))
    console.print(
        _headline_table(
            "A = " + str(run_dir) + ("" if run_dir_b is None else f", B = {run_dir_b}"), labels
        )
    )
    comparison = summary["comparison"]
    if comparison is not None:
        table = Table(title=f"B − A, paired cluster bootstrap ({resamples} resamples, seed {seed})")
        for col in ("metric", "difference", "95 % interval", "tasks", "turns"):
            table.add_column(col)
        for metric, p in comparison["paired"].items():
            if "mean_diff" in p:
                table.add_row(
                    metric,
                    f"{p['mean_diff']:+.3f}",
                    f"[{p['ci_low']:+.3f}, {p['ci_high']:+.3f}]",
                    str(p["n_tasks"]),
                    str(p["n_turns"]),
                )
            else:
                table.add_row(metric, "n/a", p["error"], "", "")
        console.print(table)
    console.print(f"report: {summary['html']}")
