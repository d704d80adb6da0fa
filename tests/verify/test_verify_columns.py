"""The question-column rule: a result step reading other columns than the question names."""

from __future__ import annotations

import pytest
from steps import FakeEnv, ok

from stateguard.kernel import ProbeResult
from stateguard.verify import StepVerifier, VerifyTask
from stateguard.verify.columns import (
    assigned_columns,
    column_mismatch,
    dual_part_mismatch,
    named_columns,
    projection_mismatch,
    stem,
    used_columns,
    words,
)

USERS = {"users": ["user_id", "age", "gender", "occupation", "zip_code"]}
ARMY = {"army": ["regiment", "company", "deaths", "battles", "veterans", "deserters"]}
CHIPO = {"chipo": ["order_id", "quantity", "item_name", "choice_description", "item_price"]}


def test_words_and_plurals() -> None:
    assert words("item_price") == words("ItemPrice") == words("Item Price") == ["item", "price"]
    assert words("RPT_value2") == ["rpt", "value", "2"]
    assert [stem(w) for w in ("cities", "boxes", "orders", "class", "status", "axis")] == [
        "city",
        "box",
        "order",
        "class",
        "status",
        "axis",
    ]


def test_named_columns_need_every_word_and_not_only_generic_ones() -> None:
    cols = [*CHIPO["chipo"], "name", "id"]
    assert named_columns("What is the mean item price?", cols) == {"item_price"}
    # "items" names no column: item_name also needs "name"; "name" alone is generic
    assert named_columns("How many items were ordered?", cols) == set()
    assert named_columns("Give the name and the id.", cols) == set()
    assert named_columns("Give each item's name.", cols) == {"item_name"}
    assert named_columns("How many different occupations are there?", USERS["users"]) == {
        "occupation"
    }


def test_used_and_assigned_columns() -> None:
    code = "df['a'] = df.b * 2\ndf.groupby(by=['c']).d.sum()\ndf.query('e > 3 and `f` < 1')"
    assert used_columns(code, "abcdefg") == set("abcdef")
    assert used_columns("df[", "ab") is None
    assert assigned_columns(code) == {"a"}


@pytest.mark.parametrize(
    ("question", "code", "frames", "partial"),
    [
        ("How many different occupations are in this dataset?", "users.zip_code.nunique()", USERS,
         False),
        ("Extract the occupation column", "users.age", USERS, False),
        ("Extract the columns 'veterans' and 'deaths'", "army[['veterans', 'deserters']]", ARMY,
         True),
        ("Select rows where df.deaths is greater than 500", "army[army['battles'] > 500]", ARMY,
         False),
    ],
)  # fmt: skip
def test_a_result_from_other_columns_than_the_question_names(
    question: str, code: str, frames: dict[str, list[str]], partial: bool
) -> None:
    found = column_mismatch(question, code, frames)
    assert found is not None and found.partial is partial
    assert found.missed[0] in found.describe()


@pytest.mark.parametrize(
    ("question", "code", "frames"),
    [
        # the named column is read
        ("How many different occupations are in this dataset?", "users.occupation.nunique()",
         USERS),
        ("Extract the columns 'veterans' and 'deaths'", "army[['veterans', 'deaths']]", ARMY),
        # nothing named: the question speaks of items, the step reads quantity
        ("How many items were ordered in total?", "chipo.quantity.sum()", CHIPO),
        # no column read (whole table, positions)
        ("How many different occupations are there?", "users.iloc[:, 3].nunique()", USERS),
        # the step builds the named column itself
        ("What is the mean item price?", "chipo['item_price'] = chipo.quantity * 2", CHIPO),
        # the frame holding the named column is not read by the step
        ("How many different occupations are there?", "other.zip_code.nunique()", USERS),
    ],
)  # fmt: skip
def test_near_misses_are_not_mismatches(
    question: str, code: str, frames: dict[str, list[str]]
) -> None:
    assert column_mismatch(question, code, frames) is None


def _env(frames: dict[str, list[str]]) -> FakeEnv:
    return FakeEnv(lambda code: ProbeResult(status="ok", wall_time=0.0, value=frames))


