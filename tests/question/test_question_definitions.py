"""The quantities a task's text defines, and which of them a question asks for."""

from __future__ import annotations

import pytest

from stateguard.question import asked_terms, defined_terms, sentences_about, term_parameters


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        # X is …: after an article, a possessive or "its", with "of a THING" or an
        # abbreviation, in a clause after ":" or ";" or ", and"
        ("The net revenue of an order is units × unit_price × (1 − discount).", ["net revenue"]),
        (
            "Pricing model: the fuel surcharge is 9% of the base charge. A shipment's billed "
            "amount is base charge + fuel surcharge, and its gross profit is the billed amount "
            "− carrier_cost.",
            ["fuel surcharge", "billed amount", "gross profit"],
        ),
        ("cost of goods sold (COGS) is 42% of net revenue", ["cost of goods sold"]),
        (
            "The guest's net of a stay is its room charge minus the agency commission.",
            ["net"],
        ),
        # a X of NUMBER; the term holds no "a" ("the market earns a commission of")
        ("On a paid sale the market earns a commission of 6 % of the price.", ["commission"]),
        (
            "the platform keeps a service fee of 8 % of the price; a booking pays a city tax "
            "of 2.50 per night.",
            ["service fee", "city tax"],
        ),
        # X are …, when what follows states an amount (a number, an operator, a word
        # combining amounts)
        (
            "Fee model: a hire's takings are boats × day_rate. The trust's receipts are its "
            "levies and its launch fees together; the hirer's costs are 12 % of the takings.",
            ["takings", "receipts", "costs"],
        ),
        # not stated: a plural clause with no amount, a verb, a year, an ordinal, a
        # reference, a question
        ("The skippers are self-employed and the boats are moored at the pier.", []),
        ("An enrolment costs its credits × 180, plus 25 per enrolment.", []),
        ("data/orders.csv holds the orders of 2025, one row per order.", []),
        ("It is the share of the 3rd quarter.", []),
        ("What is the total payout?", []),
        ("", []),
    ],
)
def test_the_quantities_a_text_defines(text: str, terms: list[str]) -> None:
    assert [d.term for d in defined_terms(text)] == terms


CONTEXT = (
    "Money model: a delivered order pays a commission of 15 % of the basket_value. The "
    "restaurant's payout of a delivered order is its basket_value minus the commission. A "
    "refunded order pays out nothing (its payout is 0). The net revenue of an order is its "
    "basket_value."
)


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("What is the total payout by cuisine?", ["payout"]),
        ("How many restaurants have payouts above 1500?", ["payout"]),  # a plural
        # a figure computed "under" a term does not ask for the term
        ("What is the total payout under the revised commission?", ["payout"]),
        ("What is the total basket value under the current commission?", []),
        # the longer term, not the term inside it
        ("What is the net revenue of Pizza orders?", ["net revenue"]),
        ("Which district has the most orders?", []),
    ],
)
def test_the_defined_quantities_a_question_asks_for(question: str, asked: list[str]) -> None:
    found = asked_terms(question, defined_terms(CONTEXT))
    assert [d.term for d in found] == asked


def test_the_sentences_that_speak_of_a_term_and_its_key_words() -> None:
    (payout,) = [d for d in defined_terms(CONTEXT) if d.term == "payout"]
    said = sentences_about(payout, CONTEXT)
    assert len(said) == 2 and said[1].startswith("A refunded order pays out nothing")
    assert payout.key_words == ("payout",)
    billed = defined_terms("A rental's billed amount is its days × rate.")[0]
    assert billed.key_words == ("billed",)  # "amount" names nothing on its own
    cogs = defined_terms("cost of goods sold (COGS) is 42% of net revenue")[0]
    assert cogs.abbreviation == "COGS" and cogs.key_words == ("cost",)
    margin = defined_terms("the contribution margin of an order is its net revenue − COGS")[0]
    assert margin.key_words == ("contribution", "margin")


def test_the_parameters_a_defined_quantity_rests_on() -> None:
    """Through the quantities its clause names, a plural and a flat charge included; not
    the numbers of another clause of the same sentence."""
    text = (
        "A sale's takings are trays × price. A stall earns a pitch fee of 2.50 + 0.40 × "
        "hours, and a commission of 6 % of the takings. A returned sale costs a flat "
        "disposal charge of 1.20. The market's receipts are its commissions and its "
        "disposal charges together."
    )
    definitions = defined_terms(text)
    (receipts,) = asked_terms("Which stall brings the largest receipts?", definitions)
    found = [(d.term, p.text) for d, p in term_parameters(receipts, definitions)]
    assert found == [("commission", "6 %"), ("flat disposal charge", "1.20")]
    (fee,) = asked_terms("What is the total pitch fee?", definitions)
    assert [p.text for _, p in term_parameters(fee, definitions)] == ["2.50", "0.40"]
    # a plural term is asked for only as written: "Taking" is no "takings"
    assert asked_terms("Taking every stall, how many sales?", definitions) == []
    assert [d.term for d in asked_terms("What are the takings?", definitions)] == ["takings"]
