"""Entry point of the `stateguard` console script."""

from __future__ import annotations

import typer

from stateguard.cli.lineage import lineage_app

app = typer.Typer(
    name="stateguard",
    help="Keep multi-turn data-analysis agents from reusing stale results.",
    no_args_is_help=True,
    add_completion=False,
)
app.add_typer(lineage_app, name="lineage")


if __name__ == "__main__":  # pragma: no cover
    app()
