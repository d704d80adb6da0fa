"""The content words of a question (`stateguard.question.content`), which the compact
state hint matches against the earlier states: questions of our multi-turn sessions and
the names their states hold; a text with no content word (nothing) is checked too."""

from __future__ import annotations

import pytest

from stateguard.question import content_words


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("What is the net_revenue by regions?", {"net", "revenue", "region"}),
        (
            "How many orders are there, and what is the total net revenue?",
            {"order", "net", "revenue"},
        ),
        # the words any analysis question uses are dropped
        (
            "What is the total contribution margin under the revised rate?",
            {"contribution", "margin"},
        ),
        # the stem is crude: "prices" → pric, "status" → statu, "sales" → sal
        ("Which cities have the highest prices?", {"city", "highest", "pric"}),
        ("What is the status of the classes?", {"statu", "class"}),
        # a word has three letters or digits at least, and starts with a letter
        ("Q3 2024 sales of product X1", {"sal", "product"}),
        ("orders['cogs']", {"order", "cog"}),
        # not stated: stop words only, or nothing
        ("What is the total number of values?", set()),
        ("", set()),
    ],
)
def test_the_content_words_of_a_question(text: str, words: set[str]) -> None:
    assert content_words(text) == words
