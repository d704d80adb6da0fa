"""Text helpers shared by the host side and the in-kernel probe (standard library only)."""

from __future__ import annotations

import re

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")


def strip_ansi(text: str) -> str:
    """Remove ANSI escape sequences (colours, cursor moves) from `text`."""
    return _ANSI.sub("", text)


def truncation_marker(dropped: int) -> str:
    """The marker that replaces `dropped` characters cut from the middle of a text."""
    return f"\n...[{dropped} chars truncated]...\n"


def truncate_middle(text: str, max_chars: int) -> str:
    """Keep `text` if it has at most `max_chars` chars, else its head and tail around a marker."""
    if len(text) <= max_chars:
        return text
    head = max_chars // 2
    tail = max_chars - head
    return text[:head] + truncation_marker(len(text) - head - tail) + text[len(text) - tail :]


class CappedText:
    """Accumulates a stream in bounded memory, keeping exactly what `truncate_middle` keeps.

    Invariant: `_head` holds the first chars (at most `max_chars // 2`); `_tail` holds the
    most recent chars after them, trimmed only when more than `2 * tail_cap` accumulate,
    so `_total <= max_chars` implies nothing was dropped.
    """

    def __init__(self, max_chars: int) -> None:
        self._max = max_chars
        self._head_cap = max_chars // 2
        self._tail_cap = max_chars - self._head_cap
        self._head = ""
        self._tail: list[str] = []
        self._tail_len = 0
        self._total = 0

    def write(self, text: str) -> None:
        """Append `text` to the stream."""
        self._total += len(text)
        room = self._head_cap - len(self._head)
        if room > 0:
            self._head += text[:room]
            text = text[room:]
        if not text:
            return
        self._tail.append(text)
        self._tail_len += len(text)
        if self._tail_len > 2 * self._tail_cap:
            joined = "".join(self._tail)[-self._tail_cap :]
            self._tail = [joined]
            self._tail_len = len(joined)

    def getvalue(self) -> str:
        """The stream so far, truncated in the middle if it exceeded `max_chars`."""
        tail = "".join(self._tail)
        if self._total <= self._max:
            return self._head + tail
        kept_tail = tail[-self._tail_cap :] if self._tail_cap else ""
        dropped = self._total - len(self._head) - len(kept_tail)
        return self._head + truncation_marker(dropped) + kept_tail
