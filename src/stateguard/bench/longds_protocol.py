"""``--worker-protocol longds``: our agent loop in the shape of LongDS's own runner.

The message sequence, one conversation for the whole task:

- the first turn starts with the system prompt, which carries the data PATH (the
  ``{data_path}`` placeholder, else a ``PATH: ...`` line appended);
- every turn appends one user message ``"{context}\\nQuestion: {question}"``;
- the model replies with ``<reasoning>`` and either ``<python>`` (code to run) or
  ``<answer>``;
- the code runs in the guarded session; its output (and any manager note) comes back as
  a user message ``<information>...</information>``;
- a reply with neither tag gets an ``<information>`` message saying so;
- at most ``max_steps`` (40) model replies per turn; then the turn has no answer.

An ``<answer>`` is proposed to the manager; a rejection's repair notes come back as
``<information>`` and the turn goes on. The system prompt is the package data file
``bench/prompts/longds_system.md`` unless ``--worker-prompt-file`` gives the official
one. Prompts are never written into the repository from anyone else's runner.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from stateguard.bench.events import Emit, Event
from stateguard.bench.observe import guarded_task_session, judge, judge_reason
from stateguard.bench.records import RunConfig, TurnResult
from stateguard.bench.tasks import BenchTask, BenchTurn
from stateguard.errors import StateguardError
from stateguard.guard import GuardedSession
from stateguard.kernel import ExecutionResult
from stateguard.llm import ChatMessage, ChatModel

MAX_STEPS = 40
_OBSERVATION_CHARS = 4000
_TAG = {t: re.compile(rf"<{t}>(.*?)</{t}>", re.DOTALL) for t in ("reasoning", "python", "answer")}
_OPEN_PYTHON = re.compile(r"<python>(.*)$", re.DOTALL)


def default_system_prompt() -> str:
    """The shipped system prompt (with a ``{data_path}`` placeholder)."""
    files = resources.files("stateguard.bench.prompts")
    return files.joinpath("longds_system.md").read_text(encoding="utf-8")


def system_message(template: str, data_path: str) -> str:
    """The system prompt with the data PATH filled in (or appended when no placeholder)."""
    if "{data_path}" in template:
        return template.replace("{data_path}", data_path)
    return f"{template.rstrip()}\n\nPATH: {data_path}\n"


def user_message(turn: BenchTurn) -> str:
    """The protocol's user message for a turn."""
    return f"{turn.context}\nQuestion: {turn.question}"


def parse_reply(text: str) -> tuple[str, str | None, str | None]:
    """``(reasoning, code, answer)`` of a reply; an answer wins over code."""
    found = {t: p.findall(text) for t, p in _TAG.items()}
    reasoning = found["reasoning"][-1].strip() if found["reasoning"] else ""
    if found["answer"]:
        return reasoning, None, found["answer"][-1].strip()
    if found["python"]:
        return reasoning, found["python"][0].strip("\n"), None
    unclosed = _OPEN_PYTHON.search(text)  # a reply cut at a stop sequence
    return reasoning, (unclosed.group(1).strip("\n") if unclosed else None), None


def observation_text(execution: ExecutionResult) -> str:
    """What the model is shown of an executed cell."""
    parts = [execution.stdout.strip()] if execution.stdout.strip() else []
    if execution.result:
        parts.append(execution.result.strip())
    if not execution.ok:
        err = execution.error
        parts.append(f"{err.ename}: {err.evalue}" if err else f"execution {execution.status}")
    text = "\n".join(parts) or "(no output)"
    return text[:_OBSERVATION_CHARS]


def information(text: str) -> str:
    """An observation message body."""
    return f"<information>{text}</information>"


@dataclass
class ProtocolTurn:
    """What one turn of the protocol produced."""

    answer: str | None = None
    replies: int = 0
    code_steps: int = 0
    repair_hints: int = 0
    proposals: list[str] = field(default_factory=list)


