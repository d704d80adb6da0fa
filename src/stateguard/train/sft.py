"""LoRA fine-tuning of a local causal LM on exported manager trajectories (TRL + PEFT).

`train_sft` reads the chat JSONL of `stateguard train synth` (see `sft_data`), loads
the model and tokenizer from a local directory only (the hub is never asked: the run
sets ``HF_HUB_OFFLINE=1`` and loads with ``local_files_only``), trains a LoRA adapter
with TRL's ``SFTTrainer`` and saves the adapter (and the tokenizer) in ``out``.

Which tokens carry the loss (``loss``):

* ``assistant`` (default): every assistant message, nothing else (TRL's
  ``assistant_only_loss``). It needs a chat template with ``{% generation %}``
  markers; TRL supplies one for the templates it knows (Qwen2.5 among them).
* ``last``: the final assistant message only (a prompt-completion row).
* ``all``: every token of the conversation.

torch, transformers, trl, peft and datasets are imported only here, when a run
starts (the ``stateguard[train]`` extra).
"""

from __future__ import annotations

import importlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from stateguard.errors import StateguardError
from stateguard.train.sft_data import ChatRow, load_data

LossMode = Literal["assistant", "last", "all"]
TRAIN_MODULES = ("torch", "transformers", "trl", "peft", "datasets")
SUMMARY = "train_summary.json"


class SFTError(StateguardError):
    """A fine-tuning run that cannot start or finish: says what to change."""


class TrainExtraMissing(SFTError):
    """The training libraries are not installed."""


class ModelPathError(SFTError):
    """``--model`` is not a local model directory."""


class SFTOptions(BaseModel):
    """What one fine-tuning run does."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    data: Path
    model: Path
    out: Path
    epochs: float = Field(default=1.0, gt=0)
    max_steps: int = Field(default=-1, ge=-1)
    """Stop after this many optimizer steps (-1: run the epochs)."""
    lr: float = Field(default=2e-4, gt=0)
    lora_r: int = Field(default=16, ge=1)
    lora_alpha: int | None = Field(default=None, ge=1)
    """LoRA scaling numerator (None: twice the rank)."""
    lora_dropout: float = Field(default=0.05, ge=0, lt=1)
    batch_size: int = Field(default=1, ge=1)
    grad_accum: int = Field(default=1, ge=1)
    max_length: int = Field(default=4096, ge=16)
    """Tokens per row; longer rows are truncated."""
    loss: LossMode = "assistant"
    seed: int = 0
    cpu: bool = False
    """Train on the CPU even where a GPU is available."""
    gradient_checkpointing: bool | None = None
    """Trade compute for memory (None: on a GPU only)."""


class SFTResult(BaseModel):
    """What a run did: written to ``out/train_summary.json``."""

    model_config = ConfigDict(frozen=True)

    adapter: str
    rows: int
    validation_rows: int
    steps: int
    losses: tuple[float, ...]
    """Training loss at each logged step."""
    eval_loss: float | None = None
    seconds: float
    device: str
    options: dict[str, Any]


def import_training() -> dict[str, ModuleType]:
    """The training libraries, or `TrainExtraMissing` saying how to install them."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    mods: dict[str, ModuleType] = {}
    for name in TRAIN_MODULES:
        try:
            mods[name] = importlib.import_module(name)
        except ImportError as exc:
            raise TrainExtraMissing(
                f"stateguard train sft needs {name} ({exc}); install the training extra: "
                "pip install 'stateguard[train]' (install the torch build for your machine "
                "first, e.g. a CPU-only wheel where there is no GPU)"
            ) from None
    return mods


def check_model_dir(model: Path) -> Path:
    """``model`` as a local model directory (config.json inside), or `ModelPathError`."""
    if not model.exists():
        raise ModelPathError(
            f"--model {model}: no such directory. Weights are never downloaded here: "
            "give the path of a local model directory (config.json, tokenizer and weights)"
        )
    if not model.is_dir():
        raise ModelPathError(f"--model {model}: not a directory")
    if not (model / "config.json").is_file():
        raise ModelPathError(
            f"--model {model}: no config.json (not a transformers model directory)"
        )
    return model


def _dataset(rows: list[ChatRow], loss: LossMode, datasets: ModuleType) -> Any:
    if loss == "last":
        data = [
            {
                "prompt": [m.model_dump() for m in r.messages[:-1]],
                "completion": [r.messages[-1].model_dump()],
            }
            for r in rows
        ]
    else:
        data = [r.as_dict() for r in rows]
    return datasets.Dataset.from_list(data)