def test_the_rule_doubts_a_result_step_and_leaves_others_alone() -> None:
    det = StepVerifier("deterministic")
    task = VerifyTask(question="How many different occupations are in this dataset?")
    step = ok("users.zip_code.nunique()", result="795")
    result = step.model_copy(update={"result": True})
    v = det.verify(task, [result], env=_env(USERS))
    assert v.score == 0.5 and v.evidence[-1].check == "question_column"
    assert "'occupation'" in v.rationale and "'zip_code'" in v.rationale
    assert det.verify(task, [step], env=_env(USERS)).score == 1.0  # an exploration may look
    right = ok("users.occupation.nunique()", result="21").model_copy(update={"result": True})
    assert det.verify(task, [right], env=_env(USERS)).score == 1.0
    # a probe that fails leaves the rule silent
    failing = FakeEnv(lambda code: ProbeResult(status="error", wall_time=0.0))
    assert det.verify(task, [result], env=failing).score == 1.0


def test_a_partial_mismatch_is_a_doubt_not_a_verdict() -> None:
    det = StepVerifier("deterministic")
    task = VerifyTask(question="What are the mean veterans and the mean deaths?")
    code = "army.veterans.mean(), army.deserters.mean()"
    step = ok(code, result="...").model_copy(update={"result": True})
    v = det.verify(task, [step], env=_env(ARMY))
    assert v.score == 0.5 and "'deaths', which the step does not read" in v.rationale
    assert [e.settles for e in v.evidence if e.check == "question_column"] == [False]


def test_a_shown_table_without_a_column_the_question_asks_for_is_doubted() -> None:
    det = StepVerifier("deterministic")
    q = "Return a data frame with only two columns item_name and item_price"
    code = "chipo_one = chipo[chipo.quantity == 1]\nchipo[['order_id', 'item_price']]"
    step = ok(code, result="...").model_copy(update={"result": True})
    v = det.verify(VerifyTask(question=q), [step], env=_env(CHIPO))
    assert v.score == 0.5 and v.evidence[0].check == "question_column", v.rationale
    assert "asks for the column(s) 'item_name'; the step shows 'order_id'" in v.rationale
    # near misses: the asked columns; a question that speaks of no columns
    right = code.replace("'order_id'", "'item_name'")
    ok_step = ok(right, result="...").model_copy(update={"result": True})
    assert det.verify(VerifyTask(question=q), [ok_step], env=_env(CHIPO)).score == 1.0
    plain = VerifyTask(question="What is the item_name and item_price of each order?")
    assert projection_mismatch(plain.question, code, CHIPO) is None


@pytest.mark.parametrize(
    ("question", "named"),
    [
        ("How many orders were made in the period?", {"order_id"}),
        ("How many different items are sold?", {"item_name"}),
        ("What is the revenue per order?", {"order_id"}),
        ("What is the number of orders?", {"order_id"}),
        # "many" counts units of a named thing, not its names; a verb names nothing
        ("How many items were ordered in total?", set()),
        ("How many times did someone order more than one Canned Soda?", set()),
        # a name with no generic word is named in full or not at all
        ("What is the item price of different items?", {"item_name"}),
    ],
)
def test_a_column_is_named_by_its_own_words_after_a_word_over_things(
    question: str, named: set[str]
) -> None:
    from stateguard.verify.columns import noun_named_columns

    assert noun_named_columns(question, CHIPO["chipo"]) == named


def test_a_column_named_by_its_own_words_alone_is_a_doubt_when_missed() -> None:
    q = "How many orders were made in the period?"
    found = column_mismatch(q, "chipo.quantity.value_counts().count()", CHIPO)
    assert found is not None and found.weak and found.missed == ("order_id",)
    assert column_mismatch(q, "chipo.order_id.value_counts().count()", CHIPO) is None
    # a fully named column comes first: "per order" does not count when revenue is named
    rev = {"chipo": [*CHIPO["chipo"], "revenue"]}
    per = "What is the average revenue amount per order?"
    assert column_mismatch(per, "chipo.groupby('order_id').revenue.sum().mean()", rev) is None
    task = VerifyTask(question=q)
    step = ok("chipo.quantity.value_counts().count()", result="9").model_copy(
        update={"result": True}
    )
    v = StepVerifier("deterministic").verify(task, [step], env=_env(CHIPO))
    assert v.score == 0.5 and v.evidence[0].check == "question_column", v.rationale


