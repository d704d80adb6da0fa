"""Which fields of an answer a question names.

A task whose answer is an object of fields (``{"total_revenue": 205, "n_orders": 12}``)
may ask for some of them only. The question names a field when every word of the field's
name is a word of the question. Both are split alike (`field_tokens`): at every character
that is not a letter or a digit and where a lower-case letter or digit meets an upper-case
one (``totalRevenue``, ``total_revenue`` and ``Total Revenue`` are all total, revenue),
lower-cased, a word keeping its digits (``q1``).

Words are compared without a final "s" (``orders`` → order): cruder than
`stateguard.question.stems.stem` ("status" → statu, "cities" → citie), and kept so, for
the verdicts that rely on it. A field's one-letter words and the words that only say how
it counts or links its other words ("n", "num", "number", "count", "of", "per", "the"…)
need not be in the question: ``n_orders`` is named by "orders". A field made only of such
words is never named.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_NOT_REQUIRED = frozenset(
    {"the", "of", "an", "and", "in", "per", "by", "to", "for", "is", "on", "num", "number", "count"}
)
"""Words of a field's name the question need not write: function words, and the words of
a count (``num_orders``, ``order_count``)."""


def field_tokens(name: str) -> set[str]:
    """The words of a field name or a question, lower-cased, not stemmed (see the module):
    ``topCustomer_2024`` → top, customer, 2024."""
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    return {t for t in re.split(r"[^a-z0-9]+", snake.lower()) if t}


def _stem(token: str) -> str:
    """``token`` without a final "s" when it is longer than three letters."""
    return token[:-1] if len(token) > 3 and token.endswith("s") else token


def named_fields(question: str, fields: Sequence[str]) -> list[str]:
    """The ``fields`` that ``question`` names (see the module), in the order given; empty
    when it names none."""
    asked = {_stem(t) for t in field_tokens(question)}
    found = []
    for name in fields:
        words = {_stem(t) for t in field_tokens(name) if len(t) > 1} - _NOT_REQUIRED
        if words and words <= asked:
            found.append(name)
    return found
