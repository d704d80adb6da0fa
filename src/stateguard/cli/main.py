"""Entry point of the `stateguard` console script."""

from __future__ import annotations

import typer

from stateguard import __version__
from stateguard.cli.audit import audit_app
from stateguard.cli.bench import bench_app
from stateguard.cli.lineage import lineage_app
from stateguard.cli.mcp import mcp_command
from stateguard.cli.report import report
from stateguard.cli.run import chat_command, run_command
from stateguard.cli.train import train_app
from stateguard.cli.verify import verify_app

app = typer.Typer(
    name="stateguard",
    help="Keep multi-turn data-analysis agents from reusing stale results.",
    no_args_is_help=True,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"stateguard {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Keep multi-turn data-analysis agents from reusing stale results."""


app.add_typer(lineage_app, name="lineage")
app.add_typer(bench_app, name="bench")
app.add_typer(audit_app, name="audit")
app.add_typer(verify_app, name="verify")
app.add_typer(train_app, name="train")
app.command("run")(run_command)
app.command("chat")(chat_command)
app.command("report")(report)
app.command("mcp")(mcp_command)


if __name__ == "__main__":  # pragma: no cover
    app()
