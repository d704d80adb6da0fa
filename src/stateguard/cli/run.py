"""`stateguard run TASK` and `stateguard chat DATA_DIR`: the agent end to end, live progress."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from textwrap import indent
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.status import Status
from rich.table import Table

from stateguard.errors import ModelError, StateguardError, TaskFormatError
from stateguard.kernel import Confinement
from stateguard.kernel.interpreter import use_for_kernels
from stateguard.llm import ChatModel, UsageMeter, build_model, load_model_config
from stateguard.report import write_report
from stateguard.worker.events import (
    AnswerRecorded,
    HintDelivered,
    ManagerLogged,
    ModelMessage,
    StepRecord,
    TrajectoryEvent,
    TurnStarted,
)
from stateguard.worker.formatting import first_code_line
from stateguard.worker.resume import ResumeError, read_manifest
from stateguard.worker.run import MANAGER_KINDS, RunSession, RunSummary, manager_kinds
from stateguard.worker.summary import REFUSED
from stateguard.worker.tasks import Task, load_task, task_from_data_dir

_MANAGER_HELP = f"Manager policy: {'|'.join(MANAGER_KINDS)}."
_QUIT = {"", ":q", ":quit", "quit", "exit"}


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "run"


def _default_out(prefix: str) -> Path:
    return Path("runs") / f"{_slug(prefix)}-{time.strftime('%Y%m%d-%H%M%S')}"


def _build_model(err: Console, overrides: dict[str, Any], config: Path | None) -> ChatModel:
    """The configured chat model, loaded; on a configuration problem print it and exit 2."""
    try:
        model = build_model(load_model_config(overrides, config), meter=UsageMeter())
        load = getattr(model, "load", None)
        if callable(load):
            with err.status("loading the embedded model…"):
                load()
    except ModelError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(2) from exc
    return model


def _manager_line(event: ManagerLogged, verbose: bool) -> str | None:
    """One short line for a manager event; None to skip it.

    Hints are shown when delivered; activations only in verbose mode.
    """
    kind, data = event.event.type, event.event.data
    if kind == "hint" or (kind == "activation" and not verbose):
        return None
    action = data.get("action")
    if isinstance(action, dict) and "kind" in action:
        text = f"{kind} {action['kind']}"
        if data.get("result"):
            text += f" -> {data['result']}"
    else:
        scalars = [f"{k}={v}" for k, v in data.items() if isinstance(v, str | int | float | bool)]
        text = " ".join([kind, *scalars[:4]])
    return " ".join(text.split())[:140]


_NO_ANSWER = {
    "steps": "the step budget ran out",
    "tokens": "the token budget ran out",
    "time": "the time budget ran out",
    "no_progress": "no progress (the same failure again and again)",
    "interrupt": "interrupted",
    "answer": "no answer",
}


class _Progress:
    """Renders the event stream: one line per step, hints and manager events as they happen.

    Steps are numbered within the turn (``step 3/10``); each line shows how long the
    model took, and the status line the turn's elapsed time, its budget and an estimate.
    """

    def __init__(
        self,
        console: Console,
        status: Status,
        total: int | None,
        verbose: bool,
        max_steps: int | None = None,
        turn_seconds: float | None = None,
    ) -> None:
        self.console = console
        self.status = status
        self.total = total
        self.verbose = verbose
        self.max_steps = max_steps
        self.turn_seconds = turn_seconds
        self.turn = 0
        self.turn_steps = 0
        self.turn_started = time.monotonic()
        self.model_seconds = 0.0

    def _status(self, what: str) -> None:
        of = f"/{self.total}" if self.total else ""
        steps = f"/{self.max_steps}" if self.max_steps else ""
        elapsed = time.monotonic() - self.turn_started
        clock = f"{elapsed:.0f}s" + (f"/{self.turn_seconds:.0f}s" if self.turn_seconds else "")
        text = f"turn {self.turn}{of} · step {self.turn_steps + 1}{steps} · {clock}"
        if self.turn_steps and self.max_steps:
            pace = elapsed / self.turn_steps
            left = pace * (self.max_steps - self.turn_steps)
            if self.turn_seconds:
                left = min(left, max(0.0, self.turn_seconds - elapsed))
            text += f" · at most ~{left:.0f}s left in this turn"
        self.status.update(f"{text} · {what}")

    def __call__(self, event: TrajectoryEvent) -> None:
        """Show one event."""
        out = self.console
        if isinstance(event, TurnStarted):
            self.turn, self.turn_steps = event.turn, 0
            self.turn_started = time.monotonic()
            of = f"/{self.total}" if self.total else ""
            out.rule(f"Turn {event.turn}{of}")
            if event.context.strip():
                out.print(f"[dim]{escape(event.context.strip())}[/dim]")
            out.print(f"[bold]{escape(event.question.strip())}[/bold]")
            self._status("waiting for the model")
        elif isinstance(event, ModelMessage) and event.role == "assistant":
            self.model_seconds += event.seconds
            if event.candidate:
                self._status(f"trying another sample ({event.seconds:.1f}s)")
            else:
                self._status("running")
        elif isinstance(event, StepRecord) and event.setup:
            ex = event.execution
            status = ex.status if ex is not None else "not run"
            self.console.print(f"  setup ▸ the worker loads the data files … {status}")
        elif isinstance(event, StepRecord):
            self.turn_steps += 1
            self._step(event)
            self.model_seconds = 0.0
            self._status("waiting for the model")
        elif isinstance(event, HintDelivered):
            colour, label = (
                ("magenta", "repair hint") if event.hint.kind == "repair" else ("yellow", "hint")
            )
            text = indent(event.hint.text, "    ").lstrip()
            out.print(f"  [{colour}]⚑ {label}:[/{colour}] {escape(text)}")
        elif isinstance(event, ManagerLogged):
            line = _manager_line(event, self.verbose)
            if line is not None:
                out.print(f"  [dim]· manager {escape(line)}[/dim]")
        elif isinstance(event, AnswerRecorded):
            self._answer(event)

    def _step(self, event: StepRecord) -> None:
        out = self.console
        steps = f"/{self.max_steps}" if self.max_steps else ""
        head = f"  step {self.turn_steps}{steps}"
        model = f"[dim]model {self.model_seconds:.1f}s[/dim]"
        if event.problem == "repeated_failure":
            out.print(f"{head} [yellow]↺ repeats a failed cell, not run[/yellow] {model}")
        elif event.problem == "repeated_cell":
            out.print(f"{head} [yellow]↺ repeats a cell that ran, not run[/yellow] {model}")
        elif event.problem in REFUSED:
            out.print(f"{head} [yellow]✗ answer refused ({event.problem})[/yellow] {model}")
        elif event.problem is not None:
            out.print(f"{head} [yellow]✗ malformed reply ({event.problem})[/yellow] {model}")
        elif event.execution is not None and event.code is not None:
            ex = event.execution
            colour = "green" if ex.ok else "red"
            line = escape(first_code_line(event.code, 80))
            out.print(
                f"{head} ▸ {line} [{colour}]{ex.status}[/{colour}] {ex.wall_time:.2f}s {model}"
            )
            if self.verbose:
                if event.thought:
                    out.print(escape(indent(event.thought, "    ")), style="dim italic")
                out.print(escape(indent(event.code, "    ")), style="cyan")
                out.print(escape(indent(event.observation, "    │ ")), style="dim")
        elif event.answer is not None:
            out.print(f"{head} ◆ proposed answer: {escape(event.answer)} {model}")

    def _answer(self, event: AnswerRecorded) -> None:
        out = self.console
        if event.answer is None:
            text = f"[red]no answer: {_NO_ANSWER.get(event.ended, event.ended)}[/red]"
        elif event.unconfirmed:
            text = (
                f"[yellow]unconfirmed answer:[/yellow] {escape(event.answer)} [dim](no answer "
                f"accepted: {_NO_ANSWER.get(event.ended, event.ended)})[/dim]"
            )
        else:
            text = f"[bold green]answer:[/bold green] {escape(event.answer)}"
        if event.gold is not None:
            mark = {True: "[green]✓[/green]", False: "[red]✗[/red]", None: "?"}[event.correct]
            text += f"  (gold {escape(str(event.gold))} {mark})"
        out.print(f"  {text}  [dim]{event.steps} steps, {event.wall_time:.1f}s[/dim]")


def _print_confinement(out: Console, confinement: Confinement | None) -> None:
    if confinement is None:
        return
    if confinement.confined:
        out.print(f"[dim]kernel: {escape(confinement.describe())}[/dim]")
    else:
        out.print(f"[bold red]kernel {escape(confinement.describe())}[/bold red]")


def _print_summary(out: Console, summary: RunSummary) -> None:
    table = Table(title=f"{summary.task} · manager {summary.manager} · {summary.model}")
    columns = ("turn", "answer", "gold", "correct", "ended", "steps", "tokens", "malformed")
    for col in (*columns, "hint tok", "repairs", "time"):
        table.add_column(col, overflow="fold")
    for t in summary.turns:
        correct = {True: "[green]yes[/green]", False: "[red]no[/red]", None: ""}[t.correct]
        cuts = ", ".join(f"{n} {k}" for k, n in sorted(t.cut_replies.items()))
        table.add_row(
            str(t.turn),
            escape(t.answer if t.answer is not None else "—")
            + (" [yellow](unconfirmed)[/yellow]" if t.unconfirmed else ""),
            escape("" if t.gold is None else str(t.gold)),
            correct,
            t.ended,
            str(t.steps),
            str(t.completion_tokens),
            str(t.invalid_steps) + (f" (cut: {escape(cuts)})" if cuts else ""),
            str(t.hint_tokens),
            str(t.repairs),
            f"{t.wall_time:.1f}s",
        )
    out.print(table)
    if summary.graded:
        out.print(f"correct: {summary.correct}/{summary.graded}")
    if summary.error:
        out.print(f"[red]stopped early:[/red] {escape(summary.error)}")
    out.print(f"run directory: {summary.run_dir}")
    if summary.report is not None:
        out.print(f"report: {summary.report}")
    _print_confinement(out, summary.confinement)


def _open_session(
    err: Console, task: Task, model: ChatModel, out_dir: Path, manager: str, **options: Any
) -> RunSession:
    """The run session, or exit 2 when the manager policy or options are unusable."""
    try:
        return RunSession(task, model, out_dir, manager=manager, report=write_report, **options)
    except StateguardError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(2) from exc


def _use_kernel_python(err: Console, path: Path | None) -> None:
    """Check ``--kernel-python`` and make it every kernel's interpreter, or exit 2."""
    try:
        described = use_for_kernels(path)
    except StateguardError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(2) from exc
    if described:
        err.print(f"kernels run on {escape(described)}")


