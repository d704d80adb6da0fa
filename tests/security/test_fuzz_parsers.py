"""Fuzzing every parser of model output and task input: only typed errors may escape.

A fixed seed makes the run reproducible; ``STATEGUARD_FUZZ_EXAMPLES`` (default 2,000
per parser, 10,000 in all) sets the examples per parser. Inputs mix arbitrary text,
JSON, deep nesting (far past Python's recursion limit), NUL bytes and long strings.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from stateguard.errors import TaskFormatError
from stateguard.manager.policies.hybrid import _json_object as hybrid_json_object
from stateguard.manager.policies.llm import parse_action
from stateguard.worker.grading import grade
from stateguard.worker.parsing import parse_reply
from stateguard.worker.tasks import load_task

SEED = 20261201
EXAMPLES = int(os.environ.get("STATEGUARD_FUZZ_EXAMPLES", "2000"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
)
_json_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@st.composite
def _deep(draw: st.DrawFn) -> str:
    depth = draw(st.integers(min_value=1, max_value=20_000))
    opener = draw(st.sampled_from(["[", '{"a": ', "[{", '{"kind": ']))
    closer = {"[": "]", '{"a": ': "}", "[{": "}]", '{"kind": ': "}"}[opener]
    inner = draw(st.sampled_from(["1", '"x"', "null", ""]))
    closed = draw(st.booleans())
    return opener * depth + inner + (closer * depth if closed else "")


_texts = st.one_of(
    st.text(max_size=200),
    _json_values.map(json.dumps),
    _deep(),
    st.builds(lambda a, b: f"{a}<answer>{b}</answer>", st.text(max_size=40), _deep()),
    st.builds(lambda a: f"```json\n{a}\n```", st.one_of(_deep(), _json_values.map(json.dumps))),
    st.builds(lambda a: f"```python\n{a}\n```", st.text(max_size=100)),
    st.text(alphabet='\x00{}[]":,\\x0123456789.-', max_size=300),
    st.integers(min_value=1, max_value=40_000).map(lambda n: "9" * n),
)
_golds = st.one_of(_scalars, st.dictionaries(st.text(max_size=8), _scalars, max_size=4))


@seed(SEED)
@FUZZ
@given(_texts, st.booleans())
def test_parse_reply_never_raises(text: str, code_ran: bool) -> None:
    parsed = parse_reply(text, code_ran=code_ran)
    assert parsed.action in ("code", "answer", "invalid")


@seed(SEED)
@FUZZ
@given(st.one_of(st.none(), _texts), _golds, st.one_of(st.none(), st.floats(0, 10)))
def test_grading_never_raises(answer: str | None, gold: Any, tolerance: float | None) -> None:
    result = grade(answer, gold, tolerance)
    assert result.correct in (True, False, None)


@seed(SEED)
@FUZZ
@given(_texts)
def test_manager_action_parser_raises_only_value_errors(text: str) -> None:
    with contextlib.suppress(ValueError):
        parse_action(text)


@seed(SEED)
@FUZZ
@given(_texts)
def test_hybrid_judge_parser_raises_only_value_errors(text: str) -> None:
    with contextlib.suppress(ValueError):
        hybrid_json_object(text)


_task_bodies = st.one_of(
    _texts,
    st.builds(
        lambda name, data, q: json.dumps({"name": name, "data": data, "turns": [{"question": q}]}),
        st.text(max_size=30),
        st.one_of(st.text(max_size=300), st.lists(st.text(max_size=50), max_size=3)),
        st.text(max_size=30),
    ),
)


@pytest.fixture(scope="module")
def task_dir() -> Any:
    with tempfile.TemporaryDirectory() as d:
        yield Path(d)


@seed(SEED)
@FUZZ
@given(body=_task_bodies, suffix=st.sampled_from([".json", ".yaml"]), raw=st.binary(max_size=64))
def test_task_loader_raises_only_task_format_errors(
    task_dir: Path, body: str, suffix: str, raw: bytes
) -> None:
    path = task_dir / f"task{suffix}"
    path.write_bytes(body.encode("utf-8", "surrogatepass") + raw)
    with contextlib.suppress(TaskFormatError):
        load_task(path)
