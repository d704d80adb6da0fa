"""The first sentence of a question (`stateguard.question.sentences`), which a state's issue
line is cut at when the whole question is too long: questions of several sentences, and
ones with no sentence end (the whole text)."""

from __future__ import annotations

import pytest

from stateguard.question import first_sentence, sentences


@pytest.mark.parametrize(
    ("text", "first"),
    [
        (
            "Group the orders by region and sum the margin. Then explain it.",
            "Group the orders by region and sum the margin.",
        ),
        ("How many orders are there?  (Count each once.)", "How many orders are there?"),
        ("Load the data! `df` holds it.", "Load the data!"),
        ("Which region?\nThe north or the south.", "Which region?"),
        # a blank line parts paragraphs, whatever follows it
        ("The fees are together.\n\ndata/x.csv lists the docks.", "The fees are together."),
        # not stated (the whole text): a decimal point, an abbreviation, a lower-case
        # word after the mark, no mark at all, nothing
        ("What is the 2.5 percentile of fares", "What is the 2.5 percentile of fares"),
        ("Use a statistic, e.g. the mean.", "Use a statistic, e.g. the mean."),
        ("Is it above 10? yes or no", "Is it above 10? yes or no"),
        ("What is the mean age", "What is the mean age"),
        ("", ""),
    ],
)
def test_the_first_sentence_of_a_question(text: str, first: str) -> None:
    assert first_sentence(text) == first


def test_the_sentences_of_contexts_joined_by_blank_lines() -> None:
    text = "The receipts are its fees together.\n\ndata/pitches.csv is the register of\npitches."
    assert sentences(text) == [
        "The receipts are its fees together.",
        "data/pitches.csv is the register of pitches.",
    ]
