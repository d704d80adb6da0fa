"""`stateguard train ...`: training data, rewards and fine-tuning for managers."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from stateguard.cli.train_data import eval_command, synth_command

train_app = typer.Typer(help="Training data and fine-tuning for managers.", no_args_is_help=True)
train_app.command("synth")(synth_command)
train_app.command("eval")(eval_command)


@train_app.command("sft")
def sft_command(
    data: Path = typer.Option(..., "--data", help="Directory of exported chat JSONL files."),
    model: Path = typer.Option(..., "--model", help="Local path to a causal LM (no hub)."),
    out: Path = typer.Option(..., "--out", help="Directory to save the LoRA adapter in."),
    epochs: float = typer.Option(1.0, "--epochs", help="Training epochs."),
    max_steps: int = typer.Option(-1, "--max-steps", help="Stop after this many steps (-1: off)."),
    lr: float = typer.Option(2e-4, "--lr", help="Learning rate."),
    lora_r: int = typer.Option(16, "--lora-r", help="LoRA rank."),
) -> None:
    """Fine-tune a local causal LM with LoRA on exported manager trajectories."""
    Console(stderr=True).print("[red]sft: not implemented yet[/red]")
    raise typer.Exit(2)
