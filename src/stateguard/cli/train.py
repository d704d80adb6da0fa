"""`stateguard train ...`: training data, rewards and fine-tuning for managers."""

from __future__ import annotations

from pathlib import Path

import typer
from pydantic import ValidationError
from rich.console import Console

from stateguard.cli.train_data import eval_command, synth_command
from stateguard.errors import StateguardError
from stateguard.train.sft import SFTOptions, train_sft

train_app = typer.Typer(help="Training data and fine-tuning for managers.", no_args_is_help=True)
train_app.command("synth")(synth_command)
train_app.command("eval")(eval_command)


@train_app.command("sft")
def sft_command(
    data: Path = typer.Option(
        ..., "--data", help="Exported chat JSONL: a directory (train.jsonl) or one file."
    ),
    model: Path = typer.Option(
        ..., "--model", help="Local directory of a causal LM (weights are never downloaded)."
    ),
    out: Path = typer.Option(..., "--out", help="Directory to save the LoRA adapter in."),
    epochs: float = typer.Option(1.0, "--epochs", help="Training epochs."),
    max_steps: int = typer.Option(-1, "--max-steps", help="Stop after this many steps (-1: off)."),
    lr: float = typer.Option(2e-4, "--lr", help="Learning rate."),
    lora_r: int = typer.Option(16, "--lora-r", help="LoRA rank."),
    lora_alpha: int | None = typer.Option(None, "--lora-alpha", help="LoRA alpha (2 x rank)."),
    batch_size: int = typer.Option(1, "--batch-size", help="Rows per device and step."),
    grad_accum: int = typer.Option(1, "--grad-accum", help="Gradient accumulation steps."),
    max_length: int = typer.Option(4096, "--max-length", help="Tokens per row (truncated)."),
    loss: str = typer.Option(
        "assistant", "--loss", help="Tokens with loss: assistant | last | all."
    ),
    seed: int = typer.Option(0, "--seed", help="Training seed."),
    cpu: bool = typer.Option(False, "--cpu", help="Train on the CPU even with a GPU."),
) -> None:
    """Fine-tune a local causal LM with LoRA (TRL + PEFT) on exported manager trajectories."""
    err = Console(stderr=True, soft_wrap=True)
    try:
        opts = SFTOptions(
            data=data,
            model=model,
            out=out,
            epochs=epochs,
            max_steps=max_steps,
            lr=lr,
            lora_r=lora_r,
            lora_alpha=lora_alpha,
            batch_size=batch_size,
            grad_accum=grad_accum,
            max_length=max_length,
            loss=loss,  # type: ignore[arg-type]
            seed=seed,
            cpu=cpu,
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        name = "-".join(map(str, first["loc"])).replace("_", "-")
        err.print(f"--{name}: {first['msg']}", style="red", markup=False, highlight=False)
        raise typer.Exit(2) from None
    try:
        result = train_sft(opts, log=lambda m: err.print(m, markup=False, highlight=False))
    except StateguardError as exc:
        err.print(str(exc), style="red", markup=False, highlight=False)
        raise typer.Exit(2) from None
    losses = result.losses
    typer.echo(
        f"trained {result.steps} steps on {result.rows} rows ({result.device}, "
        f"{result.seconds:.1f} s); loss {losses[0]:.4f} -> {losses[-1]:.4f}"
        if losses
        else f"trained {result.steps} steps on {result.rows} rows (no loss logged)"
    )
    if result.eval_loss is not None:
        typer.echo(f"validation loss {result.eval_loss:.4f} on {result.validation_rows} rows")
    typer.echo(f"adapter: {result.adapter}")
