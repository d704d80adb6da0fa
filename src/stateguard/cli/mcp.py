"""`stateguard mcp`: serve a guarded kernel to MCP clients over stdio."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from stateguard.mcp import MANAGERS, serve


def mcp_command(
    manager: str = typer.Option("deterministic", "--manager", help="none | deterministic."),
    workdir: Path | None = typer.Option(None, "--workdir", help="The kernel's working directory."),
    data: Path | None = typer.Option(None, "--data", help="Directory exposed read-only as data/."),
    run_dir: Path | None = typer.Option(
        None, "--run-dir", help="Keep states.sqlite and checkpoints here (default: in memory)."
    ),
    cell_timeout: float = typer.Option(120.0, "--cell-timeout", help="Seconds per cell."),
) -> None:
    """Serve one guarded kernel over stdio (MCP): run_cell, stale_values, why_stale, …"""
    if manager not in MANAGERS:
        Console(stderr=True).print(
            f"[red]error:[/red] --manager must be one of {', '.join(MANAGERS)}"
        )
        raise typer.Exit(2)
    serve(
        manager=manager, workdir=workdir, data_dir=data, run_dir=run_dir, cell_timeout=cell_timeout
    )