_KERNEL_PYTHON_HELP = "Run the kernel on this Python (with ipykernel and pydantic)."

_MODEL_OPTIONS = {
    "base_url": typer.Option(None, "--base-url", help="OpenAI-compatible endpoint URL."),
    "model": typer.Option(None, "--model", help="Model name at the endpoint."),
    "manager_model": typer.Option(
        None, "--manager-model", help="Model name for the manager at the same endpoint."
    ),
    # Refused (see _overrides); hidden so that it is not advertised.
    "api_key": typer.Option(None, "--api-key", hidden=True),
    "model_path": typer.Option(None, "--model-path", help="GGUF file for the embedded backend."),
    "backend": typer.Option(None, "--backend", help="openai | local | scripted."),
    "config": typer.Option(None, "--config", help="Model config file (TOML or YAML, llm section)."),
}


def _run_options(
    max_steps: int,
    turn_seconds: float,
    cell_timeout: float,
    context_chars: int,
    turn_tokens: int = 0,
    call_seconds: float = 0,
) -> dict[str, Any]:
    return {
        "max_steps_per_turn": max_steps,
        "turn_seconds": turn_seconds or None,
        "turn_tokens": turn_tokens or None,
        "call_seconds": call_seconds or None,
        "cell_timeout": cell_timeout,
        "context_chars": context_chars,
    }


