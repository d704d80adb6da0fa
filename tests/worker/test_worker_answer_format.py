"""Answer formatting as its own step: the requested format filled from printed results."""

from __future__ import annotations

import pytest

from stateguard.guard import GuardedSession
from stateguard.lineage import TrackedSession
from stateguard.llm import ScriptedModel
from stateguard.manager import NullSupervisor
from stateguard.worker.answer_format import AnswerSpec, extract_answer
from stateguard.worker.events import AnswerRecorded, ModelMessage, StepRecord
from stateguard.worker.loop import FORMATTED_THOUGHT, Worker

FENCE = "```"
TEMPLATE_Q = "How many rows, and what is the sum of b? Answer as `rows: <count>, total: <sum>`."


def test_spec_of_a_template_question() -> None:
    spec = AnswerSpec.from_question(
        "Which region leads? Answer as `region: <name>, margin: <total rounded to 2 decimals>`."
    )
    assert spec is not None and spec.template is not None
    assert [(f.label, f.kind, f.decimals) for f in spec.fields] == [
        ("region", "text", None),
        ("margin", "number", 2),
    ]


@pytest.mark.parametrize(
    ("question", "kind", "decimals"),
    [
        ("Which month had the most sales? Answer as YYYY-MM.", "month", None),
        ("How many orders are late?", "count", None),
        ("What is the mean discount, rounded to 4 decimals?", "number", 4),
        ("What share of orders are late, as a percentage?", "number", None),
    ],
)
def test_spec_of_a_single_value(question: str, kind: str, decimals: int | None) -> None:
    spec = AnswerSpec.from_question(question)
    assert spec is not None and spec.template is None
    assert (spec.fields[0].kind, spec.fields[0].decimals) == (kind, decimals)


def test_one_number_is_a_lone_number_or_count_with_no_form_of_several_fields() -> None:
    def one(question: str) -> str | None:
        spec = AnswerSpec.from_question(question)
        field = None if spec is None else spec.one_number
        return None if field is None else field.kind

    assert one("How many orders are late?") == "count"
    assert one("What is the mean discount, rounded to 4 decimals?") == "number"
    assert one("Which month had the most sales? Answer as YYYY-MM.") is None
    assert one(TEMPLATE_Q) is None
    assert one("Which region leads? Answer as `region: <name>`.") is None


@pytest.mark.parametrize("question", ["Which region leads?", "Load the data.", ""])
def test_no_spec_when_nothing_can_be_filled(question: str) -> None:
    assert AnswerSpec.from_question(question) is None


@pytest.mark.parametrize(
    ("outputs", "answer"),
    [
        (["rows: 3\ntotal = 60.0"], "rows: 3, total: 60.0"),
        (["{'rows': 3, 'total': 60}"], "rows: 3, total: 60"),
        (["rows    3\ntotal   60\nName: x, dtype: int64"], "rows: 3, total: 60"),
        (["3\n60"], "rows: 3, total: 60"),  # one line per field, in order
        (["(3, 60.0)"], "rows: 3, total: 60.0"),  # one tuple
        (["total: 60", "rows: 3"], "rows: 3, total: 60"),  # fields from older outputs
        (["   a   b\n0  1  10\n1  2  20"], None),  # a table is not an answer
        (["rows: 2.5\ntotal: 60"], None),  # a count must be an integer
        (["rows: 3\nrows: 4\ntotal: 60"], None),  # two values for one label
        (["rows: 3, total: 0    33137.10\n1    32238.12"], None),  # a Series after the label
        (["rows: 3 rows x 10 columns\ntotal: 60"], "rows: 3, total: 60"),  # a unit word
        (["rows: 3 7\ntotal: 60"], None),  # two numbers after the label
        # labels fill all fields but one; the newest output is one bare value: it fills it
        (["np.float64(60.0)", "rows: 3 rows x 10 columns"], "rows: 3, total: 60.0"),
        (["3", "rows: 3"], None),  # the bare value is the one a label gave already
        (["60 of 3", "rows: 3"], None),  # two numbers: not one bare value
        (["60.0", "x", "rows: 3"], "rows: 3, total: 60.0"),
        (["x", "60.0", "rows: 3"], None),  # only the newest output
    ],
)
def test_extract_a_template(outputs: list[str], answer: str | None) -> None:
    spec = AnswerSpec.from_question(TEMPLATE_Q)
    assert spec is not None
    assert extract_answer(spec, outputs) == answer


def test_the_models_bare_value_fills_the_one_field_the_outputs_leave_open() -> None:
    spec = AnswerSpec.from_question(TEMPLATE_Q)
    assert spec is not None
    assert extract_answer(spec, ["rows: 3 rows", "60.0"], given="60.0") == "rows: 3, total: 60.0"
    # rows is a count: a value with a fraction cannot fill it
    assert extract_answer(spec, ["total: 60"], given="2.5") is None
    # two fields open, or a given answer with two numbers: no guess
    assert extract_answer(spec, ["nothing labelled"], given="3") is None
    assert extract_answer(spec, ["rows: 3"], given="60 or 61") is None


