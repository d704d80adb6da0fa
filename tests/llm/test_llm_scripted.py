"""ScriptedModel, messages and UsageMeter."""

from __future__ import annotations

import threading

import pytest

from stateguard.errors import ModelError
from stateguard.llm import (
    ChatMessage,
    ChatModel,
    ChatResponse,
    ScriptedModel,
    Usage,
    UsageMeter,
)

HELLO = [ChatMessage.system("be brief"), ChatMessage.user("hello")]


def test_replays_replies_in_order_and_satisfies_protocol() -> None:
    model = ScriptedModel(["one", "two", ChatResponse(content="three", model="x")])
    assert isinstance(model, ChatModel)
    assert [model.complete(HELLO).content for _ in range(3)] == ["one", "two", "three"]
    assert model.remaining == 0


def test_records_every_request_with_kwargs() -> None:
    model = ScriptedModel(["a", "b"])
    schema = {"type": "object"}
    model.complete(HELLO, max_tokens=5, temperature=0.3, stop=["\n"], json_schema=schema)
    model.complete([ChatMessage.user("again")])
    first, second = model.requests
    assert first.messages == tuple(HELLO)
    assert (first.max_tokens, first.temperature, first.stop) == (5, 0.3, ("\n",))
    assert first.json_schema == schema
    assert second.messages[0].content == "again" and second.json_schema is None


def test_exhaustion_raises_model_error_naming_call_count() -> None:
    model = ScriptedModel(["only"])
    model.complete(HELLO)
    with pytest.raises(ModelError, match="ran out of replies after 1 calls"):
        model.complete(HELLO)
    assert len(model.requests) == 2  # the failing call is recorded too


def test_function_mode_sees_messages() -> None:
    model = ScriptedModel(fn=lambda msgs: f"{len(msgs)}:{msgs[-1].content.upper()}")
    assert model.complete(HELLO).content == "2:HELLO"
    assert ScriptedModel(lambda msgs: "positional fn").complete(HELLO).content == "positional fn"
    assert model.remaining is None


def test_needs_exactly_one_source() -> None:
    with pytest.raises(ModelError):
        ScriptedModel()
    with pytest.raises(ModelError):
        ScriptedModel(["x"], fn=lambda m: "y")


def test_scripted_exception_is_raised() -> None:
    model = ScriptedModel([ModelError("backend down"), "ok"])
    with pytest.raises(ModelError, match="backend down"):
        model.complete(HELLO)
    assert model.complete(HELLO).content == "ok"


def test_stop_sequences_cut_string_replies() -> None:
    model = ScriptedModel(["abc END def", "no stop here"])
    assert model.complete(HELLO, stop=["END", "c"]).content == "ab"
    assert model.complete(HELLO, stop=["zzz"]).content == "no stop here"


def test_meter_records_estimated_usage() -> None:
    meter = UsageMeter()
    model = ScriptedModel(
        [
            "x" * 40,
            ChatResponse(
                content="y",
                usage=Usage(prompt_tokens=3, completion_tokens=2),
                model="m",
                wall_time=0.5,
            ),
        ],
        meter=meter,
    )
    r1 = model.complete(HELLO)
    model.complete(HELLO)
    snap = meter.snapshot()
    assert snap.calls == 2 and snap.estimated_calls == 1
    assert r1.usage.completion_tokens == 10 and r1.usage.estimated
    assert snap.usage.completion_tokens == 12
    assert snap.usage.prompt_tokens == r1.usage.prompt_tokens + 3
    assert snap.wall_time >= 0.5
    assert meter.reset().calls == 2 and meter.calls == 0


def test_usage_total_and_round_trip() -> None:
    u = Usage(prompt_tokens=4, completion_tokens=6) + Usage(prompt_tokens=1, estimated=True)
    assert (u.total_tokens, u.estimated) == (11, True)
    assert Usage.model_validate_json(u.model_dump_json()) == u
    with pytest.raises(ValueError, match="total_tokens"):
        Usage.model_validate({"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 5})


def test_meter_is_thread_safe() -> None:
    meter = UsageMeter()
    one = Usage(prompt_tokens=1, completion_tokens=2)

    def work() -> None:
        for _ in range(500):
            meter.record(one)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert meter.calls == 4000
    assert (meter.prompt_tokens, meter.completion_tokens, meter.total_tokens) == (4000, 8000, 12000)


def test_messages_are_frozen_and_validated() -> None:
    msg = ChatMessage.user("hi")
    with pytest.raises(ValueError):
        msg.content = "changed"  # type: ignore[misc]
    with pytest.raises(ValueError):
        ChatMessage(role="tool", content="x")  # type: ignore[arg-type]
