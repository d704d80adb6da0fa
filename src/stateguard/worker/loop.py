"""The ReAct data-analysis worker: one model and one `GuardedSession`.

`Worker.run_turn` is a generator of `TrajectoryEvent`s. Per turn:

1. `TurnStarted`; the system prompt (`ModelMessage`, first turn only); the
   supervisor's ``begin_turn`` hints (`HintDelivered`), injected verbatim as user
   content after the question (`ModelMessage` role user).
2. Each step: one model call (`ModelMessage` role assistant), parsed into a
   `StepRecord`. A code step is executed in the kernel; its observation (head and
   tail kept) is sent back, then ``after_step`` hints. A malformed reply gets a
   corrective message and runs nothing. An answer goes to ``review_answer``: accepted
   ends the turn, rejected injects the repair hints and the loop goes on.
3. ``end_turn``; supervisor events are drained into `ManagerLogged` after every
   supervisor call; finally `AnswerRecorded` (answer None if the step budget ran out).

Every model call counts as a step, malformed ones included. Step indices are
global across the task (the guarded session keeps the counter); one worker (and
one kernel) serves all turns of a task.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Iterator

from stateguard.guard import GuardedSession
from stateguard.llm import ChatModel
from stateguard.manager import Hint
from stateguard.worker.error_context import error_context
from stateguard.worker.events import (
    AnswerRecorded,
    HintDelivered,
    ManagerLogged,
    ModelMessage,
    StepRecord,
    TrajectoryEvent,
    TurnStarted,
)
from stateguard.worker.formatting import format_hint, format_observation
from stateguard.worker.history import Conversation, Exchange
from stateguard.worker.parsing import ParsedReply, parse_reply
from stateguard.worker.prompts import corrective_messages, render, system_template

NO_DATA_TEXT = "There are no input files for this session."


def system_prompt(data_files: str, max_steps: int) -> str:
    """The worker's system prompt with the data listing and step budget filled in."""
    return render(system_template(), data_files=data_files or NO_DATA_TEXT, max_steps=max_steps)


def _opener(turn: int, question: str, context: str) -> str:
    parts = []
    if context.strip():
        parts.append(f"Context:\n{context.strip()}")
    parts.append(f"Question (turn {turn}):\n{question.strip()}")
    return "\n\n".join(parts)


