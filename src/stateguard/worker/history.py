"""The worker's conversation across the turns of a task, kept within a character budget.

Every turn is stored in full. `Conversation.messages` renders what is sent to the
model so that the total length stays within ``budget_chars`` (the local model has
an 8k-token context):

* the system prompt is always sent;
* the current turn is sent in full when it fits; otherwise its oldest steps
  collapse into one line each (code's first line and outcome), appended to the
  turn's opening message, and the most recent steps stay verbatim (at least the
  last one, whatever its size);
* earlier turns are sent newest first in full while they fit, then as a short
  summary (context, question, cells' first lines, answer), then omitted with a note
  that still holds what they stated. A turn's context (the user's statement of the
  data, a model's parameters, a revision) is never dropped: room for the contexts of
  every earlier turn is set aside first, so a fee stated at turn 2 is still in the
  prompt at turn 9, wherever its turn's cells went. An
  earlier turn is sent in full only with its accepted answer and without its failed
  or refused steps; a turn that ended without an answer is always a summary listing
  only the cells that ran: a small model imitates the replies it sees, and copying a
  failed cell into the next question is what it does with them.

While a turn is in progress, the earlier turns are rendered once, at its first call,
within half of what the system prompt leaves, and sent the same way at every step of
the turn: the prompt's prefix stays identical, so a local backend reuses its cache
and evaluates only the new step. The current turn gets the rest of the budget.

Rendered messages alternate user/assistant after the system message:
consecutive messages of one role are merged with a blank line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from stateguard.llm import ChatMessage
from stateguard.worker.formatting import first_code_line

_MAX_SUMMARY_CELLS = 12
_SUMMARY_QUESTION_CHARS = 300
_CONTEXT_CHARS = 1500
"""The longest context kept from an earlier turn (a context is a few sentences)."""
_NOTE_LINE = 16
"""Room set aside per context for its line in the omission note (``- turn 12: ``)."""
_WHY = {
    "answer": "no answer",
    "steps": "the step budget ran out",
    "tokens": "the token budget ran out",
    "time": "the time budget ran out",
    "no_progress": "no progress was made",
    "interrupt": "interrupted",
}


@dataclass
class Exchange:
    """One model reply and the user content that followed it."""

    step: int
    reply: str
    code: str | None = None
    outcome: str = ""
    """Short outcome for summaries: ``ok``, ``error: KeyError``, ``invalid: no_action``…"""
    feedback: list[str] = field(default_factory=list)


@dataclass
class TurnLog:
    """One turn as it happened (never shortened; rendering decides what is sent)."""

    index: int
    question: str
    opener: str
    context: str = ""
    """What the user stated with the question (data, a model's parameters, a revision)."""
    exchanges: list[Exchange] = field(default_factory=list)
    opener_extra: list[str] = field(default_factory=list)
    """User content added before the first reply (e.g. notes), sent after the opener."""
    answer: str | None = None
    finished: bool = False
    ended: str = "answer"
    """Why the turn ended (`stateguard.worker.events.TurnEnd`)."""

    def cells(self) -> list[str]:
        """Code of the steps that ran a cell, in order."""
        return [e.code for e in self.exchanges if e.code is not None]


def _kept(e: Exchange) -> bool:
    """Whether a finished turn's exchange is shown again: a cell that ran, or the answer
    (the accepted answer, the turn's last exchange, is always shown)."""
    return e.outcome == "ok" or e.outcome == "answer"


def _stated(context: str) -> str:
    context = " ".join(context.split())
    if len(context) > _CONTEXT_CHARS:
        context = context[: _CONTEXT_CHARS - 1] + "…"
    return context


def _size(messages: list[ChatMessage]) -> int:
    return sum(len(m.content) for m in messages)


def merge_roles(messages: list[ChatMessage]) -> list[ChatMessage]:
    """Merge consecutive messages of one role (chat templates expect alternation)."""
    out: list[ChatMessage] = []
    for m in messages:
        if not m.content:
            continue
        if out and out[-1].role == m.role:
            out[-1] = ChatMessage(role=m.role, content=f"{out[-1].content}\n\n{m.content}")
        else:
            out.append(m)
    return out


class Conversation:
    """The worker's message history; see the module docstring for the budget rules."""

    def __init__(self, system: str, *, budget_chars: int = 16_000) -> None:
        """``budget_chars`` bounds the summed length of the rendered messages."""
        self.system = system
        self.budget_chars = budget_chars
        self.turns: list[TurnLog] = []
        self._frozen: tuple[int, list[ChatMessage]] | None = None
        """(turn index, rendered earlier turns) for the turn in progress."""

    @property
    def current(self) -> TurnLog:
        """The turn in progress (or the last one)."""
        if not self.turns:
            raise IndexError("no turn has started")
        return self.turns[-1]

    # ---------------------------------------------------------------- recording
    def start_turn(self, index: int, question: str, opener: str, context: str = "") -> None:
        """Begin a turn whose first user message is ``opener``; ``context`` is what the
        user stated with the question (kept in the prompt for every later turn)."""
        self.turns.append(
            TurnLog(index=index, question=question, opener=opener, context=_stated(context))
        )

    def add_reply(self, step: int, reply: str, code: str | None = None) -> Exchange:
        """Record an assistant reply of the current turn."""
        exchange = Exchange(step=step, reply=reply, code=code)
        self.current.exchanges.append(exchange)
        return exchange

    def add_user(self, text: str) -> None:
        """Append user content after the latest message of the current turn."""
        turn = self.current
        if turn.exchanges:
            turn.exchanges[-1].feedback.append(text)
        else:
            turn.opener_extra.append(text)

    def last_user_text(self) -> str:
        """The user content the current turn's next reply answers: the feedback on its
        latest reply, else its opener with what was added to it."""
        turn = self.current
        if turn.exchanges:
            return "\n\n".join(turn.exchanges[-1].feedback)
        return "\n\n".join([turn.opener, *turn.opener_extra])

    def finish_turn(self, answer: str | None, ended: str = "steps") -> None:
        """Close the current turn with its accepted answer (None: see ``ended``)."""
        self.current.answer = answer
        self.current.ended = "answer" if answer is not None else ended
        self.current.finished = True

    # ---------------------------------------------------------------- rendering
    @staticmethod
    def _exchange_messages(e: Exchange) -> list[ChatMessage]:
        out = [ChatMessage.assistant(e.reply)]
        if e.feedback:
            out.append(ChatMessage.user("\n\n".join(e.feedback)))
        return out

    def _full(self, turn: TurnLog) -> list[ChatMessage]:
        out = [ChatMessage.user(turn.opener)]
        out += [ChatMessage.user(x) for x in turn.opener_extra]
        for i, e in enumerate(turn.exchanges):
            last = i == len(turn.exchanges) - 1 and turn.answer is not None
            if turn.finished and not (last or _kept(e)):
                continue
            out += self._exchange_messages(e)
        return out

    def _summary(self, turn: TurnLog) -> list[ChatMessage]:
        question = turn.question
        if len(question) > _SUMMARY_QUESTION_CHARS:
            question = question[: _SUMMARY_QUESTION_CHARS - 1] + "…"
        cells = [e.code for e in turn.exchanges if e.code is not None and e.outcome == "ok"]
        lines = [f"- {first_code_line(c)}" for c in cells[:_MAX_SUMMARY_CELLS]]
        if len(cells) > _MAX_SUMMARY_CELLS:
            lines.append(f"- … and {len(cells) - _MAX_SUMMARY_CELLS} more cells")
        ran = "cells run (first lines):\n" + "\n".join(lines) if lines else "no cell ran"
        answer = turn.answer if turn.answer is not None else f"none ({_WHY[turn.ended]})"
        stated = f"\ncontext: {turn.context}" if turn.context else ""
        # One user-role note, never an assistant message: a small model imitates its own
        # past replies, and a summary in that role teaches it to reply with summaries.
        return [
            ChatMessage.user(
                f"[Earlier question, turn {turn.index}] {question}{stated}\n{ran}\n"
                f"answer given: {answer}"
            )
        ]

    def _current(self, turn: TurnLog, cap: int) -> list[ChatMessage]:
        full = self._full(turn)
        if _size(full) <= cap or len(turn.exchanges) <= 1:
            return full
        head = [ChatMessage.user(turn.opener)] + [ChatMessage.user(x) for x in turn.opener_extra]
        # Keep the longest suffix of exchanges that fits together with the collapse note.
        for keep_from in range(1, len(turn.exchanges)):
            collapsed = turn.exchanges[:keep_from]
            note = "Your earlier steps for this question (details omitted to save space):\n" + (
                "\n".join(
                    f"- step {e.step}: "
                    + (first_code_line(e.code) if e.code is not None else "(no code)")
                    + (f" -> {e.outcome}" if e.outcome else "")
                    for e in collapsed
                )
            )
            rest = [m for e in turn.exchanges[keep_from:] for m in self._exchange_messages(e)]
            candidate = [*head, ChatMessage.user(note), *rest]
            if _size(candidate) <= cap or keep_from == len(turn.exchanges) - 1:
                return candidate
        raise AssertionError("unreachable: the loop returns at the last exchange")

    def messages(self) -> list[ChatMessage]:
        """The messages to send now (system, earlier turns, current turn), within budget."""
        system = ChatMessage.system(self.system)
        if not self.turns:
            return [system]
        current = self.current
        if current.finished:
            history = self._history(self.turns, self.budget_chars - len(self.system))
            return merge_roles([system, *history])
        if self._frozen is None or self._frozen[0] != current.index:
            share = max(0, (self.budget_chars - len(self.system)) // 2)
            self._frozen = (current.index, self._history(self.turns[:-1], share))
        history = self._frozen[1]
        cap = self.budget_chars - len(self.system) - _size(history)
        return merge_roles([system, *history, *self._current(current, cap)])

    def _history(self, earlier: list[TurnLog], room: int) -> list[ChatMessage]:
        """Earlier turns within ``room`` characters: the newest in full while they fit,
        then summaries, then a note on how many were omitted and what they stated.

        Room for every earlier turn's context is set aside before any turn is rendered;
        a turn's share is released when the turn is rendered (its opener or summary
        holds its context), and the contexts of omitted turns go into the note.
        """
        reserved = {t.index: len(t.context) + _NOTE_LINE for t in earlier if t.context}
        remaining = room - sum(reserved.values())
        rendered: list[list[ChatMessage]] = []
        full_mode = True
        omitted = 0
        for turn in reversed(earlier):
            remaining += reserved.get(turn.index, 0)
            answered = turn.answer is not None
            full = self._full(turn) if full_mode and answered else []
            if full_mode and answered and _size(full) <= remaining:
                rendered.append(full)
                remaining -= _size(full)
                continue
            full_mode = full_mode and not answered  # an unanswered turn: summarised alone
            summary = self._summary(turn)
            if _size(summary) <= remaining:
                rendered.append(summary)
                remaining -= _size(summary)
            else:
                omitted = len(earlier) - len(rendered)
                break
        history = [m for block in reversed(rendered) for m in block]
        if omitted:
            note = f"({omitted} earlier questions of this session are omitted.)"
            stated = [f"- turn {t.index}: {t.context}" for t in earlier[:omitted] if t.context]
            if stated:
                note += "\nWhat the user stated in them, in order:\n" + "\n".join(stated)
            history = [ChatMessage.user(note), *history]
        return history
