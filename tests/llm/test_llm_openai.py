"""OpenAIChatModel against a real local HTTP server through the openai SDK."""

from __future__ import annotations

import pytest
from fake_openai_server import FakeReply

from stateguard.errors import ModelError
from stateguard.llm import ChatMessage, OpenAIChatModel, UsageMeter

MSGS = [ChatMessage.system("sys"), ChatMessage.user("what is 2+2?")]


def make(server, **kwargs) -> OpenAIChatModel:
    kwargs.setdefault("backoff_base", 0.001)
    kwargs.setdefault("timeout", 5.0)
    return OpenAIChatModel("fake-model", base_url=server.base_url, api_key="sk-test", **kwargs)


def test_round_trip_content_usage_and_request(fake_openai) -> None:
    server = fake_openai(["4"])
    meter = UsageMeter()
    model = make(server, meter=meter)
    resp = model.complete(MSGS, temperature=0.25, max_tokens=32, stop=["\n\n"])
    assert resp.content == "4"
    assert resp.finish_reason == "stop" and resp.model == "fake-model"
    assert (resp.usage.prompt_tokens, resp.usage.completion_tokens) == (11, 7)
    assert not resp.usage.estimated and resp.wall_time > 0
    assert meter.calls == 1 and meter.total_tokens == 18
    (body,) = server.bodies
    assert body["model"] == "fake-model"
    assert body["messages"] == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "what is 2+2?"},
    ]
    assert body["temperature"] == 0.25 and body["max_tokens"] == 32
    assert body["stop"] == ["\n\n"] and "response_format" not in body
    assert server.requests[0].headers.get("authorization") == "Bearer sk-test"


def test_retries_500_then_succeeds(fake_openai) -> None:
    server = fake_openai([FakeReply(status=500), FakeReply(status=503), "ok"])
    meter = UsageMeter()
    resp = make(server, meter=meter).complete(MSGS)
    assert resp.content == "ok"
    assert len(server.bodies) == 3
    assert meter.calls == 1  # only the successful call is metered


def test_retries_429_honouring_retry_after(fake_openai) -> None:
    slept: list[float] = []
    server = fake_openai([FakeReply(status=429, headers={"Retry-After": "0.01"}), "ok"])
    assert make(server, sleep=slept.append).complete(MSGS).content == "ok"
    assert slept == [0.01]


def test_backoff_grows_exponentially_with_jitter(fake_openai) -> None:
    slept: list[float] = []
    server = fake_openai([FakeReply(status=500)] * 3 + ["ok"])
    make(server, backoff_base=1.0, backoff_max=100, sleep=slept.append).complete(MSGS)
    assert len(slept) == 3
    for i, delay in enumerate(slept):
        assert 0.5 * 2**i <= delay <= 2**i


def test_gives_up_after_max_retries(fake_openai) -> None:
    server = fake_openai([FakeReply(status=500, error_message="overloaded")] * 5)
    with pytest.raises(ModelError) as info:
        make(server, max_retries=2).complete(MSGS)
    msg = str(info.value)
    assert "3 attempt(s)" in msg and "500" in msg and "overloaded" in msg
    assert server.base_url in msg and "fake-model" in msg
    assert len(server.bodies) == 3


def test_401_is_not_retried(fake_openai) -> None:
    server = fake_openai([FakeReply(status=401, error_message="bad key"), "never"])
    with pytest.raises(ModelError, match=r"1 attempt\(s\).*401.*bad key"):
        make(server).complete(MSGS)
    assert len(server.bodies) == 1


def test_connection_refused_is_retried_then_reported(fake_openai) -> None:
    server = fake_openai([])
    url = server.base_url
    server.stop()
    model = OpenAIChatModel("m", base_url=url, max_retries=1, backoff_base=0.001, timeout=2)
    with pytest.raises(ModelError, match=r"2 attempt\(s\).*APIConnectionError"):
        model.complete(MSGS)


def test_timeout_is_retried(fake_openai) -> None:
    server = fake_openai([FakeReply(content="late", delay=1.0), "on time"])
    assert make(server, timeout=0.3).complete(MSGS).content == "on time"


def test_json_schema_sent_as_response_format(fake_openai) -> None:
    schema = {"title": "Plan", "type": "object", "properties": {"action": {"enum": ["a", "b"]}}}
    server = fake_openai(['{"action": "a"}'])
    assert make(server).complete(MSGS, json_schema=schema).content == '{"action": "a"}'
    fmt = server.bodies[0]["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "Plan" and fmt["json_schema"]["schema"] == schema


def test_json_schema_falls_back_to_json_object_and_remembers(fake_openai) -> None:
    def reply(body: dict) -> str | FakeReply:
        if body.get("response_format", {}).get("type") == "json_schema":
            return FakeReply(status=400, error_message="response_format json_schema unsupported")
        return '{"ok": true}'

    server = fake_openai(reply)
    model = make(server)
    schema = {"type": "object"}
    assert model.complete(MSGS, json_schema=schema).content == '{"ok": true}'
    assert model.complete(MSGS, json_schema=schema).content == '{"ok": true}'
    types = [b["response_format"]["type"] for b in server.bodies]
    assert types == ["json_schema", "json_object", "json_object"]


def test_missing_usage_is_zero_and_flagged(fake_openai) -> None:
    server = fake_openai([FakeReply(content="hi", usage=None)])
    meter = UsageMeter()
    resp = make(server, meter=meter).complete(MSGS)
    assert resp.usage.total_tokens == 0 and resp.usage.estimated
    assert meter.snapshot().estimated_calls == 1


def test_empty_choices_is_model_error(fake_openai) -> None:
    body = {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []}
    server = fake_openai([FakeReply(body=body)])
    with pytest.raises(ModelError, match="no choices"):
        make(server).complete(MSGS)
