"""Bounds on one model reply: line lengths and imitated markers, checked as text arrives.

A small model can run on without end: one thought line repeated until the token limit,
or a reply that goes on to write the system's own notes (``Manager note: …``) as if
they were its own. `ReplyCut` says what a reply may not contain; `ReplyWatch` reads a
reply piece by piece (a streamed generation, or a whole reply at once) and says where
and why it must end:

* ``line``: a line outside a code block longer than ``thought_chars``, or a code line
  longer than ``code_chars`` (the reply is cut before that line);
* ``marker``: one of ``markers`` (the words the system writes to the model) appears
  (the reply is cut where it starts), or, with ``headings``, a thought line opens as a
  markdown heading (``## 2. What is the average weight…``): the system's prompt is divided into
  such sections, and a small model that writes one goes on to set itself a new
  question and answer it (the reply is cut before that line).

The embedded backend stops generating at the first of these; the worker applies the
same check to any backend's reply afterwards (`cut_reply`), so a scripted or remote
model is held to the same bounds.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

CutReason = Literal["line", "marker"]

SYSTEM_MARKERS: tuple[str, ...] = (
    "Manager note",
    "<analytical_state_hint",
    "</analytical_state_hint",
    "<error_hint",
    "</error_hint",
    "Question (turn",
    "[Earlier question",
    "cells run (first lines)",
    "no cell ran",
    "answer given:",
    "error_variable:",
    "faulty_reasoning:",
)
"""Words only the system writes to the model, as the headers of its notes (the manager's
notes, the summary of an earlier turn, the fields of a repair note): a reply holding one
imitates the prompt. (The setup note's words, "The session has loaded the data
files", are not among them: a small model starts its first thought with them, then
writes its code; cutting there would leave an empty reply.)"""


class ReplyCut(BaseModel):
    """What one reply may not contain (see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    thought_chars: int = Field(default=200, ge=1)
    """Longest line outside a code block (a thought line)."""
    answer_chars: int = Field(default=2000, ge=1)
    """Longest line holding an ``<answer>`` (a structured answer may be a long JSON)."""
    code_chars: int = Field(default=300, ge=1)
    """Longest code line."""
    markers: tuple[str, ...] = SYSTEM_MARKERS
    headings: bool = True
    """Cut before a thought line that opens as a markdown heading (``#`` then ``#`` or a
    space)."""


class ReplyWatch:
    """Reads a reply as it arrives; `feed` returns why it must stop, once it must.

    After a stop, `text` is the reply cut at the offending point (before the overlong
    line, or before the marker) and `reason` says why.
    """

    def __init__(self, cut: ReplyCut | None = None) -> None:
        self.cut = cut or ReplyCut()
        self._text = ""
        self._line_start = 0
        self._in_code = False
        self.reason: CutReason | None = None
        self._cut_at: int | None = None
        self._longest_marker = max((len(m) for m in self.cut.markers), default=0)

    @property
    def text(self) -> str:
        """The reply so far (cut, after a stop)."""
        return self._text if self._cut_at is None else self._text[: self._cut_at]

    def feed(self, piece: str) -> CutReason | None:
        """Add ``piece``; the reason to stop (None: go on). Nothing is read after a stop."""
        if self.reason is not None:
            return self.reason
        start = max(0, len(self._text) - self._longest_marker)
        self._text += piece
        # markers: search only the new text and the tail a marker could straddle
        hits = [i for m in self.cut.markers if (i := self._text.find(m, start)) >= 0]
        if hits:
            return self._stop("marker", min(hits))
        # lines: every line completed by this piece, then the open one
        while True:
            end = self._text.find("\n", self._line_start)
            line = self._text[self._line_start : len(self._text) if end < 0 else end]
            if line.lstrip().startswith("```"):
                if end < 0:
                    break  # an open fence line: its language may still come
                self._in_code = not self._in_code
            elif not self._in_code and self.cut.headings and _heading(line):
                return self._stop("marker", self._line_start)
            else:
                limit = (
                    self.cut.code_chars
                    if self._in_code
                    else self.cut.answer_chars
                    if "<answer>" in line
                    else self.cut.thought_chars
                )
                if len(line) > limit:
                    return self._stop("line", self._line_start)
            if end < 0:
                break
            self._line_start = end + 1
        return None

    def _stop(self, reason: CutReason, at: int) -> CutReason:
        self.reason, self._cut_at = reason, at
        return reason


def _heading(line: str) -> bool:
    """A line that opens as a markdown heading (``## …``, ``# …``)."""
    return line.startswith("#") and len(line) >= 2 and line[1] in "# "


def cut_reply(text: str, cut: ReplyCut | None = None) -> tuple[str, CutReason | None]:
    """``text`` cut at the first overlong line or imitated marker, and why (None: intact)."""
    watch = ReplyWatch(cut)
    reason = watch.feed(text)
    return watch.text, reason