def test_a_cell_that_builds_the_named_column_then_shows_another_is_a_doubt() -> None:
    rev = {"chipo": [*CHIPO["chipo"], "revenue"]}
    q = "What is the average revenue amount per order?"
    build = "chipo['revenue'] = chipo['quantity'] * chipo['item_price']\n"
    other = build + "chipo.groupby(by=['order_id']).sum(numeric_only=True).mean()['item_price']"
    found = column_mismatch(q, other, rev)
    assert found is not None and found.built and found.missed == ("revenue",)
    assert "its last statement reads 'item_price', 'order_id'" in found.describe()
    shown = build + "chipo.groupby(by=['order_id']).sum(numeric_only=True).mean()['revenue']"
    assert column_mismatch(q, shown, rev) is None
    assert column_mismatch(q, build.strip(), rev) is None  # building only
    assert column_mismatch(q, build + "chipo", rev) is None  # the whole table shown


CARS = {"cars": ["mpg", "weight", "name", "acceleration"]}
HIGH_LOW = "Which cars have the highest and the lowest mpg? Give their names."


@pytest.mark.parametrize(
    "code",
    [
        "(cars.loc[cars['weight'].idxmax(), 'name'], cars.loc[cars['mpg'].idxmin(), 'name'])",
        "cars.loc[cars.mpg.idxmax(), 'name'], cars.loc[cars.acceleration.idxmin(), 'name']",
        "{'top': cars.mpg.max(), 'bottom': cars.weight.min()}",
    ],
)
def test_opposite_extremes_over_an_unnamed_column_are_found(code: str) -> None:
    found = dual_part_mismatch(HIGH_LOW, code, CARS)
    assert found is not None and found.missed == ("mpg",) and found.instead[0] != "mpg"


@pytest.mark.parametrize(
    ("question", "code"),
    [
        (HIGH_LOW, "cars.loc[cars.mpg.idxmax(), 'name'], cars.loc[cars.mpg.idxmin(), 'name']"),
        # both columns named: two extremes asked
        ("What are the highest mpg and the lowest weight?", "(cars.mpg.max(), cars.weight.min())"),
        # not opposite extremes: two like statistics of two columns
        (HIGH_LOW, "(cars.mpg.mean(), cars.weight.mean())"),
        # written differently beyond the column
        (HIGH_LOW, "(cars.weight.max(), cars.mpg.min() + 1)"),
        (HIGH_LOW, "cars.weight.max()"),
    ],
)
def test_like_parts_that_are_not_a_swapped_extreme_are_not(question: str, code: str) -> None:
    assert dual_part_mismatch(question, code, CARS) is None


def test_the_rule_doubts_opposite_extremes_over_two_columns() -> None:
    det = StepVerifier("deterministic")
    task = VerifyTask(question=HIGH_LOW)
    code = "(cars.loc[cars['weight'].idxmax(), 'name'], cars.loc[cars['mpg'].idxmin(), 'name'])"
    step = ok(code, result="('a', 'b')").model_copy(update={"result": True})
    v = det.verify(task, [step], env=_env(CARS))
    assert v.score == 0.5 and v.evidence[-1].check == "question_column", v.rationale
    assert "'mpg'" in v.rationale and "'weight'" in v.rationale


def test_a_quoted_column_name_names_it_even_when_generic() -> None:
    sales = {"sales": ["Unit price", "Quantity", "Tax", "Total", "cogs"]}
    q = (
        "Compute the largest difference between unit price times quantity plus tax and "
        'the "Total" column.'
    )
    wrong = "(sales['Unit price'] * sales['Quantity'] + sales['Tax'] - sales['cogs']).abs().max()"
    found = column_mismatch(q, wrong, sales)
    assert found is not None and found.missed == ("Total",) and found.instead == ("cogs",)
    assert column_mismatch(q, wrong.replace("cogs", "Total"), sales) is None
    # unquoted, "total" is an ordinary word and names nothing
    assert column_mismatch(q.replace('"Total" column', "total"), wrong, sales) is None
