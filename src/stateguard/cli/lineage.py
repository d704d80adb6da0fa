"""`stateguard lineage ...`: score staleness cases."""

from __future__ import annotations

import json
import time
from pathlib import Path

import typer
from rich.console import Console

from stateguard.errors import CaseFormatError, KernelError
from stateguard.kernel.interpreter import use_for_kernels
from stateguard.kernel.sandbox import SandboxPolicy, resolve_sandbox
from stateguard.lineage.cases import CaseResult, check_cases, load_cases

lineage_app = typer.Typer(help="Deterministic lineage and staleness tools.", no_args_is_help=True)


@lineage_app.command("check")
def check(
    cases_file: Path = typer.Argument(..., help="JSON file of staleness cases."),
    as_json: bool = typer.Option(False, "--json", help="Print a machine-readable result."),
    allow_fail: bool = typer.Option(False, "--allow-fail", help="Exit 0 even if checks fail."),
    jobs: int = typer.Option(2, "--jobs", "-j", min=1, help="Kernels to run cases on."),
    cell_timeout: float = typer.Option(60.0, "--cell-timeout", help="Seconds per cell."),
    kernel_python: Path | None = typer.Option(
        None, "--kernel-python", help="Run the kernels on this Python (with ipykernel, pydantic)."
    ),
) -> None:
    """Run every case in a fresh namespace and score 'did this cell read a stale version?'."""
    err = Console(stderr=True)
    out = Console(highlight=False)
    try:
        cases = load_cases(cases_file)
    except CaseFormatError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from exc
    try:
        described = use_for_kernels(kernel_python)
        _, confinement = resolve_sandbox(SandboxPolicy.from_env())
    except KernelError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from exc
    if not confinement.confined:
        err.print(f"[bold red]kernels {confinement.describe()}[/bold red]")
    if described:
        err.print(f"kernels run on {described}")
    started = time.perf_counter()

    def show(result: CaseResult) -> None:
        if as_json or result.passed:
            return
        out.print(f"[red]FAIL[/red] {result.id}")
        for c in result.checks:
            if not c.passed:
                out.print(f"  after cell {c.after}: expected stale={c.expected}, got {c.observed}")
                for why in c.stale_reads:
                    out.print(f"    {why}")
        for e in result.cell_errors:
            out.print(f"  [dim]{e}[/dim]")

    with err.status(f"checking {len(cases)} cases…"):
        summary = check_cases(cases, jobs=jobs, cell_timeout=cell_timeout, on_result=show)
    elapsed = time.perf_counter() - started
    if as_json:
        typer.echo(json.dumps(summary.model_dump(mode="json"), indent=2))
    else:
        failed = sum(not r.passed for r in summary.cases)
        colour = "green" if failed == 0 else "red"
        out.print(
            f"[{colour}]{summary.checks_passed}/{summary.checks_total} checks passed[/{colour}]"
            f" ({len(summary.cases) - failed}/{len(summary.cases)} cases) in {elapsed:.1f}s"
        )
    if summary.checks_passed != summary.checks_total and not allow_fail:
        raise typer.Exit(1)
