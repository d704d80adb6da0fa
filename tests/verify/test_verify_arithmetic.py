"""Arithmetic on text or identifier columns: a sum of strings, ``quantity * order_id``."""

from __future__ import annotations

import json

import pytest
from steps import FakeEnv, kinds_env, ok

from stateguard.kernel import ProbeResult
from stateguard.verify import StepVerifier, VerifyTask
from stateguard.verify.arithmetic import (
    alphabetical_extremes,
    combined_columns,
    flag_medians,
    hardcoded_ids,
    is_identifier,
    meaningless,
    numbers_as_dates,
)

KINDS = [
    ["chipo", "order_id", "number"],
    ["chipo", "quantity", "number"],
    ["chipo", "item_name", "text"],
    ["chipo", "item_price", "number"],
]


def _env(kinds: list[list[str]] = KINDS) -> FakeEnv:
    return kinds_env(kinds)


def test_combined_columns_are_the_operands_of_sums_products_and_ratios() -> None:
    code = (
        "a = chipo.quantity.sum()\n"
        "b = (chipo['quantity'] * chipo['item_price']).sum()\n"
        "c = chipo.groupby('item_name').order_id.mean()\n"
        "d = chipo.order_id.nunique() + chipo.groupby(by=['order_id']).sum().mean()\n"
        "e = chipo.first + ' ' + chipo.last\n"
    )
    got = {(u.frame, u.column) for u in combined_columns(code)}
    assert got == {("chipo", "quantity"), ("chipo", "item_price"), ("chipo", "order_id")}
    # counting, grouping by, + and - are not combining: `d` and `e` add nothing
    assert all("nunique" not in u.shown and "first" not in u.shown for u in combined_columns(code))
    assert combined_columns("def broken(:") == []


@pytest.mark.parametrize(
    ("name", "expected"),
    [("order_id", True), ("PassengerId", True), ("ID", True), ("idle", False), ("paid", False)],
)
def test_identifier_names(name: str, expected: bool) -> None:
    assert is_identifier(name) is expected


def test_a_sum_of_text_and_arithmetic_on_an_id_are_found() -> None:
    q = "How many items were ordered in total?"
    (text,) = meaningless(_env().probe, "chipo.item_name.sum()", q)
    assert "holds text" in text and "'item_name'" in text
    (ident,) = meaningless(_env().probe, "(chipo.quantity * chipo.order_id).sum()", q)
    assert "an identifier" in ident and "'order_id'" in ident


def test_near_misses_are_left_alone() -> None:
    q = "How many items were ordered in total?"
    assert meaningless(_env().probe, "chipo.quantity.sum()", q) == []
    assert meaningless(_env().probe, "chipo.order_id.nunique()", q) == []
    assert meaningless(_env().probe, "chipo.order_id.max()", q) == []
    # the question itself speaks of ids
    assert meaningless(_env().probe, "chipo.order_id.sum()", "What is the sum of order ids?") == []
    # a column that is not text after all (the probe says number)
    numbers = [["chipo", "item_name", "number"]]
    assert meaningless(_env(numbers).probe, "chipo.item_name.sum()", q) == []
    # a probe that fails, or forged output, says nothing
    failing = FakeEnv(lambda code: ProbeResult(status="error", wall_time=0.0))
    assert meaningless(failing.probe, "chipo.item_name.sum()", q) == []
    forged = FakeEnv(lambda code: ProbeResult(status="ok", wall_time=0.0, stdout='[["x"]]'))
    assert meaningless(forged.probe, "chipo.item_name.sum()", q) == []


def test_the_rule_is_zero_in_a_result_step_and_a_doubt_elsewhere() -> None:
    det = StepVerifier("deterministic")
    task = VerifyTask(question="How many items were ordered in total?")
    step = ok("chipo.item_name.sum()", result="'Chips and Fresh Tomato SalsaIzze…'")
    v = det.verify(task, [step.model_copy(update={"result": True})], env=_env())
    assert v.score == 0.0 and v.evidence[0].check == "meaningless_arithmetic", v.rationale
    assert det.verify(task, [step], env=_env()).score == 0.5
    right = ok("chipo.quantity.sum()", result="4972").model_copy(update={"result": True})
    assert det.verify(task, [right], env=_env()).score == 1.0


def test_a_threshold_on_an_id_is_found_and_one_on_a_quantity_is_not() -> None:
    q = "How many times did someone order more than one Canned Soda?"
    code = "len(chipo[(chipo.item_name == 'Canned Soda') & (chipo.order_id > 1)])"
    (found,) = meaningless(_env().probe, code, q)
    assert "compares" in found and "'order_id'" in found
    (flipped,) = meaningless(_env().probe, "chipo[1 <= chipo['order_id']]", q)
    assert "'order_id'" in flipped
    right = "len(chipo[(chipo.item_name == 'Canned Soda') & (chipo.quantity > 1)])"
    assert meaningless(_env().probe, right, q) == []
    # equality with an id picks one order; a comparison of two columns is not a threshold
    assert meaningless(_env().probe, "chipo[chipo.order_id == 1]", q) == []
    assert meaningless(_env().probe, "chipo[chipo.order_id > chipo.quantity]", q) == []
    # the question speaks of ids; a text column compared by size fails loudly, not silently
    assert (
        meaningless(_env().probe, "chipo[chipo.order_id > 100]", "orders with id above 100") == []
    )
    assert meaningless(_env().probe, "chipo[chipo.item_name > 1]", q) == []
    # a threshold on a column not named as an id costs no probe
    env = _env()
    assert meaningless(env.probe, "chipo[chipo.quantity > 1]", q) == [] and env.codes == []


