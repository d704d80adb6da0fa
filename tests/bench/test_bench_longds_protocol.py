"""``--worker-protocol longds``: the exact message sequence a scripted model sees."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from stateguard.bench.events import Event
from stateguard.bench.loaders import scan_longds
from stateguard.bench.longds_protocol import (
    MAX_STEPS,
    LongdsProtocolAgent,
    parse_reply,
    run_longds_protocol_task,
    system_message,
)
from stateguard.bench.records import RunConfig, TurnResult
from stateguard.errors import StateguardError
from stateguard.llm import ScriptedModel

TASK_DIR = (
    Path(__file__).parent
    / "fixtures"
    / "longds_release"
    / "dataset"
    / "task"
    / "longds"
    / "health"
    / "clinic_visits"
    / "task2"
)


@pytest.mark.parametrize(
    ("reply", "parsed"),
    [
        ("<reasoning>r</reasoning>\n<python>\nx = 1\n</python>", ("r", "x = 1", None)),
        ("<reasoning>r</reasoning><answer> 4 </answer>", ("r", None, "4")),
        ("<python>x</python><answer>5</answer>", ("", None, "5")),
        ("<reasoning>r</reasoning><python>\nx = 2", ("r", "x = 2", None)),
        ("no tags at all", ("", None, None)),
    ],
)
def test_parse_reply(reply: str, parsed: tuple) -> None:
    assert parse_reply(reply) == parsed


def test_system_message_carries_the_data_path() -> None:
    assert system_message("Data at {data_path}.", "data/") == "Data at data/."
    assert system_message("Official prompt.", "data/").endswith("PATH: data/\n")


def _agent(codes: dict[str, str]):
    """Per question: run its reference code, then answer with what came back.

    Questions are told apart by the task's own question texts; after its one untagged
    reply (turn 3) the agent sends the code next, whatever it was told.
    """
    seen: list[list[tuple[str, str]]] = []
    untagged: list[str] = []

    def reply(messages) -> str:
        seen.append([(m.role, m.content) for m in messages])
        last = messages[-1]
        question = next((q for q in codes if q in last.content), None)
        if question is not None:
            if question.startswith("Is the mean age"):
                untagged.append(question)
                return "I am not using tags this time."
            return f"<reasoning>compute</reasoning>\n<python>\n{codes[question]}\n</python>"
        if untagged:
            code = codes[untagged.pop()]
            return f"<reasoning>retry</reasoning>\n<python>\n{code}\n</python>"
        body = re.search(r"<information>(.*)</information>", last.content, re.DOTALL).group(1)
        return f"<reasoning>done</reasoning>\n<answer>{body.strip()}</answer>"

    return ScriptedModel(reply), seen


@pytest.mark.kernel
def test_scripted_model_sees_the_protocol_sequence(tmp_path: Path) -> None:
    (task,) = scan_longds(TASK_DIR).tasks
    model, seen = _agent({t.question: t.reference_code for t in task.turns})
    config = RunConfig(suite="longds", path=str(TASK_DIR), worker="llm", worker_protocol="longds")
    events: list[Event] = []
    run_longds_protocol_task(task, config, tmp_path, set(), events.append, model)
    results = [TurnResult.model_validate(e.payload) for e in events if e.kind == "turn"]
    assert [r.correct for r in results] == [True] * 6, [r.judge_reason for r in results]

    first = seen[0]
    assert [role for role, _ in first] == ["system", "user"]
    assert "data/" in first[0][1] and "<python>" in first[0][1]
    assert (
        first[1][1]
        == "data/visits.csv has one row per patient.\nQuestion: How many patients are there?"
    )
    second = seen[1]
    assert [role for role, _ in second] == ["system", "user", "assistant", "user"]
    assert second[2][1].startswith("<reasoning>") and "<python>" in second[2][1]
    assert second[3][1].startswith("<information>") and second[3][1].endswith("</information>")
    turn2 = seen[2]  # one conversation: turn 2 only appends its user message
    assert turn2[:4] == second
    assert [role for role, _ in turn2] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert turn2[4][1].startswith("<reasoning>done</reasoning>\n<answer>")
    assert turn2[5][1] == "\nQuestion: What is the mean age?"
    assert sum(1 for role, _ in seen[-1] if role == "system") == 1
    reminder = [c for r, c in seen[-1] if r == "user" and c.startswith("<information>Reply with")]
    assert len(reminder) == 1  # the untagged reply of turn 3 got a format reminder
    assert results[2].worker_llm_calls == 3
    lines = (tmp_path / "trajectories" / "health__clinic_visits__task2.jsonl").read_text()
    roles = [json.loads(x)["role"] for x in lines.splitlines()]
    assert roles[0] == "system" and roles.count("system") == 1


@pytest.mark.kernel
def test_at_most_max_steps_replies_per_turn(tmp_path: Path) -> None:
    from stateguard.bench.observe import guarded_task_session

    (task,) = scan_longds(TASK_DIR).tasks
    model = ScriptedModel(lambda messages: "<reasoning>loop</reasoning><python>1 + 1</python>")
    guard = guarded_task_session(
        task, tmp_path / "w", manager="none", model=None, manager_dir=tmp_path / "m"
    )
    with guard:
        agent = LongdsProtocolAgent(model, guard, data_path="data/")
        log = agent.run_turn(task.turns[0])
    assert log.answer is None and log.replies == MAX_STEPS == 40
    assert len(model.requests) == 40


def test_protocol_needs_longds_and_a_model(tmp_path: Path) -> None:
    (task,) = scan_longds(TASK_DIR).tasks
    config = RunConfig(suite="longds", path=str(TASK_DIR), worker="llm", worker_protocol="longds")
    with pytest.raises(StateguardError, match="needs a chat model"):
        run_longds_protocol_task(task, config, tmp_path, set(), lambda e: None, None)
