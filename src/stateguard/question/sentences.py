"""The sentences of a text, and the first sentence of a question.

A sentence ends at a ``.``, ``?`` or ``!`` followed by white space and then a capital
letter, a ``(`` or a backtick: "Group the orders by region. Then sum it." ends after
"region."; "the 2.5 rate", "e.g. the mean" and "Is it? yes" do not end there. A blank
line ends a sentence too, whatever follows: it parts paragraphs (the contexts of a task's
turns, one after another: "… together.\n\ndata/pitches.csv is …").
"""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"(?<=[.?!])\s+(?=[A-Z(`])|\n[ \t]*\n\s*")


def first_sentence(text: str) -> str:
    """``text`` up to its first sentence end (see the module), the end's punctuation kept
    and the white space after it dropped; the whole of ``text`` when it has none."""
    return _SENTENCE_END.split(text, maxsplit=1)[0]


def sentences(text: str) -> list[str]:
    """``text`` split into sentences (see the module), white space in each collapsed."""
    return [" ".join(s.split()) for s in _SENTENCE_END.split(text) if s.strip()]
