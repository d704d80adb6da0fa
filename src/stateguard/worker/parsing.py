"""Parse a worker model reply into a thought, one code block and/or an answer.

A valid step is either exactly one fenced Python block (```python, ```py,
```python3, ```ipython or a bare ```; other languages such as ```text are
ignored) or an ``<answer>...</answer>`` element. Anything else is classified with
a `Problem` the loop answers with a corrective message; parsing never raises.

Rules, in order:

* blank reply -> ``empty``;
* several Python blocks -> one cell: the closed blocks joined in order (a model that
  writes its step in pieces means them to run in order; refusing them would spend a
  step on form); an unterminated block after closed ones is dropped;
* one block without its closing fence -> ``unterminated_code``;
* one block with no code in it -> ``empty_code``;
* code that is only comments (every statement commented out) -> ``commented_code``;
* one block -> a code step (an answer in the same reply is returned too; the
  loop sets it aside, since it was written before the output was seen);
* no block, an answer, but no code run yet in this turn -> ``answer_without_code``;
* no block, an empty answer -> ``empty_answer``;
* no block and no answer -> ``no_action``.

An *answer line* (ReAct's ``Final Answer: …``; ``answer: …`` at the start of a thought
line, markdown emphasis aside) is kept as `ParsedReply.stated`. A reply with no block (or
one of comments only) and no ``<answer>`` element answers with it; beside code, the loop
decides (it takes the stated answer only when this turn's outputs hold its numbers).

The answer is searched outside code blocks; an ``<answer>`` that is never closed
runs to the end of the reply; when several are present the last one counts.
"""

from __future__ import annotations

import re
import textwrap
from typing import Literal

from pydantic import BaseModel, ConfigDict

Problem = Literal[
    "empty",
    "no_action",
    "unterminated_code",
    "empty_code",
    "commented_code",
    "guessed_form",
    "empty_answer",
    "valueless_answer",
    "error_answer",
    "answer_without_code",
    "ungrounded_answer",
    "reply_over_tokens",
    "reply_over_seconds",
    "reply_over_line",
]
"""Why a reply is not a valid step; each value is a key of the corrective messages."""

PYTHON_LANGS = frozenset({"", "python", "py", "python3", "ipython", "ipython3"})
_FENCE = re.compile(r"^[ \t]{0,4}(`{3,})[ \t]*([^\s`]*)[^`\n]*$")
_ANSWER = re.compile(r"<answer>(.*?)(?:</answer>|\Z)", re.S | re.I)
_ANSWER_LINE = re.compile(r"^[ \t*_#>-]*(?:final[ \t]+)?answer[ \t*_]*:[ \t*_]*(\S.*)$", re.I)


class ParsedReply(BaseModel):
    """The parts of one model reply; `problem` is set iff the reply is not a valid step."""

    model_config = ConfigDict(frozen=True)

    thought: str = ""
    code: str | None = None
    answer: str | None = None
    problem: Problem | None = None
    stated: str | None = None
    """The answer line of the thought (``answer: …``), if any (see the module docstring)."""

    @property
    def action(self) -> Literal["code", "answer", "invalid"]:
        """What the loop should do with this reply."""
        if self.problem is not None:
            return "invalid"
        return "code" if self.code is not None else "answer"


class _Block(BaseModel):
    lang: str
    body: str
    start: int
    end: int
    """Line span [start, end) in the reply, fences included."""
    closed: bool