class Worker:
    """Answers the turns of one task with a chat model and a guarded kernel session."""

    def __init__(
        self,
        model: ChatModel,
        guard: GuardedSession,
        *,
        max_steps_per_turn: int = 40,
        observation_chars: int = 4000,
        cell_timeout: float = 120,
        context_chars: int = 16_000,
        max_tokens: int | None = 1024,
        temperature: float = 0.0,
        retry_temperature: float = 0.7,
        error_context: bool = True,
        data_files: str = "",
        system: str | None = None,
    ) -> None:
        """``context_chars`` bounds the prompt sent per call (see `Conversation`).

        ``data_files`` describes the input files for the system prompt; ``system``
        replaces the whole system prompt. After a resent failing cell the next call
        samples at ``retry_temperature`` (greedy decoding would resend it again).
        """
        if max_steps_per_turn < 1:
            raise ValueError(f"max_steps_per_turn must be >= 1, got {max_steps_per_turn}")
        self.model = model
        self.guard = guard
        self.max_steps_per_turn = max_steps_per_turn
        self.observation_chars = observation_chars
        self.cell_timeout = cell_timeout
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.retry_temperature = retry_temperature
        self.error_context = error_context
        prompt = system if system is not None else system_prompt(data_files, max_steps_per_turn)
        self.conversation = Conversation(prompt, budget_chars=context_chars)
        self._system_sent = False
        self._corrective = corrective_messages()

    @property
    def steps_taken(self) -> int:
        """Global step counter: the index the next step gets."""
        return self.guard.step

    # ------------------------------------------------------------------ helpers
    def _note(self, key: str) -> str:
        return render(self._corrective[key], max_steps=self.max_steps_per_turn)

    def _user(self, turn: int, step: int, text: str) -> ModelMessage:
        """Add user content to the conversation and describe it as an event."""
        self.conversation.add_user(text)
        return ModelMessage(turn=turn, step=step, role="user", content=text)

    def _drain(self, turn: int) -> Iterator[ManagerLogged]:
        for event in self.guard.drain_events():
            yield ManagerLogged(turn=turn, event=event)

    def _deliver(self, turn: int, step: int | None, hints: list[Hint]) -> Iterator[TrajectoryEvent]:
        for hint in hints:
            yield HintDelivered(turn=turn, step=step, hint=hint)
            yield self._user(turn, self.steps_taken if step is None else step, format_hint(hint))

    def _code_step(
        self, turn: int, step: int, parsed: ParsedReply, exchange: Exchange
    ) -> Iterator[TrajectoryEvent]:
        """Execute the cell, show the observation, then the supervisor's hints."""
        assert parsed.code is not None
        outcome = self.guard.run_cell(
            parsed.code, thought=parsed.thought, timeout=self.cell_timeout
        )
        execution = outcome.execution
        exchange.outcome = execution.status
        if execution.error is not None:
            exchange.outcome += f": {execution.error.ename}"
        observation = format_observation(execution, self.observation_chars)
        if execution.status == "error" and self.error_context:
            context = error_context(self.guard.executor, parsed.code, execution)
            if context:
                observation = f"{observation}\n\n{context}"
        yield StepRecord(
            turn=turn,
            step=step,
            thought=parsed.thought,
            code=parsed.code,
            observation=observation,
            execution=execution,
            cell=outcome.cell,
        )
        feedback = [observation]
        if outcome.restarted:
            feedback.append(self._note("kernel_restarted"))
        if parsed.answer is not None:
            feedback.append(self._note("answer_deferred"))
        yield self._user(turn, step, "\n\n".join(feedback))
        yield from self._drain(turn)
        yield from self._deliver(turn, step, list(outcome.notes))

    def _answer_step(
        self, turn: int, step: int, parsed: ParsedReply, exchange: Exchange
    ) -> Generator[TrajectoryEvent, None, bool]:
        """Submit the answer for review; returns whether it was accepted."""
        assert parsed.answer is not None
        exchange.outcome = "answer"
        yield StepRecord(turn=turn, step=step, thought=parsed.thought, answer=parsed.answer)
        review = self.guard.propose_answer(parsed.answer, thought=parsed.thought)
        yield from self._drain(turn)
        if review.accepted:
            return True
        exchange.outcome = "answer rejected"
        yield from self._deliver(turn, step, list(review.notes))
        yield self._user(turn, step, self._note("answer_rejected"))
        return False

    # ------------------------------------------------------------------ the loop
    def run_turn(
        self, turn_index: int, question: str, context: str = ""
    ) -> Iterator[TrajectoryEvent]:
        """Answer one question; yields every event as it happens (see module docstring)."""
        started = time.monotonic()
        calls_before = self.guard.llm_calls
        yield TurnStarted(turn=turn_index, question=question, context=context)
        if not self._system_sent:
            self._system_sent = True
            yield ModelMessage(
                turn=turn_index,
                step=self.steps_taken,
                role="system",
                content=self.conversation.system,
            )
        self.conversation.start_turn(turn_index, question, _opener(turn_index, question, context))
        yield ModelMessage(
            turn=turn_index,
            step=self.steps_taken,
            role="user",
            content=self.conversation.current.opener,
        )
        hints = self.guard.begin_turn(question, turn=turn_index)
        yield from self._drain(turn_index)
        yield from self._deliver(turn_index, None, hints)

        answer: str | None = None
        code_ran = False
        steps = 0
        # code that already failed in this turn -> its error; greedy decoding tends to
        # resend the same failing cell, which would only burn the step budget
        failed: dict[str, str] = {}
        temperature = self.temperature
        while steps < self.max_steps_per_turn:
            if steps > 0 and steps == self.max_steps_per_turn - 1:
                yield self._user(turn_index, self.steps_taken, self._note("last_step"))
            response = self.model.complete(
                self.conversation.messages(),
                max_tokens=self.max_tokens,
                temperature=temperature,
            )
            temperature = self.temperature
            step = self.steps_taken
            steps += 1
            reply = response.content
            yield ModelMessage(
                turn=turn_index,
                step=step,
                role="assistant",
                content=reply,
                prompt_tokens=response.usage.prompt_tokens,
                completion_tokens=response.usage.completion_tokens,
            )
            parsed = parse_reply(reply, code_ran=code_ran)
            exchange = self.conversation.add_reply(step, reply, parsed.code)

            if parsed.problem is not None:
                self.guard.take_step()
                exchange.outcome = f"invalid: {parsed.problem}"
                note = self._note(parsed.problem)
                yield StepRecord(
                    turn=turn_index,
                    step=step,
                    thought=parsed.thought,
                    answer=parsed.answer,
                    observation=note,
                    problem=parsed.problem,
                )
                yield self._user(turn_index, step, note)
            elif parsed.code is not None and parsed.code.strip() in failed:
                self.guard.take_step()
                exchange.outcome = "invalid: repeated_failure"
                note = render(
                    self._corrective["repeated_failure"], error=failed[parsed.code.strip()]
                )
                yield StepRecord(
                    turn=turn_index,
                    step=step,
                    thought=parsed.thought,
                    code=parsed.code,
                    observation=note,
                    problem="repeated_failure",
                )
                yield self._user(turn_index, step, note)
                temperature = max(self.temperature, self.retry_temperature)
            elif parsed.code is not None:
                code_ran = True
                for event in self._code_step(turn_index, step, parsed, exchange):
                    if (
                        isinstance(event, StepRecord)
                        and event.execution is not None
                        and (event.execution.error is not None)
                    ):
                        err = event.execution.error
                        failed[parsed.code.strip()] = f"{err.ename}: {err.evalue}"[:300]
                    yield event
            elif (yield from self._answer_step(turn_index, step, parsed, exchange)):
                answer = parsed.answer
                break

        self.conversation.finish_turn(answer)
        self.guard.end_turn(answer)
        yield from self._drain(turn_index)
        yield AnswerRecorded(
            turn=turn_index,
            answer=answer,
            steps=steps,
            wall_time=time.monotonic() - started,
            manager_llm_calls=self.guard.llm_calls - calls_before,
        )