def test_an_id_the_question_does_not_name_picked_by_equality_is_a_doubt_in_a_result() -> None:
    q = "What is the price of each item?"
    code = "one = chipo[chipo.order_id == 1]\none[['item_name', 'item_price']]"
    (found,) = hardcoded_ids(code, q)
    assert "`chipo.order_id == 1`" in found and "does not name" in found
    assert hardcoded_ids("chipo[1234567 == chipo['order_id']]", q)
    # near misses: the question names the id; a quantity, not an id; an order comparison
    assert hardcoded_ids("chipo[chipo.order_id == 1234567]", "What did order 1234567 hold?") == []
    assert hardcoded_ids("chipo[chipo.quantity == 1]", q) == []
    assert hardcoded_ids("chipo[chipo.order_id == other_id]", q) == []
    det = StepVerifier("deterministic")
    step = ok(code, result="   item_name  item_price\n…")
    v = det.verify(VerifyTask(question=q), [step.model_copy(update={"result": True})])
    assert v.score == 0.5 and v.evidence[0].check == "hardcoded_id", v.rationale
    # exploring one record, outside a result step, is not doubted
    assert det.verify(VerifyTask(question=q), [step]).score == 1.0


def _flags_env(flags: list[list[str]]) -> FakeEnv:
    return FakeEnv(lambda code: ProbeResult(status="ok", wall_time=0.0, stdout=json.dumps(flags)))


def test_a_median_of_a_zero_one_column_is_found_and_a_doubt() -> None:
    code = "churn.groupby('Geography')['Exited'].median().idxmax()"
    env = _flags_env([["churn", "Exited"]])
    (found,) = flag_medians(env.probe, code)
    assert "`churn['Exited']`" in found and "holds only 0 and 1" in found
    assert "flag_columns" in env.codes[0]
    # near misses: a column the probe does not call a flag, a mean, forged output
    assert flag_medians(_flags_env([]).probe, code) == []
    assert flag_medians(env.probe, code.replace("median", "mean")) == []
    assert flag_medians(_flags_env([["churn"]]).probe, code) == []
    task = VerifyTask(question="Which region has the highest churn rate?")
    step = ok(code, result="'France'").model_copy(update={"result": True})
    v = StepVerifier("deterministic").verify(task, [step], env=env)
    assert v.score == 0.5 and v.evidence[0].check == "flag_median", v.rationale


def test_the_row_of_the_largest_word_is_found_and_a_doubt() -> None:
    code = "(cars.loc[cars['name'].idxmax(), 'name'], cars.loc[cars['mpg'].idxmin(), 'name'])"
    env = _flags_env([["cars", "name"]])
    (found,) = alphabetical_extremes(env.probe, code)
    assert "`cars['name']`" in found and "alphabetical order" in found
    assert "word_columns" in env.codes[0] and "'mpg'" in env.codes[0]
    # near misses: no column of words per the probe; a max of words; forged output
    assert alphabetical_extremes(_flags_env([]).probe, code) == []
    assert alphabetical_extremes(env.probe, "cars['name'].max()") == []
    assert alphabetical_extremes(_flags_env([[1]]).probe, code) == []
    task = VerifyTask(question="Which car has the highest mpg?")
    step = ok(code, result="('vw', 'hi')").model_copy(update={"result": True})
    v = StepVerifier("deterministic").verify(task, [step], env=env)
    assert v.score == 0.5 and v.evidence[0].check == "alphabetical_extreme", v.rationale


def test_numbers_read_as_dates_are_found_and_zero_in_a_result_step() -> None:
    env = _env([["n", "Monthly Revenue", "number"], ["n", "Last Payment", "text"]])
    wrong = "n['Last Payment'] = pd.to_datetime(n['Monthly Revenue'], dayfirst=True)"
    (msg,) = numbers_as_dates(env.probe, wrong)
    assert "holds numbers" in msg and "1970" in msg
    # near misses: a column of text, a unit or a format given, no column
    right = "n['Last Payment'] = pd.to_datetime(n['Last Payment'], dayfirst=True)"
    assert numbers_as_dates(env.probe, right) == []
    assert numbers_as_dates(env.probe, "pd.to_datetime(n['Monthly Revenue'], unit='s')") == []
    assert numbers_as_dates(env.probe, "pd.to_datetime(n['Monthly Revenue'], format='%Y')") == []
    assert numbers_as_dates(env.probe, "pd.to_datetime('2025-01-01')") == []
    det = StepVerifier("deterministic")
    task = VerifyTask(question="What share of users churned?")
    step = ok(wrong + "\nn['Last Payment'].dt.year.mean()", result="1970.0")
    v = det.verify(task, [step.model_copy(update={"result": True})], env=env)
    assert v.score == 0.0 and v.evidence[0].check == "meaningless_arithmetic", v.rationale
    assert det.verify(task, [step], env=env).score == 0.5  # outside a result: a doubt