def _blocks(lines: list[str]) -> list[_Block]:
    """Fenced blocks in order; a closing fence has at least as many backticks as the opener."""
    blocks: list[_Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        ticks, lang = len(m.group(1)), m.group(2).lower()
        j = i + 1
        while j < len(lines):
            close = re.match(r"^[ \t]{0,4}(`{3,})[ \t]*$", lines[j])
            if close and len(close.group(1)) >= ticks:
                break
            j += 1
        closed = j < len(lines)
        body = "\n".join(lines[i + 1 : j])
        blocks.append(_Block(lang=lang, body=body, start=i, end=j + 1, closed=closed))
        i = j + 1
    return blocks


def _dedent_body(body: str) -> str:
    """Remove a common indentation (blocks nested in list items are indented)."""
    return textwrap.dedent(body).strip("\n")


def stated_answer(thought: str) -> str | None:
    """The first answer line of ``thought`` (``answer: …``, ``Final Answer: …``), its
    value without surrounding backticks or emphasis; None when there is none."""
    for line in thought.split("\n"):
        m = _ANSWER_LINE.match(line.strip())
        if m is not None:
            value = m.group(1).strip().strip("`*_ ").strip()
            if value:
                return value
    return None


def parse_reply(text: str, *, code_ran: bool) -> ParsedReply:
    """Classify ``text``; ``code_ran`` says whether any cell was executed in this turn."""
    parsed = _parse(text, code_ran=code_ran)
    stated = stated_answer(parsed.thought)
    if stated is None:
        return parsed
    if parsed.problem in ("no_action", "commented_code"):
        # no block (or one of comments only: ``# done``), no <answer>: the answer line is
        # the answer
        problem = None if code_ran else "answer_without_code"
        return ParsedReply(thought=parsed.thought, answer=stated, problem=problem, stated=stated)
    return parsed.model_copy(update={"stated": stated})


def _parse(text: str, *, code_ran: bool) -> ParsedReply:
    if not text or not text.strip():
        return ParsedReply(problem="empty")
    lines = text.split("\n")
    blocks = _blocks(lines)
    python = [b for b in blocks if b.lang in PYTHON_LANGS]
    # Everything outside fenced blocks: where the thought and the answer live.
    outside_lines = list(lines)
    for b in blocks:
        for k in range(b.start, min(b.end, len(lines))):
            outside_lines[k] = ""
    outside = "\n".join(outside_lines)
    answers = _ANSWER.findall(outside)
    answer = answers[-1].strip() if answers else None
    thought = _ANSWER.sub("", outside).strip()
    thought = re.sub(r"\n{3,}", "\n\n", thought)

    closed = [b for b in python if b.closed]
    if len(closed) > 1:
        code = "\n\n".join(_dedent_body(b.body) for b in closed if b.body.strip())
        if not _only_comments(code):
            return ParsedReply(thought=thought, code=code, answer=answer or None)
        if answer is None:
            return ParsedReply(thought=thought, problem="commented_code")
    elif python:
        block = closed[0] if closed else python[0]
        if not block.closed:
            return ParsedReply(thought=thought, problem="unterminated_code")
        code = _dedent_body(block.body)
        if not code.strip():
            return ParsedReply(thought=thought, problem="empty_code")
        fenced = _ANSWER.fullmatch(code.strip())
        if fenced is not None and answer is None:
            # an answer wrapped in a code fence is an answer, not Python to run
            answer = fenced.group(1).strip()
        elif _only_comments(code):
            if answer is None:
                return ParsedReply(thought=thought, problem="commented_code")
        else:
            return ParsedReply(thought=thought, code=code, answer=answer or None)
    if answer is None:
        return ParsedReply(thought=thought, problem="no_action")
    if not answer:
        return ParsedReply(thought=thought, answer="", problem="empty_answer")
    if not code_ran:
        return ParsedReply(thought=thought, answer=answer, problem="answer_without_code")
    return ParsedReply(thought=thought, answer=answer)


def _only_comments(code: str) -> bool:
    """Whether every non-blank line of ``code`` is a comment (nothing would run)."""
    lines = [line.strip() for line in code.splitlines() if line.strip()]
    return bool(lines) and all(line.startswith("#") for line in lines)


def close_open_block(text: str) -> str:
    """``text`` with a closing fence added when its last Python block is left open.

    For a reply whose generation stopped at a stop sequence placed right after a
    block's closing fence (the stop sequence itself is not returned).
    """
    python = [b for b in _blocks(text.split("\n")) if b.lang in PYTHON_LANGS]
    if python and not python[-1].closed and python[-1].body.strip():
        return text.rstrip("\n") + "\n```"
    return text