DEFAULT_MAX_STEPS = 10
DEFAULT_TURN_SECONDS = 0.0
DEFAULT_TURN_TOKENS = 4000
DEFAULT_CALL_SECONDS = 900.0
_MAX_STEPS_HELP = "Step budget per turn."
_TURN_SECONDS_HELP = (
    "Wall-clock budget per turn in seconds, checked before each model call (default 0: "
    "none, so a turn ends the same way on a fast or a slow machine)."
)
_TURN_TOKENS_HELP = "Token budget per turn: the worker model's generated tokens (0: none)."
_CALL_SECONDS_HELP = (
    "Wall-clock cap of one model call in seconds, a safety net above what a call takes "
    "under load; a reply cut by it counts as malformed (0: none)."
)


def _overrides(
    base_url: str | None,
    model: str | None,
    api_key: str | None,
    model_path: Path | None,
    backend: str | None,
) -> dict[str, Any]:
    """The model flags as configuration overrides (None = not given)."""
    if api_key is not None:
        raise typer.BadParameter(
            "an API key on the command line is readable by every process on this machine "
            "(/proc/PID/cmdline); set STATEGUARD_API_KEY, or api_key in the [llm] table of "
            "stateguard.toml (or the file given with --config)",
            param_hint="--api-key",
        )
    return {
        "base_url": base_url,
        "model": model,
        "api_key": api_key,
        "model_path": model_path,
        "backend": backend,
    }


