"""The revision statements of a turn's text (`stateguard.question.revisions`), which the
manager's revised-constant check reads in a turn's context and question: the statements of
our multi-turn examples, the numbers this reading leaves alone, and texts that state no
revision (nothing)."""

from __future__ import annotations

import pytest

from stateguard.question import QuestionSpec, revision_statements

REVISION = "Finance revised the COGS rate from 42% to 47% of net revenue, for the whole year."


@pytest.mark.parametrize(
    ("text", "found"),
    [
        (REVISION, [(42.0, 47.0, True, "revised the COGS rate from 42% to 47%")]),
        (
            "The discount was lowered from 0.1 to 0.05.",
            [(0.1, 0.05, False, "lowered from 0.1 to 0.05")],
        ),
        # one side written as a percentage makes both one; "percent" spelled out
        (
            "It changed from 42 to 47 percent.",
            [(42.0, 47.0, True, "changed from 42 to 47 percent")],
        ),
        ("The fee was reduced from 10 to 8.", [(10.0, 8.0, False, "reduced from 10 to 8")]),
        (
            "We moved the cutoff from 100 to 200 and cut the fee from 3.5% to 2%.",
            [
                # a number with no % keeps the white space after it
                (100.0, 200.0, False, "moved the cutoff from 100 to 200 "),
                (3.5, 2.0, True, "cut the fee from 3.5% to 2%"),
            ],
        ),
        # not stated: a range with no verb of change, a verb in another sentence or clause,
        # numbers this reading does not take (separators, signs, currency, words), nothing
        ("Sales from 2019 to 2021, by region.", []),
        ("The rate was revised. Sales from 10 to 20 follow.", []),
        ("The rate was revised; from 10 to 20 it goes.", []),
        ("The price went from 10 to 12.", []),
        ("Costs increased from -2 to $3, or from twelve to fifteen.", []),
        ("What is the margin?", []),
        ("", []),
    ],
)
def test_the_revisions_a_text_states(text: str, found: list) -> None:
    assert [(r.old, r.new, r.percent, r.text) for r in revision_statements(text)] == found


@pytest.mark.parametrize(
    "text",
    [
        "The fee was reduced from 10 to 8.",  # not a verb of the spec's
        "The price went from 10 to 12.",  # a verb of the spec's only
        "Costs increased from 1,200 to 1,500.",  # the spec reads separators
    ],
)
def test_the_reading_is_not_the_specs(text: str) -> None:
    """`QuestionSpec.revisions` reads revisions its own way: the two differ on these."""
    ours = [(r.old, r.new, r.percent) for r in revision_statements(text)]
    spec = [(r.old, r.new, r.percent) for r in QuestionSpec.parse(text).revisions]
    assert ours != spec
