"""`stateguard mcp`: serve a guarded kernel to MCP clients over stdio.

The ``hybrid`` and ``llm`` managers call a chat model, configured as for
``stateguard run``: flags, then the ``[llm]`` table of the config file, then the
environment (``STATEGUARD_BASE_URL``, ``STATEGUARD_MODEL``, ``STATEGUARD_API_KEY``…).
An API key is never taken from the command line.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from stateguard.cli.run import _MODEL_OPTIONS, _build_model, _overrides
from stateguard.mcp import MANAGERS, MODEL_MANAGERS, serve


def mcp_command(
    manager: str = typer.Option(
        "deterministic", "--manager", help="none | deterministic | hybrid | llm."
    ),
    workdir: Path | None = typer.Option(None, "--workdir", help="The kernel's working directory."),
    data: Path | None = typer.Option(None, "--data", help="Directory exposed read-only as data/."),
    run_dir: Path | None = typer.Option(
        None, "--run-dir", help="Keep states.sqlite and checkpoints here (default: in memory)."
    ),
    cell_timeout: float = typer.Option(120.0, "--cell-timeout", help="Seconds per cell."),
    base_url: str | None = _MODEL_OPTIONS["base_url"],
    model: str | None = _MODEL_OPTIONS["model"],
    api_key: str | None = _MODEL_OPTIONS["api_key"],
    model_path: Path | None = _MODEL_OPTIONS["model_path"],
    backend: str | None = _MODEL_OPTIONS["backend"],
    config: Path | None = _MODEL_OPTIONS["config"],
) -> None:
    """Serve one guarded kernel over stdio (MCP): run_cell, stale_values, why_stale, …"""
    err = Console(stderr=True)  # stdout carries the protocol
    if manager not in MANAGERS:
        err.print(f"[red]error:[/red] --manager must be one of {', '.join(MANAGERS)}")
        raise typer.Exit(2)
    overrides = _overrides(base_url, model, api_key, model_path, backend)
    chat = _build_model(err, overrides, config) if manager in MODEL_MANAGERS else None
    serve(
        manager=manager,
        model=chat,
        workdir=workdir,
        data_dir=data,
        run_dir=run_dir,
        cell_timeout=cell_timeout,
    )
