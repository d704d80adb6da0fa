"""`stateguard report RUN_DIR`: write the self-contained HTML report of a run."""

from __future__ import annotations

import webbrowser
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from stateguard.errors import StateguardError
from stateguard.report import write_report


def report(
    run_dir: Path = typer.Argument(
        ..., help="Run directory (trajectory.jsonl, answers.json, states.sqlite, …)."
    ),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Where to write the page (default: RUN_DIR/report.html)."
    ),
    open_page: bool = typer.Option(False, "--open", help="Open the page in a web browser."),
) -> None:
    """Write report.html: state graph, per-turn timeline, hints and repairs, state details."""
    try:
        path = write_report(run_dir, out)
    except StateguardError as exc:
        Console(stderr=True, highlight=False).print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(2) from exc
    typer.echo(str(path.resolve()))
    if open_page:
        webbrowser.open(path.resolve().as_uri())
