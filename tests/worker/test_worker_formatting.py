"""Observations shown to the model: content, truncation marker, hint wording."""

from __future__ import annotations

import pytest

from stateguard.kernel import DisplayData, ErrorInfo, ExecutionResult
from stateguard.manager import Hint
from stateguard.worker.formatting import (
    first_code_line,
    format_hint,
    format_observation,
    truncate_head_tail,
)


def test_truncate_keeps_head_and_tail_with_a_marker() -> None:
    text = "".join(f"line {i}\n" for i in range(1000))
    cut = truncate_head_tail(text, 200)
    assert cut.startswith("line 0\n")
    assert cut.endswith("line 999\n")
    assert f"[{len(text) - 200} characters omitted]" in cut
    assert len(cut) < 260
    assert truncate_head_tail("short", 200) == "short"


def test_observation_parts() -> None:
    ex = ExecutionResult(
        status="error",
        stdout="hello\n",
        stderr="a warning\n",
        result=None,
        displays=[DisplayData(data={"image/png": "iVBOR", "text/plain": "<Figure>"})],
        error=ErrorInfo(ename="KeyError", evalue="'x'", traceback=["Traceback", "KeyError: 'x'"]),
        wall_time=0.1,
    )
    obs = format_observation(ex, 4000)
    assert "Output:\nhello" in obs
    assert "Stderr:\na warning" in obs
    assert "[1 image displayed]" in obs
    assert "Error: KeyError: 'x'" in obs


def test_observation_result_is_not_repeated_as_a_display() -> None:
    ex = ExecutionResult(
        status="ok",
        result="6",
        displays=[DisplayData(data={"text/plain": "6"})],
        wall_time=0.1,
    )
    assert format_observation(ex, 4000) == "Result:\n6"


def test_observation_of_a_silent_cell_says_so() -> None:
    obs = format_observation(ExecutionResult(status="ok", wall_time=0.0), 4000)
    assert "without output" in obs


def test_long_output_is_truncated_head_and_tail() -> None:
    out = "".join(f"row {i}\n" for i in range(5000))
    obs = format_observation(ExecutionResult(status="ok", stdout=out, wall_time=0.0), 500)
    assert "row 0" in obs and "row 4999" in obs and "characters omitted" in obs
    assert len(obs) < 600


def test_hint_text_is_verbatim() -> None:
    hint = Hint(kind="state", text="cost@v1 is stale: derived from rate@v1")
    assert format_hint(hint).endswith("\ncost@v1 is stale: derived from rate@v1")
    assert "reference only" in format_hint(hint)
    assert "answer" in format_hint(Hint(kind="repair", text="x"))


def test_first_code_line() -> None:
    assert first_code_line("# load\n\nimport pandas as pd\nx = 1") == "import pandas as pd …"
    assert first_code_line("x = 1") == "x = 1"
    assert first_code_line("y = " + "a" * 200, 20).endswith("…")


@pytest.mark.parametrize(
    ("code", "result", "shown"),
    [
        ("t[t['s'] == 'r'].shape", "(181, 7)", "Result:\n(181, 7): 181 rows, 7 columns"),
        ("t['a'].shape", "(1,)", "Result:\n(1,): 1 value"),
        ("t.shape[0]", "181", "Result:\n181"),  # already a number
        ("x = t.shape\nx", "(181, 7)", "Result:\n(181, 7)"),  # not a `.shape` as written
        ("(181, 7)", "(181, 7)", "Result:\n(181, 7)"),
    ],
)
def test_a_shape_result_is_also_said_in_words(code: str, result: str, shown: str) -> None:
    ex = ExecutionResult(status="ok", result=result, wall_time=0.1)
    assert format_observation(ex, 4000, code) == shown
