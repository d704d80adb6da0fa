"""The form a question asks its answer in (`stateguard.question.answer_form`): our own
questions with a backticked template, DSEval and InfiAgent-DABench ones (whose answer
format is prose or ``@name[value]``), and questions that state no form ("not stated":
None), checked as carefully as those that do."""

from __future__ import annotations

import pytest

from stateguard.question import AnswerForm, answer_form

Field = tuple[str, str, int | None]
"""``(label, kind, decimals)``."""

TEMPLATE_Q = "How many rows, and what is the sum of b? Answer as `rows: <count>, total: <sum>`."


@pytest.mark.parametrize(
    ("question", "template", "fields"),
    [
        (
            "Which region leads? Answer as `region: <name>, margin: <total rounded to 2"
            " decimals>`.",
            "region: <name>, margin: <total rounded to 2 decimals>",
            [("region", "text", None), ("margin", "number", 2)],
        ),
        (
            TEMPLATE_Q,
            "rows: <count>, total: <sum>",
            [("rows", "count", None), ("total", "number", None)],
        ),
        (
            "Answer as `orders: <count>, net_revenue: <total>`.",
            "orders: <count>, net_revenue: <total>",
            [("orders", "count", None), ("net_revenue", "number", None)],
        ),
        # a placeholder's own places win; else the question's (a text field has none)
        (
            "Round to 2 decimal places. Answer as `depot: <depot name>, share: <share rounded to"
            " 4 decimals>, profit: <total>`.",
            "depot: <depot name>, share: <share rounded to 4 decimals>, profit: <total>",
            [("depot", "text", None), ("share", "number", 4), ("profit", "number", 2)],
        ),
        # the placeholder is read lower-cased; "count" in it makes a count; ``=`` as ``:``
        (
            "Answer as `Top City: <City>, n = <Count of orders>`",
            "Top City: <City>, n = <Count of orders>",
            [("Top City", "text", None), ("n", "count", None)],
        ),
        # whitespace runs, a line break too, read as one space
        (
            "Which segment?\nAnswer as `segment: <segment>,\n   orders: <count>`.",
            "segment: <segment>, orders: <count>",
            [("segment", "text", None), ("orders", "count", None)],
        ),
        ("Which month had the most sales? Answer as YYYY-MM.", None, [("", "month", None)]),
        # a month is asked before a count
        ("How many sales did the best month have? Answer as YYYY-MM.", None, [("", "month", None)]),
        ("How many orders are late?", None, [("", "count", None)]),
        ("What is the mean discount, rounded to 4 decimals?", None, [("", "number", 4)]),
        ("What share of orders are late, as a percentage?", None, [("", "number", None)]),
        ("What is the total weight, rounded to the nearest integer?", None, [("", "number", 0)]),
        # a name asked, but with decimal places: a number
        ("Which ratio is the largest, rounded to 3 decimals?", None, [("", "number", 3)]),
        # InfiAgent-DABench: question and answer format
        (
            "Calculate the mean fare paid by the passengers. @mean_fare[mean_fare_value] where"
            ' "mean_fare_value" is a floating-point number rounded to two decimal places.',
            None,
            [("", "number", 2)],
        ),
        (
            "How many missing values are there in the Age column? @missing_age[count] where"
            ' "count" is an integer.',
            None,
            [("", "count", None)],
        ),
        (
            'Calculate the mean and standard deviation of the "Volume" column.'
            ' @mean_volume[mean_volume] @std_dev_volume[std_dev_volume] where "mean_volume" and'
            ' "std_dev_volume" are floating-point numbers rounded to 2 decimal places.',
            None,
            [("", "number", 2)],
        ),
        # DSEval
        ("How many different names have the least occurrences?", None, [("", "count", None)]),
        ("What is the number of columns in the dataset?", None, [("", "number", None)]),
    ],
)
def test_the_form_a_question_asks(question: str, template: str | None, fields: list[Field]) -> None:
    form = answer_form(question)
    assert form is not None and form.template == template
    assert [(f.label, f.kind, f.decimals) for f in form.fields] == fields


@pytest.mark.parametrize(
    "question",
    [
        # a name asked without a template
        "Which region leads?",
        "Who sold the most units?",
        "What is the name of the top product?",
        "What was the name of the first customer?",
        "What is the most frequent occupation?",
        # nothing numeric asked
        "Load the data.",
        "Reindex the DataFrame so it goes from 0 to 299",
        "Ensemble the three classifiers to get a better model. Save it in a variable called"
        " `ensemble`.",
        "Conduct an ANOVA test to examine the difference in 'streams' across different 'key'"
        " levels. Return the p-value.",
        # a template without a ``label: <...>`` states no form, whatever else is asked
        "How many rows? Reply with `<answer>` only.",
        # InfiAgent-DABench: column names asked
        "Which column(s) contain missing values in the dataset?"
        " @missing_columns_in_object_type[missing_column1, missing_column2] whereby"
        " 'missing_column1', 'missing_column2', etc. are string names of the columns.",
        "",
        "   \n ",
    ],
)
def test_no_form_when_none_is_stated(question: str) -> None:
    assert answer_form(question) is None


def test_a_form_is_frozen_and_never_empty() -> None:
    form = answer_form(TEMPLATE_Q)
    assert isinstance(form, AnswerForm) and form.fields
    with pytest.raises(ValueError):
        form.fields[0].label = "other"  # type: ignore[misc]
