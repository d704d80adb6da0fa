"""One value per thing: "the price of each item" answered by a table listing an item twice."""

from __future__ import annotations

import json

import pytest
from steps import FakeEnv, ok

from stateguard.kernel import ProbeResult
from stateguard.verify import StepVerifier, VerifyTask
from stateguard.verify.entities import asked_entity, repeated_entity, stands_for


@pytest.mark.parametrize(
    ("question", "entity"),
    [
        ("What is the price of each item?", "item"),
        ("Discover the Male percentage per occupation and sort it", "occupation"),
        ("What is the average revenue amount per order?", "order"),
        ("For each one of the teams, show the goals", "team"),
        ("Show the revenue for every year", "year"),
        ("Sales per region per year", None),  # two things: regions repeat across years
        ("What is the number of observations in each regiment and company", None),
        ("List each item and its price", "item"),
        ("How many per cent of the orders?", None),
        ("Each one counts: how many orders?", None),
        ("How many orders were made?", None),
    ],
)
def test_the_thing_the_question_asks_one_value_for(question: str, entity: str | None) -> None:
    assert asked_entity(question) == entity


def test_a_column_stands_for_the_thing_with_generic_words_aside() -> None:
    assert stands_for("item_name", "item") and stands_for("order_id", "order")
    assert stands_for("Occupation", "occupation")
    assert not stands_for("item_price", "item")  # a price is not the item
    assert not stands_for("id", "id") and not stands_for("name", "name")


def _env(shown: object) -> FakeEnv:
    return FakeEnv(lambda code: ProbeResult(status="ok", wall_time=0.0, stdout=json.dumps(shown)))


def test_a_repeated_thing_is_found_and_other_repeats_are_not() -> None:
    q = "What is the price of each item?"
    shown = {"rows": 9, "repeats": {"item_name": 3, "item_price": 5}}
    found = repeated_entity(_env(shown).probe, q)
    assert found is not None and "`item_name` in 3 of its 9 rows" in found
    # prices may repeat; the items do not
    assert repeated_entity(_env({"rows": 9, "repeats": {"item_name": 0}}).probe, q) is None
    # nothing shown that is a table, a forged answer, or no thing asked: nothing said
    assert repeated_entity(_env(None).probe, q) is None
    assert repeated_entity(_env({"rows": 9, "repeats": [1]}).probe, q) is None
    assert repeated_entity(_env(shown).probe, "How many items are there?") is None


def test_the_rule_is_a_doubt_in_a_result_step_only() -> None:
    det = StepVerifier("deterministic")
    task = VerifyTask(question="What is the price of each item?")
    env = _env({"rows": 9, "repeats": {"item_name": 3}})
    step = ok("chipo[['item_name', 'item_price']]", result="   item_name  item_price\n…")
    v = det.verify(task, [step.model_copy(update={"result": True})], env=env)
    assert v.score == 0.5 and any(e.check == "one_per_entity" for e in v.evidence), v.rationale
    assert all(e.check != "one_per_entity" for e in det.verify(task, [step], env=env).evidence)