def test_labelled_only_ignores_positions() -> None:
    spec = AnswerSpec.from_question(TEMPLATE_Q)
    assert spec is not None
    assert extract_answer(spec, ["3\n60"], positional=False) is None
    assert extract_answer(spec, ["60.0", "rows: 3"], positional=False) is None
    assert extract_answer(spec, ["rows: 3\ntotal: 60"], positional=False) == "rows: 3, total: 60"


@pytest.mark.parametrize(
    ("question", "outputs", "answer"),
    [
        ("Total, rounded to 2 decimals?", ["Total margin: 109691.0643"], "109691.06"),
        ("Total, rounded to 2 decimals?", ["1 2", "5.0"], None),  # only the newest output
        ("Which month? Answer as YYYY-MM.", ["Period('2024-06', 'M')"], "2024-06"),
        ("Which month? Answer as YYYY-MM.", ["2024-06 1.0\n2024-07 2.0"], None),
        ("How many orders?", ["31"], "31"),
    ],
)
def test_extract_a_single_value(question: str, outputs: list[str], answer: str | None) -> None:
    spec = AnswerSpec.from_question(question)
    assert spec is not None
    assert extract_answer(spec, outputs) == answer


def _run(tracked: TrackedSession, replies: list[str], question: str) -> tuple[list, ScriptedModel]:
    model = ScriptedModel(replies)
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()))
    return list(worker.run_turn(1, question)), model


@pytest.mark.kernel
def test_made_up_numbers_are_replaced_by_the_printed_values(tracked: TrackedSession) -> None:
    events, model = _run(
        tracked,
        [
            f"{FENCE}python\nimport pandas as pd\nt = pd.read_csv('data/t.csv')\n"
            f"print(len(t))\nprint(t['b'].sum())\n{FENCE}",
            "<answer>rows: 74, total: 1234.56</answer>",
        ],
        TEMPLATE_Q,
    )
    steps = [e for e in events if isinstance(e, StepRecord)]
    assert steps[-1].answer == "rows: 3, total: 60" and steps[-1].thought == FORMATTED_THOUGHT
    assert events[-1] == next(e for e in events if isinstance(e, AnswerRecorded))
    assert events[-1].answer == "rows: 3, total: 60" and events[-1].ended == "answer"
    assert len(model.requests) == 2


@pytest.mark.kernel
def test_labelled_output_is_answered_without_another_call(tracked: TrackedSession) -> None:
    events, model = _run(
        tracked,
        [
            f"{FENCE}python\nimport pandas as pd\nt = pd.read_csv('data/t.csv')\n"
            f"print('rows:', len(t))\nprint('total:', t['b'].sum())\n{FENCE}",
        ],
        TEMPLATE_Q,
    )
    assert events[-1].answer == "rows: 3, total: 60"
    assert len(model.requests) == 1
    assert sum(isinstance(e, ModelMessage) and e.role == "assistant" for e in events) == 1


@pytest.mark.kernel
def test_a_single_printed_number_waits_for_the_model(tracked: TrackedSession) -> None:
    events, model = _run(
        tracked,
        [
            f"{FENCE}python\nimport pandas as pd\nt = pd.read_csv('data/t.csv')\nlen(t)\n{FENCE}",
            f"{FENCE}python\nt['b'].sum()\n{FENCE}",
            "<answer>60</answer>",
        ],
        "What is the total of b, rounded to 2 decimals?",
    )
    # the row count printed first is not taken for the total: the model decides when
    assert events[-1].answer == "60" and len(model.requests) == 3


@pytest.mark.kernel
def test_the_format_written_as_code_is_filled_from_the_output(tracked: TrackedSession) -> None:
    events, model = _run(
        tracked,
        [
            f"{FENCE}python\nimport pandas as pd\nt = pd.read_csv('data/t.csv')\n"
            f"print(t['b'].sum())\ntotal: 60\n{FENCE}",
        ],
        "What is the total of b, rounded to 1 decimal?",
    )
    assert events[-1].answer == "60.0" and len(model.requests) == 1


@pytest.mark.kernel
def test_answer_lines_in_a_cell_are_not_run_and_the_rest_is(tracked: TrackedSession) -> None:
    events, _ = _run(
        tracked,
        [
            f"{FENCE}python\nimport pandas as pd\nt = pd.read_csv('data/t.csv')\nlen(t)\n"
            f"rows: 74\nregion: North Partner\n{FENCE}",
            "<answer>3</answer>",
        ],
        "Rows?",
    )
    first = next(e for e in events if isinstance(e, StepRecord))
    assert first.execution is not None and first.execution.ok
    assert first.execution.result == "3"
    assert "North Partner" not in (first.code or "")
    assert "`rows: 74; region: North Partner` computes nothing" in first.observation
    assert events[-1].answer == "3"


def test_text_values_are_read_by_label() -> None:
    spec = AnswerSpec.from_question("Which region? Answer as `region: <name>, total: <sum>`.")
    assert spec is not None
    assert spec.text_values("region: North Partner, total: 5") == ["North Partner"]
    assert spec.text_values("North, 5") == []
    single = AnswerSpec.from_question("How many rows?")
    assert single is not None and single.text_values("rows: 5") == []
