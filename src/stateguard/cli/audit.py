"""`stateguard audit ...`: source-map tools that need no LLM."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from stateguard.audit.discover_eval import discover_eval
from stateguard.audit.errors import AuditError
from stateguard.bench.loaders.kramabench import default_lake

audit_app = typer.Typer(
    help="Fail-loudly auditing: source map and retrieval.", no_args_is_help=True
)


@audit_app.command("discover-eval")
def discover_eval_command(
    workload: Path = typer.Argument(..., help="KramaBench-style workload JSON."),
    lake: Path | None = typer.Option(
        None,
        "--lake",
        help="Folder tree holding the data sources (default: KramaBench's "
        "data/DOMAIN/input beside workload/DOMAIN.json, or lake/ beside the file).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print a machine-readable result."),
) -> None:
    """Recall@1/5/10 of each task's gold data_sources, ranking the lake from the query alone."""
    if lake is None:
        lake = default_lake(workload)
        if lake is None:
            Console(stderr=True).print(
                f"[red]error:[/red] {workload}: no data lake found (looked for "
                f"data/{workload.stem}/input and lake/); give it with --lake"
            )
            raise typer.Exit(2)
    try:
        result = discover_eval(workload, lake)
    except AuditError as exc:
        Console(stderr=True).print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from exc
    if as_json:
        typer.echo(result.model_dump_json())
        return
    out = Console(highlight=False)
    table = Table("task", "gold", "r@5", "r@10", "missed at 10")
    for t in result.per_task:
        table.add_row(
            t.id,
            ", ".join(t.gold),
            f"{t.recall_at_5:.2f}",
            f"{t.recall_at_10:.2f}",
            ", ".join(t.missed_at_10),
        )
    out.print(table)
    for t in result.per_task:
        for note in t.notes:
            out.print(f"[yellow]note[/yellow] {t.id}: {note}")
    for missing in result.tasks_unresolved:
        out.print(f"[red]no file of the lake[/red] matches the source of {missing}")
    out.print(
        f"{result.tasks} tasks, {result.files_indexed} files ({result.sources_indexed} sources): "
        f"recall@5 {result.recall_at_5:.3f}, recall@10 {result.recall_at_10:.3f}"
    )