def _prepare(
    err: Console,
    manager: str,
    load: Callable[[], Task],
    overrides: dict[str, Any],
    config: Path | None,
) -> tuple[Task, ChatModel]:
    """Validate the manager, load the task and build the model; exit 2 with a message."""
    if manager not in manager_kinds():
        err.print(f"[red]error:[/red] --manager must be one of {', '.join(manager_kinds())}")
        raise typer.Exit(2)
    try:
        task = load()
    except TaskFormatError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(2) from exc
    return task, _build_model(err, overrides, config)


_ORIGIN = (
    "task_path",
    "manager",
    "max_steps",
    "turn_seconds",
    "turn_tokens",
    "call_seconds",
    "cell_timeout",
    "context_chars",
    "allow_outside_data",
    "base_url",
    "model",
    "manager_model",
    "model_path",
    "backend",
    "config",
    "kernel_python",
)
"""The parameters of `stateguard run` that ``run.json`` records and ``--resume`` reuses."""
_PATHS = {"task_path", "model_path", "config", "kernel_python"}
_GIVEN = ("COMMANDLINE", "ENVIRONMENT")
"""Parameter sources (by name: typer bundles its own click) of a value the user gave."""


def _origin_value(name: str, value: Any) -> Any:
    if name == "kernel_python" and value is not None:
        return str(Path(value).absolute())  # a venv's python is a symlink: keep it
    if name in _PATHS and value is not None:
        return str(Path(value).resolve())
    return value


def _resumed_values(ctx: typer.Context, run_dir: Path, values: dict[str, Any]) -> dict[str, Any]:
    """The recorded parameters of ``run_dir``; a parameter given again must be the same."""
    recorded = read_manifest(run_dir).origin
    out = dict(values)
    for name in _ORIGIN:
        if name not in recorded:
            continue
        given = getattr(ctx.get_parameter_source(name), "name", None) in _GIVEN
        if given and values[name] != recorded[name]:
            flag = "TASK" if name == "task_path" else "--" + name.replace("_", "-")
            raise ResumeError(
                f"{run_dir / 'run.json'}: {flag}: the run was started with "
                f"{recorded[name]!r}, not {values[name]!r}; leave it out to reuse it"
            )
        out[name] = recorded[name]
    return out


def _print_resume(out: Console, run: RunSession) -> None:
    done = run.resumed
    if done is None:
        return
    out.print(
        f"resumed: {done.replayed_turns} finished turn(s) replayed into a new kernel "
        f"({done.replayed_cells} cells, {done.replay_seconds:.2f}s); "
        f"{done.dropped_events} event(s) of an unfinished turn redone; "
        f"the previous attempt is in {done.previous}"
    )
    for line in done.divergences:
        out.print(f"[yellow]replay divergence:[/yellow] {escape(line)}")


