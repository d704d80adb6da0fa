"""The content words of a question: the words that say what it is about.

Two texts are about the same thing when they share such a word ("the contribution margin
by channel" and a state that computed ``orders['contribution']``). The text is
lower-cased and ``_`` read as a space (``net_revenue`` is net, revenue); a word is a
letter followed by at least two letters or digits. Stop words are dropped: function
words, and the words any analysis question uses ("total", "number", "value", "rounded",
"answer", "revised", "rate"…). What is left loses a plural ending, cruder than
`stateguard.question.stems.stem` ("prices" → pric, "status" → statu), and kept so, for
the texts already matched by it.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z][a-z0-9]{2,}")
_STOP = frozenset(
    (
        "the",
        "and",
        "for",
        "are",
        "was",
        "were",
        "what",
        "which",
        "how",
        "many",
        "much",
        "per",
        "each",
        "from",
        "with",
        "that",
        "this",
        "these",
        "those",
        "into",
        "over",
        "under",
        "than",
        "then",
        "there",
        "their",
        "rounded",
        "decimals",
        "decimal",
        "answer",
        "give",
        "total",
        "number",
        "value",
        "values",
        "data",
        "current",
        "revised",
        "rate",
        "turn",
        "question",
        "all",
        "its",
        "has",
        "have",
        "had",
        "not",
        "any",
        "one",
        "two",
        "three",
        "use",
        "used",
        "using",
        "as",
    )
)
"""Words that say nothing of what a question is about (matched before stemming)."""


def _stem(word: str) -> str:
    """``word`` without an "ies" (→ "y"), "es" or "s" ending, when three letters remain."""
    for suffix in ("ies", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def content_words(text: str) -> set[str]:
    """The content words of ``text``, a question or what it is compared with (see the
    module): "What is the net_revenue by regions?" → net, revenue, region."""
    flat = text.lower().replace("_", " ")
    return {_stem(w) for w in _WORD.findall(flat) if w not in _STOP}