def _check_template(tokenizer: Any, opts: SFTOptions, trl: ModuleType) -> None:
    if not getattr(tokenizer, "chat_template", None):
        raise SFTError(f"--model {opts.model}: the tokenizer has no chat template")
    if opts.loss != "assistant":
        return
    utils = importlib.import_module("trl.chat_template_utils")
    try:
        utils.get_training_chat_template(tokenizer)
    except ValueError:
        raise SFTError(
            f"--model {opts.model}: its chat template has no {{% generation %}} markers and TRL "
            "cannot patch it, so assistant tokens cannot be told apart: use --loss last "
            "(the final action only) or --loss all"
        ) from None


def train_sft(opts: SFTOptions, log: Callable[[str], None] = lambda _m: None) -> SFTResult:
    """Fine-tune ``opts.model`` with LoRA on ``opts.data``; the adapter goes to ``opts.out``."""
    train_rows, val_rows = load_data(opts.data)
    check_model_dir(opts.model)
    mods = import_training()
    torch, transformers, trl, peft = (mods[k] for k in ("torch", "transformers", "trl", "peft"))
    gpu = torch.cuda.is_available() and not opts.cpu
    bf16 = gpu and torch.cuda.is_bf16_supported()
    dtype = torch.bfloat16 if bf16 else torch.float32
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(opts.model, local_files_only=True)
        model = transformers.AutoModelForCausalLM.from_pretrained(
            opts.model, local_files_only=True, dtype=dtype
        )
    except (OSError, ValueError) as exc:
        raise ModelPathError(f"--model {opts.model}: cannot load a causal LM: {exc}") from None
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    _check_template(tokenizer, opts, trl)
    log(f"{len(train_rows)} training rows, {len(val_rows)} validation rows; loss on {opts.loss}")
    lora = peft.LoraConfig(
        r=opts.lora_r,
        lora_alpha=opts.lora_alpha or 2 * opts.lora_r,
        lora_dropout=opts.lora_dropout,
        target_modules="all-linear",
        task_type="CAUSAL_LM",
    )
    checkpointing = gpu if opts.gradient_checkpointing is None else opts.gradient_checkpointing
    # transformers 5.24 renamed the option; earlier 5.x releases know only the old name
    renamed = "activation_checkpointing" in getattr(trl.SFTConfig, "__dataclass_fields__", {})
    config = trl.SFTConfig(
        output_dir=str(opts.out),
        num_train_epochs=opts.epochs,
        max_steps=opts.max_steps,
        learning_rate=opts.lr,
        per_device_train_batch_size=opts.batch_size,
        per_device_eval_batch_size=opts.batch_size,
        gradient_accumulation_steps=opts.grad_accum,
        max_length=opts.max_length,
        assistant_only_loss=opts.loss == "assistant",
        logging_steps=1,
        save_strategy="no",
        eval_strategy="no",
        report_to=[],
        seed=opts.seed,
        bf16=bf16,
        use_cpu=not gpu,
        **{"activation_checkpointing" if renamed else "gradient_checkpointing": checkpointing},
        disable_tqdm=True,
        dataloader_pin_memory=gpu,
    )
    trainer = trl.SFTTrainer(
        model=model,
        args=config,
        train_dataset=_dataset(train_rows, opts.loss, mods["datasets"]),
        eval_dataset=_dataset(val_rows, opts.loss, mods["datasets"]) if val_rows else None,
        processing_class=tokenizer,
        peft_config=lora,
    )
    start = time.perf_counter()
    trainer.train()
    eval_loss = trainer.evaluate().get("eval_loss") if val_rows else None
    seconds = time.perf_counter() - start
    opts.out.mkdir(parents=True, exist_ok=True)
    trainer.save_model(str(opts.out))
    tokenizer.save_pretrained(str(opts.out))
    losses = tuple(float(e["loss"]) for e in trainer.state.log_history if "loss" in e)
    result = SFTResult(
        adapter=str(opts.out),
        rows=len(train_rows),
        validation_rows=len(val_rows),
        steps=int(trainer.state.global_step),
        losses=losses,
        eval_loss=eval_loss,
        seconds=round(seconds, 2),
        device="cuda" if gpu else "cpu",
        options=opts.model_dump(mode="json"),
    )
    (opts.out / SUMMARY).write_text(json.dumps(result.model_dump(), indent=1), encoding="utf-8")
    return result