def run_command(
    ctx: typer.Context,
    task_path: Path | None = typer.Argument(
        None, metavar="[TASK]", help="Task file or directory (with --resume: the recorded one)."
    ),
    manager: str = typer.Option("hybrid", "--manager", help=_MANAGER_HELP),
    out: Path | None = typer.Option(None, "--out", help="Run directory (default runs/NAME-TIME)."),
    resume: Path | None = typer.Option(
        None,
        "--resume",
        help="Continue the run in this directory after a crash or kill: its finished turns "
        "are replayed, an unfinished one is redone, the rest run; same task and settings.",
    ),
    max_steps: int = typer.Option(DEFAULT_MAX_STEPS, "--max-steps", min=1, help=_MAX_STEPS_HELP),
    turn_seconds: float = typer.Option(
        DEFAULT_TURN_SECONDS, "--turn-seconds", min=0, help=_TURN_SECONDS_HELP
    ),
    turn_tokens: int = typer.Option(
        DEFAULT_TURN_TOKENS, "--turn-tokens", min=0, help=_TURN_TOKENS_HELP
    ),
    call_seconds: float = typer.Option(
        DEFAULT_CALL_SECONDS, "--call-seconds", min=0, help=_CALL_SECONDS_HELP
    ),
    cell_timeout: float = typer.Option(120.0, "--cell-timeout", help="Seconds per cell."),
    context_chars: int = typer.Option(16_000, "--context-chars", help="Prompt budget (chars)."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Show code and observations."),
    allow_outside_data: bool = typer.Option(
        False, "--allow-outside-data", help="Accept data paths outside the task's folder."
    ),
    kernel_python: Path | None = typer.Option(None, "--kernel-python", help=_KERNEL_PYTHON_HELP),
    base_url: str | None = _MODEL_OPTIONS["base_url"],
    model: str | None = _MODEL_OPTIONS["model"],
    manager_model: str | None = _MODEL_OPTIONS["manager_model"],
    api_key: str | None = _MODEL_OPTIONS["api_key"],
    model_path: Path | None = _MODEL_OPTIONS["model_path"],
    backend: str | None = _MODEL_OPTIONS["backend"],
    config: Path | None = _MODEL_OPTIONS["config"],
) -> None:
    """Run every turn of a task with the agent and a manager; write the run directory."""
    err = Console(stderr=True)
    console = Console(highlight=False)
    given = {
        "task_path": task_path,
        "manager": manager,
        "max_steps": max_steps,
        "turn_seconds": turn_seconds,
        "turn_tokens": turn_tokens,
        "call_seconds": call_seconds,
        "cell_timeout": cell_timeout,
        "context_chars": context_chars,
        "allow_outside_data": allow_outside_data,
        "base_url": base_url,
        "model": model,
        "manager_model": manager_model,
        "model_path": model_path,
        "backend": backend,
        "config": config,
        "kernel_python": kernel_python,
    }
    values = {name: _origin_value(name, value) for name, value in given.items()}
    if resume is not None:
        try:
            values = _resumed_values(ctx, resume, values)
        except ResumeError as exc:
            err.print(f"[red]error:[/red] {escape(str(exc))}")
            raise typer.Exit(2) from exc
        if out is not None and out.resolve() != resume.resolve():
            err.print("[red]error:[/red] --out and --resume name different directories")
            raise typer.Exit(2)
        out = resume
        if values["task_path"] is None:
            err.print(
                f"[red]error:[/red] {escape(str(resume))} records no task file "
                "(a stateguard chat session?); only stateguard run can be resumed"
            )
            raise typer.Exit(2)
    elif values["task_path"] is None:
        err.print("[red]error:[/red] missing TASK (a task file or directory), or --resume RUN_DIR")
        raise typer.Exit(2)
    v = values
    _use_kernel_python(err, None if v["kernel_python"] is None else Path(v["kernel_python"]))
    overrides = _overrides(v["base_url"], v["model"], api_key, v["model_path"], v["backend"])
    config_path = None if v["config"] is None else Path(v["config"])
    task, chat_model = _prepare(
        err,
        v["manager"],
        lambda: load_task(Path(v["task_path"]), allow_outside_data=v["allow_outside_data"]),
        overrides,
        config_path,
    )
    out_dir = out or _default_out(task.name)
    options = _run_options(
        v["max_steps"],
        v["turn_seconds"],
        v["cell_timeout"],
        v["context_chars"],
        v.get("turn_tokens", DEFAULT_TURN_TOKENS),
        v.get("call_seconds", DEFAULT_CALL_SECONDS),
    )
    if v["manager_model"] is not None:  # the manager's own model; else it shares the worker's
        options["manager_model"] = _build_model(
            err, {**overrides, "model": v["manager_model"]}, config_path
        )
    options.update(resume=resume is not None, origin=values)
    run = _open_session(err, task, chat_model, out_dir, v["manager"], **options)
    failed = False
    with console.status("starting the kernel…") as status:
        progress = _Progress(
            console, status, len(task.turns), verbose, v["max_steps"], v["turn_seconds"] or None
        )
        try:
            with run:
                _print_confinement(console, run.confinement)
                _print_resume(console, run)
                for turn in task.turns[run.turns_done :]:
                    for event in run.run_turn(
                        turn.question, turn.context, turn.answer, turn.tolerance
                    ):
                        progress(event)
        except ResumeError as exc:
            err.print(f"[red]error:[/red] {escape(str(exc))}")
            raise typer.Exit(2) from exc
        except StateguardError as exc:
            err.print(f"[red]error:[/red] {escape(str(exc))}")
            failed = True
        except KeyboardInterrupt:  # the run is closed (report written); say where it is
            err.print(
                f"[yellow]interrupted[/yellow]; continue with: stateguard run --resume {out_dir}"
            )
            failed = True
    _print_summary(console, run.summary())
    if failed:
        raise typer.Exit(1)


def chat_command(
    data_dir: Path = typer.Argument(..., help="Directory of data files to analyse."),
    manager: str = typer.Option("hybrid", "--manager", help=_MANAGER_HELP),
    out: Path | None = typer.Option(None, "--out", help="Run directory (default runs/chat-…)."),
    max_steps: int = typer.Option(DEFAULT_MAX_STEPS, "--max-steps", min=1, help=_MAX_STEPS_HELP),
    turn_seconds: float = typer.Option(
        DEFAULT_TURN_SECONDS, "--turn-seconds", min=0, help=_TURN_SECONDS_HELP
    ),
    turn_tokens: int = typer.Option(
        DEFAULT_TURN_TOKENS, "--turn-tokens", min=0, help=_TURN_TOKENS_HELP
    ),
    call_seconds: float = typer.Option(
        DEFAULT_CALL_SECONDS, "--call-seconds", min=0, help=_CALL_SECONDS_HELP
    ),
    cell_timeout: float = typer.Option(120.0, "--cell-timeout", help="Seconds per cell."),
    context_chars: int = typer.Option(16_000, "--context-chars", help="Prompt budget (chars)."),
    kernel_python: Path | None = typer.Option(None, "--kernel-python", help=_KERNEL_PYTHON_HELP),
    base_url: str | None = _MODEL_OPTIONS["base_url"],
    model: str | None = _MODEL_OPTIONS["model"],
    manager_model: str | None = _MODEL_OPTIONS["manager_model"],
    api_key: str | None = _MODEL_OPTIONS["api_key"],
    model_path: Path | None = _MODEL_OPTIONS["model_path"],
    backend: str | None = _MODEL_OPTIONS["backend"],
    config: Path | None = _MODEL_OPTIONS["config"],
) -> None:
    """Ask questions about DATA_DIR turn by turn (empty line or :q to quit)."""
    err = Console(stderr=True)
    console = Console(highlight=False)
    _use_kernel_python(err, kernel_python)
    overrides = _overrides(base_url, model, api_key, model_path, backend)
    task, chat_model = _prepare(
        err, manager, lambda: task_from_data_dir(data_dir), overrides, config
    )
    out_dir = out or _default_out(f"chat-{task.name}")
    options = _run_options(
        max_steps, turn_seconds, cell_timeout, context_chars, turn_tokens, call_seconds
    )
    if manager_model is not None:  # the manager's own model; else it shares the worker's
        options["manager_model"] = _build_model(err, {**overrides, "model": manager_model}, config)
    run = _open_session(err, task, chat_model, out_dir, manager, **options)
    failed = False
    try:
        with run:
            console.print(f"Data: {data_dir} · run directory: {run.run_dir}")
            _print_confinement(console, run.confinement)
            console.print("[dim]Ask a question; an empty line or :q quits.[/dim]")
            while True:
                try:
                    typed = console.input("[bold]question>[/bold] ").strip()
                except EOFError:
                    break
                if typed in _QUIT:  # a quit command (":q"), not a question
                    break
                with console.status("thinking…") as status:
                    progress = _Progress(
                        console, status, None, True, max_steps, turn_seconds or None
                    )
                    for event in run.run_turn(typed):
                        progress(event)
    except StateguardError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        failed = True
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/yellow]")
        failed = True
    _print_summary(console, run.summary())
    if failed:
        raise typer.Exit(1)