class LongdsProtocolAgent:
    """Drives a chat model through the LongDS protocol over a guarded session."""

    def __init__(
        self,
        model: ChatModel,
        guard: GuardedSession,
        *,
        data_path: str,
        system_prompt: str | None = None,
        max_steps: int = MAX_STEPS,
        cell_timeout: float | None = None,
    ) -> None:
        self.model = model
        self.guard = guard
        self.max_steps = max_steps
        self.cell_timeout = cell_timeout
        template = default_system_prompt() if system_prompt is None else system_prompt
        self.messages: list[ChatMessage] = [
            ChatMessage(role="system", content=system_message(template, data_path))
        ]

    def _say(self, role: str, content: str) -> None:
        self.messages.append(ChatMessage(role=role, content=content))  # type: ignore[arg-type]

    def run_turn(self, turn: BenchTurn) -> ProtocolTurn:
        """Append the turn's question and run the loop until an accepted answer."""
        log = ProtocolTurn()
        self.guard.begin_turn(turn.question, turn=turn.turn_id)
        self._say("user", user_message(turn))
        while log.replies < self.max_steps:
            reply = self.model.complete(list(self.messages)).content or ""
            log.replies += 1
            self._say("assistant", reply)
            reasoning, code, answer = parse_reply(reply)
            if answer is not None:
                log.proposals.append(answer)
                review = self.guard.propose_answer(answer, thought=reasoning)
                if review.accepted:
                    log.answer = answer
                    break
                log.repair_hints += sum(n.kind == "repair" for n in review.notes)
                notes = "\n".join(n.text for n in review.notes) or "The answer was not accepted."
                self._say("user", information(notes))
                continue
            if code is None:
                self.guard.take_step()
                self._say(
                    "user",
                    information("Reply with <reasoning> and one <python> block or an <answer>."),
                )
                continue
            outcome = self.guard.run_cell(code, thought=reasoning, timeout=self.cell_timeout)
            log.code_steps += 1
            log.repair_hints += sum(n.kind == "repair" for n in outcome.notes)
            text = observation_text(outcome.execution)
            if outcome.notes:
                text += "\n\n" + "\n".join(n.text for n in outcome.notes)
            self._say("user", information(text))
        self.guard.end_turn(log.answer)
        return log


def _safe(task_id: str) -> str:
    return task_id.replace("/", "__")


def run_longds_protocol_task(
    task: BenchTask,
    config: RunConfig,
    run_dir: Path,
    skip: set[int],
    emit: Emit,
    model: ChatModel | None,
) -> None:
    """Run ``task`` under the LongDS protocol and emit one `TurnResult` per turn."""
    if model is None:
        raise StateguardError("--worker llm needs a chat model (--model-config / --base-url)")
    if task.suite != "longds":
        raise StateguardError(f"--worker-protocol longds runs LongDS tasks, not {task.suite}")
    prompt = None
    if config.worker_prompt_file:
        try:
            prompt = Path(config.worker_prompt_file).read_text(encoding="utf-8")
        except OSError as exc:
            raise StateguardError(f"{config.worker_prompt_file}: cannot read: {exc}") from exc
    work = run_dir / "work" / _safe(task.task_id)
    manager_dir = run_dir / "manager" / _safe(task.task_id)
    shutil.rmtree(manager_dir, ignore_errors=True)
    traj_dir = run_dir / "trajectories"
    traj_dir.mkdir(parents=True, exist_ok=True)
    guard = guarded_task_session(
        task,
        work,
        manager=config.manager,
        model=model,
        manager_dir=manager_dir,
        cell_timeout=config.cell_timeout,
    )
    try:
        guard.start()
        agent = LongdsProtocolAgent(
            model,
            guard,
            data_path="data/" if task.data_dir is not None else "(no data)",
            system_prompt=prompt,
            cell_timeout=config.cell_timeout,
        )
        for turn in task.turns:
            started = time.monotonic()
            calls_before = guard.llm_calls
            log = agent.run_turn(turn)
            verdict = judge(task, turn, None, None, log.answer or "")
            first = judge(task, turn, None, None, log.proposals[0]) if log.proposals else None
            result = TurnResult(
                task_id=task.task_id,
                turn_id=turn.turn_id,
                n_turns=len(task.turns),
                domain=task.domain,
                suite=task.suite,
                correct=None if verdict.excluded else verdict.correct,
                depends_on=turn.depends_on,
                flagged=log.repair_hints > 0,
                repaired=log.repair_hints > 0 and len(log.proposals) > 1,
                llm_calls=guard.llm_calls - calls_before,
                answer=log.answer,
                score=None if verdict.excluded else verdict.score,
                judge_reason=judge_reason(verdict),
                first_correct=None if first is None or first.excluded else first.correct,
                accepted=log.answer is not None,
                attempts=len(log.proposals),
                repair_hints=log.repair_hints,
                worker_llm_calls=log.replies,
                wall_time=time.monotonic() - started,
            )
            if turn.turn_id not in skip:
                emit(Event(kind="turn", task_id=task.task_id, payload=result.model_dump()))
        with open(traj_dir / f"{_safe(task.task_id)}.jsonl", "w", encoding="utf-8") as fh:
            for message in agent.messages:
                fh.write(json.dumps(message.model_dump(), ensure_ascii=False) + "\n")
    finally:
        guard.close()
        shutil.rmtree(work, ignore_errors=True)
