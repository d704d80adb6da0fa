"""`stateguard train sft` end to end on CPU with a tiny model made here from a config.

The model (2 layers, hidden size 32, random weights) and its byte-level BPE tokenizer
(trained on the rows, with a chat template) are built in the test: nothing comes from
a hub.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from stateguard.cli.main import app
from stateguard.train.sft import SFTOptions, check_model_dir, train_sft
from stateguard.train.sft_data import SFTDataError, load_data

TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['role'] == 'assistant' %}{% generation %}{{ m['content'] }}<|im_end|>"
    "{% endgeneration %}{% else %}{{ m['content'] }}<|im_end|>{% endif %}\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SYSTEM = "You manage analytical states. Reply with one JSON action."


def rows(n: int) -> list[dict[str, Any]]:
    """Exported rows: atomic decisions and one two-action lifecycle."""
    out = []
    for i in range(n):
        obs = {"event": "review", "turn": i % 3, "answer": f"{10 + i}.5"}
        action = (
            {"kind": "COMMIT_STATE"}
            if i % 2
            else {"kind": "UPDATE_STATE", "used_variables": ["df"]}
        )
        out.append(
            {
                "messages": [
                    {"role": "system", "content": SYSTEM},
                    {"role": "user", "content": "Observation:\n" + json.dumps(obs)},
                    {"role": "assistant", "content": json.dumps(action)},
                ]
            }
        )
    out.append(
        {
            "messages": [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": "Observation:\n{}"},
                {"role": "assistant", "content": json.dumps({"kind": "OPEN_STATE", "issue": "x"})},
                {"role": "user", "content": "Result of your last action:\nopened S1"},
                {"role": "assistant", "content": json.dumps({"kind": "COMMIT_STATE"})},
            ]
        }
    )
    return out


def write_jsonl(path: Path, data: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in data), encoding="utf-8")


@pytest.fixture
def torch() -> Iterator[Any]:
    """torch (the test skips without the training extra), on one thread while it runs:
    for a tiny model more threads only wait on each other on 2 shared cores."""
    mod = pytest.importorskip("torch", reason="needs the train extra: pip install -e '.[train]'")
    threads = mod.get_num_threads()
    mod.set_num_threads(1)
    yield mod
    mod.set_num_threads(threads)


def tiny_model(dest: Path, texts: list[str]) -> Path:
    """A 2-layer Qwen2 with random weights and a BPE tokenizer trained on ``texts``."""
    import torch  # the optional training extra (the `torch` fixture checked it is there)
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(texts, trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>"
    )
    fast.chat_template = TEMPLATE
    torch.manual_seed(0)
    config = Qwen2Config(
        vocab_size=len(fast),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
        tie_word_embeddings=True,
        initializer_range=0.3,  # frozen random embeddings must allow confident logits
    )
    Qwen2ForCausalLM(config).save_pretrained(dest)
    fast.save_pretrained(dest)
    return dest


@pytest.fixture
def exported(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    data.mkdir()
    write_jsonl(data / "train.jsonl", rows(6))
    write_jsonl(data / "validation.jsonl", rows(2)[:2])
    (data / "train.index.jsonl").write_text('{"row": 0}\n', encoding="utf-8")  # not rows
    return data


@pytest.mark.train
def test_sft_cli_trains_a_lora_adapter_and_the_loss_decreases(
    tmp_path: Path, exported: Path, torch: Any
) -> None:
    texts = [m["content"] for r in rows(6) for m in r["messages"]] + [TEMPLATE]
    model = tiny_model(tmp_path / "tiny", texts)
    out = tmp_path / "adapter"
    res = CliRunner().invoke(
        app,
        [
            "train", "sft", "--data", str(exported), "--model", str(model), "--out", str(out),
            "--max-steps", "20", "--lr", "0.01", "--lora-r", "8", "--batch-size", "2",
            "--cpu",
        ],
    )  # fmt: skip
    assert res.exit_code == 0, res.output + str(res.exception)
    assert "adapter: " in res.output
    summary = json.loads((out / "train_summary.json").read_text(encoding="utf-8"))
    losses = summary["losses"]
    assert summary["steps"] == 20 and len(losses) == 20
    assert summary["rows"] == 7 and summary["validation_rows"] == 2
    # the loss decreases: the last steps' mean is well under the first steps'
    assert sum(losses[-4:]) / 4 < 0.6 * sum(losses[:4]) / 4, losses
    assert summary["eval_loss"] is not None
    config = json.loads((out / "adapter_config.json").read_text(encoding="utf-8"))
    assert config["peft_type"] == "LORA" and config["r"] == 8
    assert (out / "adapter_model.safetensors").stat().st_size > 0

    # the adapter loads back onto the base model and changes its output
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(model, local_files_only=True)
    ids = torch.tensor([[1, 5, 9, 12]])
    before = base(ids).logits
    tuned = PeftModel.from_pretrained(base, out, local_files_only=True)
    assert not torch.allclose(before, tuned(ids).logits)


@pytest.mark.train
def test_sft_last_message_loss(tmp_path: Path, exported: Path, torch: Any) -> None:
    texts = [m["content"] for r in rows(6) for m in r["messages"]]
    model = tiny_model(tmp_path / "tiny", texts)
    opts = SFTOptions(
        data=exported / "train.jsonl",
        model=model,
        out=tmp_path / "a",
        max_steps=3,
        loss="last",
        cpu=True,
    )
    result = train_sft(opts)
    assert result.steps == 3 and len(result.losses) == 3
    assert result.validation_rows == 0  # one file given: no validation split
    assert (tmp_path / "a" / "adapter_config.json").is_file()


@pytest.mark.train
def test_a_template_without_generation_markers_needs_another_loss(
    tmp_path: Path, exported: Path, torch: Any
) -> None:
    texts = [m["content"] for r in rows(6) for m in r["messages"]]
    model = tiny_model(tmp_path / "tiny", texts)
    cfg = json.loads((model / "tokenizer_config.json").read_text(encoding="utf-8"))
    plain = TEMPLATE.replace("{% generation %}", "").replace("{% endgeneration %}", "")
    (model / "chat_template.jinja").write_text(plain, encoding="utf-8")
    cfg.pop("chat_template", None)
    (model / "tokenizer_config.json").write_text(json.dumps(cfg), encoding="utf-8")
    res = CliRunner().invoke(
        app,
        [
            "train",
            "sft",
            "--data",
            str(exported),
            "--model",
            str(model),
            "--out",
            str(tmp_path / "a"),
        ],
    )
    assert res.exit_code == 2
    assert "--loss last" in res.output


def test_a_model_path_that_is_not_a_local_model_is_a_typed_error(
    tmp_path: Path, exported: Path
) -> None:
    for model, why in [
        ("Qwen/Qwen2.5-1.5B-Instruct", "no such directory"),
        (str(exported / "train.jsonl"), "not a directory"),
        (str(exported), "no config.json"),
    ]:
        res = CliRunner().invoke(
            app, ["train", "sft", "--data", str(exported), "--model", model, "--out", str(tmp_path)]
        )
        assert res.exit_code == 2, res.output
        assert why in res.output and model in res.output.replace("\n", "")


def test_bad_options_are_named(tmp_path: Path, exported: Path) -> None:
    res = CliRunner().invoke(
        app,
        ["train", "sft", "--data", str(exported), "--model", str(tmp_path), "--out", str(tmp_path),
         "--lora-r", "0"],
    )  # fmt: skip
    assert res.exit_code == 2
    assert "--lora-r" in res.output


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("not json", "train.jsonl:2: not JSON"),
        ('{"text": "hi"}', "train.jsonl:2: a row is an object with a 'messages' list"),
        ('{"messages": []}', "train.jsonl:2: messages: Value error, no messages"),
        ('{"messages": [{"role": "user", "content": "q"}]}', "not 'assistant'"),
        ('{"messages": [{"role": "robot", "content": "q"}]}', "messages.0.role"),
    ],
)
def test_bad_rows_name_file_and_line(tmp_path: Path, line: str, error: str) -> None:
    data = tmp_path / "d"
    data.mkdir()
    (data / "train.jsonl").write_text(json.dumps(rows(1)[0]) + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(SFTDataError, match=error.replace("(", r"\(")):
        load_data(data)


def test_data_directory_forms(tmp_path: Path) -> None:
    with pytest.raises(SFTDataError, match="no such file"):
        load_data(tmp_path / "missing")
    with pytest.raises(SFTDataError, match=r"no train\.jsonl nor"):
        load_data(tmp_path)
    write_jsonl(tmp_path / "a.jsonl", rows(2))
    write_jsonl(tmp_path / "b.jsonl", rows(1))
    (tmp_path / "a.index.jsonl").write_text('{"row": 0}\n', encoding="utf-8")
    train, val = load_data(tmp_path)
    assert (len(train), len(val)) == (3 + 2, 0)
    with pytest.raises(Exception, match=r"no config\.json"):
        check_model_dir(tmp_path)


def test_without_the_training_extra_the_error_says_what_to_install(
    tmp_path: Path, exported: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib

    real = importlib.import_module

    def no_torch(name: str, *args: Any) -> Any:
        if name == "torch":
            raise ImportError("No module named 'torch'")
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", no_torch)
    model = tmp_path / "m"
    model.mkdir()
    (model / "config.json").write_text("{}", encoding="utf-8")
    res = CliRunner().invoke(
        app,
        ["train", "sft", "--data", str(exported), "--model", str(model), "--out", str(tmp_path)],
    )
    assert res.exit_code == 2
    assert "needs torch" in res.output and "pip install 'stateguard[train]'" in res.output
