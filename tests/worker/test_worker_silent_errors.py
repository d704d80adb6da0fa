"""Silent errors execution shows: a Series printed after a label, a filter matching no
row. Each is detected, told to the model, and replaced by a cell sampled in probes."""

from __future__ import annotations

import pandas as pd
import pytest

from stateguard.audit.filterchecks import absent_filters, describe, equality_filters
from stateguard.audit.printchecks import labelled_series
from stateguard.checks import Step
from stateguard.guard import GuardedSession
from stateguard.lineage import TrackedSession
from stateguard.llm import ScriptedModel
from stateguard.manager import Hint, NullSupervisor
from stateguard.worker.events import StepRecord
from stateguard.worker.loop import Worker
from stateguard.worker.preload import Preload

F = "```"


def code(src: str) -> str:
    return f"Next step.\n{F}python\n{src}\n{F}"


def play(
    tracked: TrackedSession, replies: list[str], question: str, retry_samples: int = 2
) -> tuple[ScriptedModel, list, list[StepRecord]]:
    """One turn of a worker with ``retry_samples`` extra samples on a repeat or doubt, no
    manager."""
    model = ScriptedModel(replies)
    worker = Worker(
        model, GuardedSession(tracked, manager=NullSupervisor()), retry_samples=retry_samples
    )
    events = list(worker.run_turn(1, question))
    return model, events, [e for e in events if isinstance(e, StepRecord)]


LOADED_T = Preload(
    code="import pandas as pd\nt = pd.read_csv('data/t.csv')",
    frames={"t": "data/t.csv"},
    columns={"t": ("a", "b")},
)
"""The worker's setup: the table ``t`` loaded from its data file."""


def loaded_worker(tracked: TrackedSession, replies: list[str]) -> Worker:
    """A worker with no manager and no extra samples, whose setup loads ``t``."""
    return Worker(
        ScriptedModel(replies),
        GuardedSession(tracked, manager=NullSupervisor()),
        retry_samples=0,
        setup=LOADED_T,
    )


def printed(value: object, label: str = "net_revenue") -> str:
    return f"orders: 1200, {label}: {value}\n"


def test_a_long_series_after_a_label_is_found_with_its_length() -> None:
    s = pd.Series(range(1200), dtype="float64") * 1.5
    found = labelled_series(printed(s))
    assert [(f.label, f.first_index, f.length) for f in found] == [("net_revenue", "0", 1200)]


def test_a_short_named_series_after_an_equals_sign_is_found() -> None:
    s = pd.Series([1.0, 2.0, 3.0], index=["a", "b", "c"], name="x")
    found = labelled_series(f"total = {s}\n")
    assert [(f.label, f.first_index, f.length) for f in found] == [("total", "a", 3)]


@pytest.mark.parametrize(
    "stdout",
    [
        printed(209637.41),  # one number: what was meant
        str(pd.Series([1.0, 2.0], name="x")) + "\n",  # a Series shown on its own line
        "by region:\n" + str(pd.Series([1.0, 2.0], index=["N", "S"])) + "\n",  # label, then a table
        printed(pd.Series([5.0])),  # one value in a Series still reads as one value
        "dtype: float64\n",  # a footer without rows
    ],
)
def test_near_misses_are_not_reported(stdout: str) -> None:
    assert labelled_series(stdout) == []


@pytest.mark.kernel
def test_a_misprinted_total_is_told_and_a_sampled_cell_that_prints_one_value_replaces_it(
    tracked: TrackedSession,
) -> None:
    setup = "import pandas as pd\ndf = pd.DataFrame({'a': [1.0, 2.0, 3.0], 'b': [2.0, 2.0, 2.0]})"
    wrong = "t = df['a'] * df['b'].sum()\nprint(f'total: {t}')"
    replies = [
        code(setup),
        code(wrong),
        code("t = df['a'] * df['b'].sum()\nprint('total:', t)"),  # greedy: the same mistake
        code("side = 1\nt = df['a'] * 2\nprint(f'total: {t}')"),  # candidate 1: still a Series
        code("df['ab'] = df['a'] * df['b']\nt = df['ab'].sum()\nprint(f'total: {t}')"),
        "<answer>12.0</answer>",
    ]
    model, events, steps = play(tracked, replies, "What is the total of a times b?")
    assert "printed a column where one value was meant" in steps[1].observation
    assert "`total` is followed by a whole Series of 3 values" in steps[1].observation
    # the greedy repeat of the mistake and candidate 1 ran only in probes
    assert steps[2].code is not None and "df['ab'].sum()" in steps[2].code
    assert steps[2].execution is not None and steps[2].execution.stdout.strip() == "total: 12.0"
    assert tracked.kernel.execute("print('side' in globals())").stdout.strip() == "False"
    assert events[-1].answer == "12.0"
    # after the misprint, the next reply is sampled as code: no answer is taken from it
    assert [r.temperature for r in model.requests[2:5]] == [0.0, 0.7, 0.7]


@pytest.mark.kernel
def test_an_answer_read_off_a_misprinted_series_is_not_formatted_from_it(
    tracked: TrackedSession,
) -> None:
    """The formatting step never takes the Series' first index as the value."""
    replies = [
        code("import pandas as pd\ns = pd.Series([3.0, 4.0])\nprint(f'total: {s}')"),
        code("print(f'total: {s.sum()}')"),
        "<answer>total: 7.0</answer>",
    ]
    worker = Worker(
        ScriptedModel(replies), GuardedSession(tracked, manager=NullSupervisor()), retry_samples=0
    )
    events = list(worker.run_turn(1, "What is the total? Answer as `total: <total>`."))
    assert events[-1].answer == "total: 7.0"
    answers = [e.answer for e in events if isinstance(e, StepRecord) and e.answer]
    assert "total: 0" not in answers


# ---------------------------------------------------------------- filters matching no row


@pytest.mark.parametrize(
    ("src", "found"),
    [
        ("t[t['region'] == 'Online']", [("t", "region", "Online")]),
        ("t.loc[t.region == 'North', 'x']", [("t", "region", "North")]),
        ("t[('N' == t['r']) & (t['y'] == -3)]", [("t", "r", "N"), ("t", "y", -3)]),
        ("t[t['c'].isin(['a', 'b'])]", [("t", "c", "a"), ("t", "c", "b")]),
        ("t[t['region'] != 'Online']", []),  # not an equality
        ("t[t['a'] == t['b']]", []),  # column against column
        ("x == 'a'", []),  # not a column
        ("t[t['region'] ==", []),  # does not parse
    ],
)
def test_equality_filters_are_read_from_the_code(src: str, found: list) -> None:
    assert equality_filters(src) == found


@pytest.mark.kernel
def test_a_filter_on_a_value_the_column_lacks_is_found_with_where_the_value_is(
    tracked: TrackedSession,
) -> None:
    tracked.execute(
        "import pandas as pd\n"
        "orders = pd.DataFrame({'region': ['N', 'S', 'N'],"
        " 'channel': ['Online', 'Retail', 'Online'],"
        " 'year': ['2023', '2024', '2024'], 'x': [1, 2, 3]})\n"
        "by_region = orders.groupby('region', as_index=False)['x'].sum()"
    )
    kernel = tracked.kernel
    found = absent_filters(
        kernel.run_probe, "by_region[by_region['region'] == 'Online']['x'].sum()"
    )
    assert [(f.frame, f.column, f.value, f.elsewhere) for f in found] == [
        ("by_region", "region", "'Online'", ["orders['channel']"])
    ]
    note = describe(found)
    assert "`by_region['region'] == 'Online'` matches no row" in note and "'N', 'S'" in note
    typed = absent_filters(kernel.run_probe, "orders[orders.year == 2024]")
    assert [(f.value, f.as_text) for f in typed] == [("2024", True)]
    assert "as text" in describe(typed)
    # near misses: a value that is there, a column that does not exist, an unknown frame
    assert absent_filters(kernel.run_probe, "orders[orders['region'] == 'N']") == []
    assert absent_filters(kernel.run_probe, "orders[orders['nope'] == 'N']") == []
    assert absent_filters(kernel.run_probe, "other[other['region'] == 'Online']") == []
    # the probe left the namespace alone
    assert kernel.execute("print(sorted(k for k in globals() if not k.startswith('_'))[:9])").ok


@pytest.mark.kernel
def test_a_cell_whose_filter_matches_nothing_is_told_and_not_taken_as_an_answer(
    tracked: TrackedSession,
) -> None:
    setup = (
        "import pandas as pd\n"
        "t = pd.DataFrame({'region': ['N', 'S'], 'channel': ['Online', 'Retail'], 'x': [1.0, 2.0]})"
    )
    replies = [
        code(setup),
        code("print(t[t['region'] == 'Online']['x'].sum())"),
        code("print(t[t['channel'] == 'Online']['x'].sum())"),  # greedy: passes its probe
        "<answer>1.0</answer>",
    ]
    model, events, steps = play(tracked, replies, "What is the total x of Online orders?")
    assert "a filter selected nothing" in steps[1].observation
    assert "`t['channel']`" in steps[1].observation
    assert steps[2].execution is not None and steps[2].execution.stdout.strip() == "1.0"
    assert "selected nothing" not in steps[2].observation
    assert events[-1].answer == "1.0"
    assert len(model.requests) == 4  # the greedy reply passed its probe: no extra sample


@pytest.mark.parametrize(
    ("question", "label", "flagged"),
    [
        ("What is the total net revenue?", "net_revenue", True),  # one value asked
        ("Answer as `orders: <count>, net_revenue: <total>`.", "net_revenue", True),
        ("Answer as `Online: <total>, Retail: <total>`.", "by channel", False),  # a table
        ("Which region sells most? Answer as `region: <name>`.", "region", False),  # a name
        ("Describe the data.", "net_revenue", False),  # nothing specific asked
    ],
)
def test_a_labelled_series_counts_only_where_the_question_asks_for_that_value(
    question: str, label: str, flagged: bool
) -> None:
    from stateguard.kernel import ExecutionResult, ProbeResult
    from stateguard.worker.answer_format import AnswerSpec
    from stateguard.worker.doubts import silent_errors
    from stateguard.worker.scope import ScopeLog

    stdout = f"{label}: " + str(pd.Series([1.0, 2.0, 3.0])) + "\n"
    found = silent_errors(
        "print(t)",
        ExecutionResult(status="ok", stdout=stdout, wall_time=0.0),
        (),
        probe=lambda code, timeout=0: ProbeResult(status="error", wall_time=0.0),
        spec=AnswerSpec.from_question(question),
        scopes=ScopeLog(),
        turn=1,
        question=question,
    )
    assert [d.check for d in found] == (["printed_series"] if flagged else [])
    assert all(d.severity == "doubt" and "Series of 3 values" in d.message for d in found)


@pytest.mark.kernel
def test_an_earlier_turns_answer_copied_into_another_question_is_refused(
    tracked: TrackedSession,
) -> None:
    replies = [
        code("region, total = 'North', 35685.77\nprint(region, total)"),
        "<answer>region: North, contribution: 35685.77</answer>",
        code("share = 5124 / 100\nprint(share)"),
        "<answer>region: North, contribution: 35685.77</answer>",  # copied from turn 1
        "<answer>51.24</answer>",
    ]
    model = ScriptedModel(replies)
    worker = Worker(model, GuardedSession(tracked, manager=NullSupervisor()), retry_samples=0)
    first = "Which region? Answer as `region: <name>, contribution: <total>`."
    assert list(worker.run_turn(1, first))[-1].answer == "region: North, contribution: 35685.77"
    events = list(worker.run_turn(2, "What share, as a percentage rounded to 2 decimals?"))
    refused = [e for e in events if isinstance(e, StepRecord) and e.problem == "copied_answer"]
    assert len(refused) == 1 and "your answer to turn 1" in refused[0].observation
    assert events[-1].answer == "51.24"


@pytest.mark.kernel
@pytest.mark.parametrize(
    ("cell", "again", "value", "first", "second"),
    [
        # a revision that leaves a count unchanged gives the same answer again (computed
        # again: the same code run again is `recomputed_answer`)
        ("n = 30 + 1\nprint(n)", "m = 30 + 1\nprint(m)", "31", "How many orders lose money?",
         "How many orders lose money under the new rate?"),
        # one short value may well answer two different questions
        ("print(0)", "print(1 - 1)", "0", "How many rows have no price?",
         "What is the lowest discount, rounded to 2 decimals?"),
    ],
)  # fmt: skip
def test_a_repeated_answer_that_is_no_copy_is_not_refused(
    tracked: TrackedSession, cell: str, again: str, value: str, first: str, second: str
) -> None:
    replies = [code(cell), f"<answer>{value}</answer>", code(again), f"<answer>{value}</answer>"]
    worker = Worker(
        ScriptedModel(replies), GuardedSession(tracked, manager=NullSupervisor()), retry_samples=0
    )
    assert list(worker.run_turn(1, first))[-1].answer == value
    events = list(worker.run_turn(2, second))
    assert events[-1].answer == value
    assert not [e for e in events if isinstance(e, StepRecord) and e.problem]


def test_many_values_where_one_is_needed_are_named_after_the_error() -> None:
    from stateguard.kernel import ErrorInfo, ExecutionResult
    from stateguard.worker.error_context import many_for_one

    ex = ExecutionResult(
        status="error",
        error=ErrorInfo(
            ename="TypeError", evalue="unsupported format string passed to Series.__format__"
        ),
        wall_time=0.0,
    )
    described = {"pct": "Series shape=(576,) dtype=float64", "total": "float 3.5"}
    note = many_for_one(ex, described)
    assert "`pct` holds 576 values (a Series)" in note and "total" not in note
    other = ex.model_copy(update={"error": ErrorInfo(ename="KeyError", evalue="'x'")})
    assert many_for_one(other, described) == ""  # near miss: another error
    assert many_for_one(ex, {"pct": "Series shape=(1,) dtype=float64"}) == ""  # one value


@pytest.mark.kernel
def test_a_grouped_result_assigned_as_a_column_is_told_to_be_all_nan(
    tracked: TrackedSession,
) -> None:
    from stateguard.audit.nanchecks import nan_columns, written_columns

    assert written_columns(["t['m']@v2", "t@v3", "x@v1", 't["a b"]@v1']) == [
        ("t", "m"),
        ("t", "a b"),
    ]
    replies = [
        code(
            "import pandas as pd\n"
            "t = pd.DataFrame({'month': ['01', '01', '02'], 'x': [1.0, 2.0, 3.0]})\n"
            "t['by_month'] = t.groupby('month')['x'].sum()\n"
            "t['double'] = t['x'] * 2"
        ),
        code("by_month = t.groupby('month')['x'].sum()\nprint(by_month.idxmax())"),
        # a filtered copy carries the empty column: not this cell's doing, told once only
        code("u = t[t['x'] > 1]\nprint(u['x'].sum())"),
        "<answer>01</answer>",
    ]
    worker = Worker(
        ScriptedModel(replies), GuardedSession(tracked, manager=NullSupervisor()), retry_samples=0
    )
    events = list(worker.run_turn(1, "Which month has the highest total x?"))
    steps = [e for e in events if isinstance(e, StepRecord)]
    assert "`t['by_month']` holds only missing values (NaN) in all 3 rows" in steps[0].observation
    assert "double" not in steps[0].observation  # near miss: a column with values
    assert "missing values" not in steps[1].observation
    assert steps[2].code.startswith("u = t[") and "missing values" not in steps[2].observation
    probe = tracked.kernel.run_probe
    assert nan_columns(probe, ["t['double']@v1", "nope['x']@v1"]) == []


@pytest.mark.kernel
def test_a_map_that_leaves_values_missing_is_told(tracked: TrackedSession) -> None:
    replies = [
        code(
            "import pandas as pd\n"
            "u = pd.DataFrame({'gender': ['M', 'F', 'f', 'M']})\n"
            "u['male'] = u['gender'].map({'M': 1, 'F': 0})\n"
            "u['upper'] = u['gender'].map(str.upper)"
        ),
        code("print(round(u['male'].mean() * 100))"),
        "<answer>67</answer>",
    ]
    worker = Worker(
        ScriptedModel(replies), GuardedSession(tracked, manager=NullSupervisor()), retry_samples=0
    )
    events = list(worker.run_turn(1, "What percentage of users are male?"))
    steps = [e for e in events if isinstance(e, StepRecord)]
    note = steps[0].observation
    assert "left 1 of 4 rows of `u['male']` missing where `u['gender']` holds a value" in note
    assert "'upper'" not in note  # near miss: a map that covers every value
    assert "left" not in steps[1].observation


@pytest.mark.kernel
def test_a_rename_that_renamed_nothing_is_told(tracked: TrackedSession) -> None:
    replies = [
        code(
            "import pandas as pd\n"
            "u = pd.DataFrame({'region': ['a', 'b'], 'sales': [1.0, 2.0]})\n"
            "out = u[['region']].rename(columns={'sales': 'Total Sales'})\n"
            "ok = u.rename(columns={'sales': 'Total Sales'})\n"
            "print(out)"
        ),
        code("print(u['sales'].sum())"),
        "<answer>3.0</answer>",
    ]
    worker = Worker(
        ScriptedModel(replies), GuardedSession(tracked, manager=NullSupervisor()), retry_samples=0
    )
    events = list(worker.run_turn(1, "What are the total sales?"))
    steps = [e for e in events if isinstance(e, StepRecord)]
    note = steps[0].observation
    assert (
        "renamed nothing for 'sales': the table it is applied to has the columns 'region'" in note
    )
    assert note.count("renamed nothing") == 1  # near miss: `ok` renames a held column
    assert "renamed nothing" not in steps[1].observation


@pytest.mark.kernel
@pytest.mark.parametrize(
    ("read", "columns"),
    [
        ("print(t['net_revenue'].sum())", "`t` has the columns revenue, m "),
        ("print(t.groupby('m')['net_revenue'].sum())", "`t` has the columns revenue, m "),
    ],
)
def test_a_missing_column_error_lists_the_frames_columns_and_the_closest(
    tracked: TrackedSession, read: str, columns: str
) -> None:
    replies = [
        code(f"import pandas as pd\nt = pd.DataFrame({{'revenue': [1.0], 'm': ['x']}})\n{read}"),
        code("print(t['revenue'].sum())"),
        "<answer>1.0</answer>",
    ]
    worker = Worker(
        ScriptedModel(replies), GuardedSession(tracked, manager=NullSupervisor()), retry_samples=0
    )
    steps = [e for e in worker.run_turn(1, "Total revenue?") if isinstance(e, StepRecord)]
    note = steps[0].observation
    assert columns + "(closest to 'net_revenue': 'revenue')" in note


@pytest.mark.kernel
def test_a_missing_column_another_frame_holds_is_named_with_the_shared_columns(
    tracked: TrackedSession,
) -> None:
    replies = [
        code(
            "import pandas as pd\n"
            "r = pd.DataFrame({'hid': [1, 2], 'kwh': [3.0, 4.0]})\n"
            "h = pd.DataFrame({'hid': [1, 2], 'region': ['N', 'S']})\n"
            "other = pd.DataFrame({'x': [1]})\n"
            "print(r.groupby('region')['kwh'].sum())"
        ),
        code("print(r['kwh'].sum())"),
        code("print(r['nope'].sum())"),
        "<answer>7.0</answer>",
    ]
    worker = Worker(
        ScriptedModel(replies), GuardedSession(tracked, manager=NullSupervisor()), retry_samples=0
    )
    steps = [e for e in worker.run_turn(1, "kWh per region?") if isinstance(e, StepRecord)]
    note = steps[0].observation
    assert "`h` holds 'region'; it shares 'hid' with `r`." in note
    assert "`other`" not in note  # near miss: a frame without the column
    # near miss: a column no frame holds names no other frame
    assert "holds" not in steps[2].observation, steps[2].observation


@pytest.mark.kernel
def test_a_column_of_the_rows_looked_up_in_the_lookup_table_comes_with_the_join_the_other_way(
    tracked: TrackedSession,
) -> None:
    """The line asks the register (one row per ``hid``) for a column of the readings (many
    rows per ``hid``): the note shows the left join that gives each reading its
    household's columns, under a new name."""
    setup = (
        "import pandas as pd\n"
        "r = pd.DataFrame({'hid': [1, 2, 2, 9], 'kwh': [3.0, 4.0, 1.0, 2.0]})\n"
        "h = pd.DataFrame({'hid': [1, 2], 'region': ['N', 'S']})\n"
        "print(h[h['region'] == 'S']['kwh'].sum())"
    )
    replies = [
        code(setup),
        code("m = pd.DataFrame({'hid': [1, 1], 'kind': ['a', 'b']})\nprint(m['kwh'].sum())"),
        "<answer>1</answer>",
    ]
    worker = Worker(
        ScriptedModel(replies), GuardedSession(tracked, manager=NullSupervisor()), retry_samples=0
    )
    steps = [e for e in worker.run_turn(1, "kWh in region S?") if isinstance(e, StepRecord)]
    note = steps[0].observation
    example = "`r_h = r.merge(h, on='hid', how=\"left\")`"
    assert example in note and "`h` lists each 'hid' once" in note, note
    # the join it shows keeps every reading and gives it its region
    ns: dict[str, object] = {}
    exec(setup.rsplit("\n", 1)[0] + "\n" + example.strip("`"), ns)
    joined = ns["r_h"]
    assert len(joined) == 4 and list(joined["region"].fillna("-")) == ["N", "S", "S", "-"]
    # near miss: a frame that repeats 'hid' is no lookup table, so no join is offered
    assert "`r` holds 'kwh'" in steps[1].observation
    assert "merge" not in steps[1].observation, steps[1].observation


@pytest.mark.kernel
def test_a_missing_column_held_by_a_lookup_table_comes_with_the_left_join_that_adds_it(
    tracked: TrackedSession,
) -> None:
    setup = (
        "import pandas as pd\n"
        "r = pd.DataFrame({'hid': [1, 2, 2, 9], 'kwh': [3.0, 4.0, 1.0, 2.0]})\n"
        "h = pd.DataFrame({'hid': [1, 2], 'region': ['N', 'S'], 'size': [3, 4]})\n"
        "dup = pd.DataFrame({'hid': [1, 1], 'tariff': ['a', 'b']})\n"
        "print(r.groupby('region')['kwh'].sum())"
    )
    replies = [code(setup), code("print(r.groupby('tariff')['kwh'].sum())"), "<answer>1</answer>"]
    worker = Worker(
        ScriptedModel(replies), GuardedSession(tracked, manager=NullSupervisor()), retry_samples=0
    )
    steps = [e for e in worker.run_turn(1, "kWh per region?") if isinstance(e, StepRecord)]
    note = steps[0].observation
    example = "`r = r.merge(h[['hid', 'region', 'size']], on='hid', how=\"left\")`"
    assert example in note, note
    # the join it shows keeps every row and adds the column
    ns: dict[str, object] = {}
    exec(setup.rsplit("\n", 1)[0] + "\n" + example.strip("`"), ns)
    joined = ns["r"]
    assert len(joined) == 4 and list(joined["region"].fillna("-")) == ["N", "S", "S", "-"]
    # near miss: the frame holding 'tariff' repeats 'hid', so no join is offered
    assert "`dup` holds 'tariff'" in steps[1].observation
    assert "merge" not in steps[1].observation, steps[1].observation


@pytest.mark.kernel
def test_a_column_filled_with_one_made_up_value_that_another_table_holds_is_a_doubt(
    tracked: TrackedSession,
) -> None:
    replies = [
        code(
            "import pandas as pd\n"
            "e = pd.DataFrame({'code': ['A', 'B', 'B'], 'credits': [3, 4, 5]})\n"
            "c = pd.DataFrame({'code': ['A', 'B'], 'dept': ['Bio', 'Chem']})\n"
            "if 'dept' not in e.columns:\n"
            "    e['dept'] = 'Unknown'\n"
            "print(e.groupby('dept')['credits'].sum())"
        ),
        code("e['source'] = 'file'\ne['dept2'] = 'x'\nprint(len(e))"),
        "<answer>1</answer>",
    ]
    worker = Worker(
        ScriptedModel(replies), GuardedSession(tracked, manager=NullSupervisor()), retry_samples=0
    )
    steps = [e for e in worker.run_turn(1, "Credits per dept?") if isinstance(e, StepRecord)]
    note = steps[0].observation
    assert "set every row of `e['dept']` to 'Unknown'" in note, note
    assert (
        "`e = e.drop(columns=['dept']).merge(c[['code', 'dept']], on='code', how=\"left\")`" in note
    )
    # near misses: constant columns no other table holds
    assert "set every row" not in steps[1].observation, steps[1].observation


@pytest.mark.kernel
def test_a_column_set_to_a_number_the_task_states_is_not_a_placeholder(
    tracked: TrackedSession,
) -> None:
    setup = (
        "import pandas as pd\n"
        "done = pd.DataFrame({'sid': [1, 2], 'price': [30.0, 40.0], 'rate': [1.0, 2.0]})\n"
        "gone = pd.DataFrame({'sid': [3, 4]})\n"
    )
    replies = [
        code(setup + "gone['rate'] = 7.5\nprint(gone['rate'].sum())"),
        code("gone['price'] = 3.00\nprint(gone['price'].sum())"),
        "<answer>3</answer>",
    ]
    worker = Worker(
        ScriptedModel(replies), GuardedSession(tracked, manager=NullSupervisor()), retry_samples=0
    )
    q = "A cancelled session earns a flat fee of 3.00. What do cancelled sessions earn?"
    steps = [e for e in worker.run_turn(1, q) if isinstance(e, StepRecord)]
    # a number the task does not state is told
    assert "set every row of `gone['rate']` to" in steps[0].observation, steps[0].observation
    assert "set every row" not in steps[1].observation, steps[1].observation


def test_a_missing_column_named_like_the_prompts_product_example_is_shown_how_to_make() -> None:
    from stateguard.worker.error_context import product_column

    frames = {"rentals": ["rental_days", "daily_rate", "outcome"]}
    note = product_column("rental_days_x_daily_rate", frames)
    assert "`rentals['rental_days_x_daily_rate'] = rentals['rental_days'] * " in note
    assert "rentals['daily_rate']`" in note
    # near misses: a part that is no column, another name
    assert product_column("rental_days_x_fee", frames) == ""
    assert product_column("net", frames) == ""


@pytest.mark.kernel
def test_the_product_note_replaces_the_holder_note_on_a_kernel_error(
    tracked: TrackedSession,
) -> None:
    replies = [
        code(
            "import pandas as pd\n"
            "r = pd.DataFrame({'d': [1, 2], 'rate': [3.0, 4.0]})\n"
            "print(r['d_x_rate'].sum())"
        ),
        "<answer>1</answer>",
    ]
    worker = Worker(
        ScriptedModel(replies), GuardedSession(tracked, manager=NullSupervisor()), retry_samples=0
    )
    steps = [e for e in worker.run_turn(1, "Total?") if isinstance(e, StepRecord)]
    assert "`r['d_x_rate'] = r['d'] * r['rate']`" in steps[0].observation, steps[0].observation


def test_a_subset_made_for_an_earlier_question_is_found_when_reused() -> None:
    from stateguard.worker.scope import ScopeLog

    log = ScopeLog()
    log.record(4, "online = orders[orders['channel'] == 'Online']\nx = online['m'].sum()")
    found = log.carried(5, "t = online['m'].sum()", "What is the total margin of 2024?")
    assert [(c.name, c.turn, c.selections) for c in found] == [
        ("online", 4, ["orders['channel'] == 'Online'"])
    ]
    # near misses: the question asks for that subset; the same turn; a recomputed name
    assert log.carried(5, "online['m'].sum()", "And the Online margin per unit?") == []
    assert log.carried(4, "online['m'].sum()", "What is the total?") == []
    log.record(5, "online = orders.copy()")
    assert log.carried(6, "online['m'].sum()", "What is the total?") == []


@pytest.mark.kernel
def test_a_subset_carried_into_another_question_is_told_and_resampled(
    tracked: TrackedSession,
) -> None:
    setup = (
        "import pandas as pd\n"
        "t = pd.DataFrame({'channel': ['Online', 'Retail'], 'm': [1.0, 2.0]})\n"
        "online = t[t['channel'] == 'Online']\nprint(online['m'].sum())"
    )
    worker = Worker(
        ScriptedModel(
            [
                code(setup),
                "<answer>1.0</answer>",
                code("print(online['m'].sum() * 2)"),
                code("print(t['m'].sum() * 2)"),  # greedy after the note: passes its probe
                "<answer>6.0</answer>",
            ]
        ),
        GuardedSession(tracked, manager=NullSupervisor()),
        retry_samples=1,
    )
    assert list(worker.run_turn(1, "What is the Online margin?"))[-1].answer == "1.0"
    events = list(worker.run_turn(2, "What is twice the total margin?"))
    steps = [e for e in events if isinstance(e, StepRecord)]
    assert (
        "`online` was made in turn 1 by selecting t['channel'] == 'Online'" in steps[0].observation
    )
    assert "whole data (t)" in steps[0].observation
    assert events[-1].answer == "6.0"


def test_rows_selected_inline_as_for_an_earlier_question_are_found() -> None:
    from stateguard.worker.scope import ScopeLog

    log = ScopeLog()
    log.record(4, "orders.loc[orders['channel'] == 'Online', 'm'].sum()")
    cell = "orders.loc[orders['channel'] == 'Online', 'm'].sum() * 2"
    found = log.carried_filters(5, cell, "What is the total margin of 2024?")
    assert [(c.selection, c.turn) for c in found] == [("orders['channel'] == 'Online'", 4)]
    # near misses: the question names the value; the same turn only; another value;
    # no selection at all
    assert log.carried_filters(5, cell, "And the Online margin, doubled?") == []
    assert log.carried_filters(4, cell, "What is the total?") == []
    assert log.carried_filters(5, "orders[orders['channel'] == 'Retail'].m.sum()", "Total?") == []
    assert log.carried_filters(5, "orders['m'].sum()", "What is the total?") == []


@pytest.mark.kernel
def test_an_inline_selection_carried_into_another_question_is_told(
    tracked: TrackedSession,
) -> None:
    setup = (
        "import pandas as pd\n"
        "t = pd.DataFrame({'channel': ['Online', 'Retail'], 'm': [1.0, 2.0]})\n"
        "t.loc[t['channel'] == 'Online', 'm'].sum()"
    )
    worker = Worker(
        ScriptedModel(
            [
                code(setup),
                "<answer>1.0</answer>",
                code("t.loc[t['channel'] == 'Online', 'm'].sum() * 2"),
                code("t['m'].sum() * 2"),
                "<answer>6.0</answer>",
            ]
        ),
        GuardedSession(tracked, manager=NullSupervisor()),
        retry_samples=0,
    )
    first = [
        e for e in worker.run_turn(1, "What is the Online margin?") if isinstance(e, StepRecord)
    ]
    assert "as cells of turn" not in first[0].observation
    events = list(worker.run_turn(2, "What is twice the total margin?"))
    steps = [e for e in events if isinstance(e, StepRecord)]
    assert (
        "keeps only the rows where `t['channel'] == 'Online'`, as cells of turn 1 did"
        in steps[0].observation
    ), steps[0].observation
    assert "all the rows of `t`" in steps[0].observation
    assert "as cells of turn" not in steps[1].observation
    assert events[-1].answer == "6.0"


def test_a_subset_bound_before_a_cell_failed_is_remembered() -> None:
    from stateguard.worker.scope import ScopeLog

    log = ScopeLog()
    code_ = "online = orders[orders['channel'] == 'Online']\nboom = 1 / 0\nlater = online"
    log.record(4, code_, made={"online"})  # lineage: only `online` was bound
    assert [c.name for c in log.carried(5, "online.sum()", "Total of 2024?")] == ["online"]
    assert log.carried(5, "later.sum()", "Total of 2024?") == []


@pytest.mark.kernel
def test_a_key_looked_up_in_a_computed_value_says_what_that_value_is(
    tracked: TrackedSession,
) -> None:
    frame = "t = pd.DataFrame({'region': ['N', 'S', 'N'], 'margin': [1.0, 2.0, 3.0]})"
    replies = [
        code(f"import pandas as pd\n{frame}\nt['region'].groupby(t['region']).sum()['margin']"),
        code("t['margin'].sum()"),  # near miss: a key looked up in a name says nothing more
        code("t['margn']"),
        "<answer>6.0</answer>",
    ]
    worker = Worker(
        ScriptedModel(replies), GuardedSession(tracked, manager=NullSupervisor()), retry_samples=0
    )
    steps = [e for e in worker.run_turn(1, "Total margin?") if isinstance(e, StepRecord)]
    note = steps[0].observation
    assert (
        "'margin' is looked up in `t['region'].groupby(t['region']).sum()`, a value this line"
        " computes" in note
    ), note
    assert "Series shape=(2,)" in note and "indexed by region: N, S" in note
    assert "looked up in" not in steps[2].observation


@pytest.mark.kernel
def test_a_loaded_table_read_again_without_the_columns_added_to_it_is_a_doubt(
    tracked: TrackedSession,
) -> None:
    from stateguard.worker.doubts import read_into

    assert read_into("t = pd.read_csv('data/t.csv')\nu = t\nv = pd.read_json(p)") == ["t", "v"]
    setup = LOADED_T
    replies = [
        code("t['c'] = t['a'] * 2\nprint(t['c'].sum())"),
        code("t = pd.read_csv('data/t.csv')\nprint(len(t))"),
        # near misses: read again with nothing added since; read under another name
        code("t = pd.read_csv('data/t.csv')\nprint(t['a'].sum())"),
        code("fresh = pd.read_csv('data/t.csv')\nprint(fresh['b'].sum())"),
        "<answer>60</answer>",
    ]
    worker = Worker(
        ScriptedModel(replies),
        GuardedSession(tracked, manager=NullSupervisor()),
        retry_samples=0,
        setup=setup,
    )
    steps = [e for e in worker.run_turn(1, "Total of b?") if isinstance(e, StepRecord)]
    steps = [s for s in steps if not s.setup]
    note = steps[1].observation
    assert "read `t` again from data/t.csv" in note and "columns 'c'" in note, note
    assert [("read `t` again" in s.observation) for s in steps[:4]] == [False, True, False, False]


@pytest.mark.kernel
def test_totals_multiplied_together_are_a_doubt_whose_note_builds_the_per_row_product(
    tracked: TrackedSession,
) -> None:
    replies = [
        code(
            "import pandas as pd\n"
            "s = pd.DataFrame({'weight_kg': [1.0, 2.0, 3.0], 'rate': [0.5, 0.5, 2.0]})\n"
            "total_weight = s['weight_kg'].sum()\n"
            "print(total_weight * s['rate'].sum())"
        ),
        code("print((s['weight_kg'] * s['rate']).sum())"),
        "<answer>7.5</answer>",
    ]
    question = "What is the total of weight_kg × rate over all rows?"
    _, _, steps = play(tracked, replies, question, retry_samples=0)
    first = steps[0].observation
    assert "18.0" in first  # the cell ran and showed its (wrong) product of totals
    assert "multiplies the total of `s['weight_kg']` by the total of `s['rate']`" in first
    assert "`(s['weight_kg'] * s['rate']).sum()`" in first
    assert "multiplies the total" not in steps[1].observation
    assert steps[-1].answer == "7.5"


class _RollsBack(NullSupervisor):
    """A manager stand-in that, after the cell ``after``, takes back the column ``c`` an
    earlier cell added to the loaded table ``t`` with ``undo`` (as a rollback to a
    checkpoint, or a heavy repair deleting ``t``, would) and says so."""

    def __init__(self, tracked: TrackedSession, after: str, undo: str) -> None:
        self.tracked = tracked
        self.after = after
        self.undo = undo

    def after_step(self, view: Step) -> list[Hint]:
        if view.code != self.after:
            return []
        self.tracked.kernel.execute(self.undo)
        return [Hint(kind="repair", text="Rolled back to S0: `t` is as it was before.")]


@pytest.mark.kernel
@pytest.mark.parametrize("undo", ["t.drop(columns=['c'], inplace=True)", "del t"])
def test_after_a_rollback_reading_a_loaded_table_again_loses_nothing(
    tracked: TrackedSession, undo: str
) -> None:
    setup = LOADED_T
    replies = [
        code("t['c'] = t['a'] * 2\nprint(t['c'].sum())"),
        code("print(t['b'].max())"),
        code("t = pd.read_csv('data/t.csv')\nprint(len(t))"),
        "<answer>3</answer>",
    ]
    worker = Worker(
        ScriptedModel(replies),
        GuardedSession(
            tracked, manager=_RollsBack(tracked, after="print(t['b'].max())", undo=undo)
        ),
        retry_samples=0,
        setup=setup,
    )
    steps = [e for e in worker.run_turn(1, "How many rows?") if isinstance(e, StepRecord)]
    steps = [s for s in steps if not s.setup]
    assert "read `t` again" not in steps[2].observation, steps[2].observation


@pytest.mark.kernel
def test_the_first_element_of_an_unordered_series_shown_is_a_doubt(
    tracked: TrackedSession,
) -> None:
    replies = [
        code(
            "import pandas as pd\n"
            "s = pd.DataFrame({'gp': [1.0, 4.0, 2.0, 3.0], 'billed': [10.0, 10.0, 20.0, 20.0]})\n"
            "pct = s['gp'] / s['billed'] * 100\n"
            'print(f"pct: {pct.iloc[0]:.2f}")'
        ),
        # near misses: the same pick once the Series is in order; one reduced value
        code('top = pct.sort_values()\nprint(f"top: {top.iloc[-1]:.2f}")'),
        code('print(f"pct: {s.gp.sum() / s.billed.sum() * 100:.2f}")'),
        "<answer>16.67</answer>",
    ]
    question = "What is gp as a percentage of billed, rounded to 2 decimals?"
    _, _, steps = play(tracked, replies, question, retry_samples=0)
    first = steps[0].observation
    assert "pct: 10.00" in first  # the cell ran and showed the first row's ratio
    assert "`pct.iloc[0]` is the first of 4 values of `pct`" in first, first
    assert "`a.sum() / b.sum()`" in first
    assert ["values of `" in s.observation for s in steps[:3]] == [True, False, False]
    assert steps[-1].answer == "16.67"


@pytest.mark.kernel
def test_a_failed_cell_is_told_of_the_empty_column_it_wrote_before_failing(
    tracked: TrackedSession,
) -> None:
    replies = [
        code(
            "import pandas as pd\n"
            "s = pd.DataFrame({'month': ['01', '01', '02'], 'kg': [1.0, 2.0, 5.0]})\n"
            "s['total'] = s.groupby('month')['kg'].sum()\n"
            "print(s['total'].idxmax())"
        ),
        # near miss: a failure after a column that holds values
        code("s['double'] = s['kg'] * 2\nprint(s['double'].idxmax(skipna=False, axis=3))"),
        code("print(s.groupby('month')['kg'].sum().idxmax())"),
        "<answer>02</answer>",
    ]
    _, _, steps = play(tracked, replies, "Which month has the most kg?", retry_samples=0)
    first, second = steps[0].observation, steps[1].observation
    assert first.startswith("Error:") and "`s['total']` holds only missing values" in first, first
    assert "a grouped result (indexed by the groups) matches no row" in first
    assert second.startswith("Error:") and "holds only missing values" not in second, second


@pytest.mark.kernel
def test_an_earlier_turns_cell_run_again_showing_the_same_is_a_doubt(
    tracked: TrackedSession,
) -> None:
    cell = code("print(t['a'].sum())")
    replies = [
        cell,
        "<answer>6</answer>",
        cell,  # turn 2: the same cell, the same output
        code("t['a'] = t['a'] * 10"),
        cell,  # turn 2: the same cell after a change it reads: another output
        "<answer>60</answer>",
    ]
    worker = loaded_worker(tracked, replies)
    first = [e for e in worker.run_turn(1, "Total of a?") if isinstance(e, StepRecord)]
    second = [e for e in worker.run_turn(2, "Total of a in tens?") if isinstance(e, StepRecord)]
    ran = [s for s in first + second if s.code and not s.setup]
    notes = ["which ran in turn 1 for another question (Total of a?)" in s.observation for s in ran]
    assert notes == [False, True, False, False], [s.observation for s in ran]
    assert "This turn asks: Total of a in tens?" in ran[1].observation
    assert second[-1].answer == "60"


@pytest.mark.kernel
def test_a_column_defined_again_from_fewer_columns_in_a_later_turn_is_a_doubt(
    tracked: TrackedSession,
) -> None:
    replies = [
        code("t['c'] = t['a'] * 2 + t['b']\nprint(t['c'].sum())"),
        "<answer>72</answer>",
        code("t['c'] = t['a'] * 3\nprint(t['c'].sum())"),  # turn 2: without `b`
        code("t['c'] = t['a'] * 3 + t['b']\nprint(t['c'].sum())"),  # revised, all terms
        "<answer>78</answer>",
    ]
    worker = loaded_worker(tracked, replies)
    list(worker.run_turn(1, "Total of c?"))
    second = [e for e in worker.run_turn(2, "Total of c, now 3a?") if isinstance(e, StepRecord)]
    ran = [s for s in second if s.code]
    told = "writes `t['c']` again from fewer columns than it was defined from"
    assert [told in s.observation for s in ran] == [True, False], [s.observation for s in ran]
    assert "it no longer uses `t['b']`" in ran[0].observation
    assert second[-1].answer == "78"


@pytest.mark.kernel
def test_a_missing_column_the_task_defines_is_told_with_its_definition(
    tracked: TrackedSession,
) -> None:
    replies = [
        code("print(t['base_charge'].sum())"),
        code("print(t['zzz'].sum())"),  # near miss: a name the task does not define
        code("t['base_charge'] = t['a'] * t['b']\nprint(t['base_charge'].sum())"),
        "<answer>140</answer>",
    ]
    worker = loaded_worker(tracked, replies)
    context = "The base charge of a row is a × b. Rows are shipments."
    events = worker.run_turn(1, "What is the total base charge?", context)
    ran = [e for e in events if isinstance(e, StepRecord) and e.code and not e.setup]
    told = "'base_charge' is a quantity the task defines: «The base charge of a row is a × b.»"
    assert [told in s.observation for s in ran] == [True, False, False], ran[0].observation
    assert ran[-1].observation.startswith("Output:\n140")


@pytest.mark.kernel
def test_the_largest_group_total_shown_for_a_total_over_all_rows_is_a_doubt(
    tracked: TrackedSession,
) -> None:
    replies = [
        code(
            "import pandas as pd\n"
            "s = pd.DataFrame({'depot': ['A', 'A', 'B'], 'profit': [1.0, 2.0, 5.0]})\n"
            "s.groupby('depot')['profit'].sum().max()"
        ),
        # near miss: the total over all the rows
        code("s['profit'].sum()"),
        "<answer>8.00</answer>",
    ]
    question = "What is the total profit, rounded to 2 decimals?"
    _, _, steps = play(tracked, replies, question, retry_samples=0)
    first = steps[0].observation
    assert "5.0" in first  # the cell ran and showed the largest depot's total
    assert "is the largest of the figures per 'depot'" in first, first
    assert "Over all the rows it is `s['profit'].sum()`" in first
    assert ["figures per" in s.observation for s in steps[:2]] == [True, False]
    assert steps[-1].answer == "8.00"


@pytest.mark.kernel
@pytest.mark.parametrize(
    "question",
    [
        "What is the highest total profit of a depot, rounded to 2 decimals?",  # an extreme
        "What is the total profit per depot for depot B, rounded to 2 decimals?",  # per thing
        "What is the correlation of profit and weight, rounded to 2 decimals?",  # no statistic
    ],
)
def test_a_group_extreme_is_no_doubt_when_the_question_asks_for_it(
    tracked: TrackedSession, question: str
) -> None:
    replies = [
        code(
            "import pandas as pd\n"
            "s = pd.DataFrame({'depot': ['A', 'A', 'B'], 'profit': [1.0, 2.0, 5.0]})\n"
            "s.groupby('depot')['profit'].sum().max()"
        ),
        "<answer>5.00</answer>",
    ]
    _, _, steps = play(tracked, replies, question, retry_samples=0)
    assert "figures per" not in steps[0].observation, steps[0].observation
    assert steps[-1].answer == "5.00"


@pytest.mark.kernel
def test_a_day_shown_for_the_month_asked_is_a_doubt(tracked: TrackedSession) -> None:
    days = ["2025-01-03", "2025-01-04", "2025-01-05", "2025-02-11"]
    replies = [
        code(
            "import pandas as pd\n"
            f"s = pd.DataFrame({{'day': {days!r}, 'kg': [3.0, 3.0, 3.0, 5.0]}})\n"
            "s.groupby('day')['kg'].sum().idxmax()"
        ),
        # near misses: grouped by month; a month kept as its first day
        code("s.groupby(pd.to_datetime(s['day']).dt.to_period('M'))['kg'].sum().idxmax()"),
        code(
            "m = pd.DataFrame({'month': ['2025-01-01', '2025-02-01'], 'kg': [9.0, 5.0]})\n"
            "m.groupby('month')['kg'].sum().idxmax()"
        ),
        "<answer>2025-01</answer>",
    ]
    question = "Which month had the highest total weight? Answer with the month as YYYY-MM."
    _, _, steps = play(tracked, replies, question, retry_samples=0)
    first = steps[0].observation
    assert "2025-02-11" in first
    assert "this shows a day, 2025-02-11" in first, first
    assert "`s.groupby(pd.to_datetime(s['day']).dt.to_period('M'))['kg'].sum().idxmax()`" in first
    assert ["shows a day" in s.observation for s in steps[:3]] == [True, False, False]
    assert steps[-1].answer == "2025-01"


SHARE_TABLE = (
    "import pandas as pd\n"
    "s = pd.DataFrame({'gp': [1.0, 4.0, 2.0, 3.0] * 3, 'billed': [10.0, 10.0, 20.0, 40.0] * 3})\n"
)


@pytest.mark.kernel
def test_per_row_ratios_and_their_mean_shown_for_one_share_are_doubts(
    tracked: TrackedSession,
) -> None:
    replies = [
        code(SHARE_TABLE + "s['gp'] / s['billed']"),
        code("(s['gp'] / s['billed'] * 100).mean()"),
        # near miss: the ratio of the totals
        code("s['gp'].sum() / s['billed'].sum() * 100"),
        "<answer>12.50</answer>",
    ]
    question = "What is gp as a percentage of billed? Give it rounded to 2 decimals."
    _, _, steps = play(tracked, replies, question, retry_samples=0)
    assert "the question asks for one share" in steps[0].observation, steps[0].observation
    assert "`a.sum() / b.sum()`" in steps[0].observation
    second = steps[1].observation
    assert "16.875" in second  # the cell ran and showed the mean of the ratios
    assert "`(s['gp'] / s['billed'] * 100).mean()` is the mean of one ratio per row" in second
    assert "`s['gp'].sum() / s['billed'].sum() * 100`" in second, second
    assert ["ratio" in s.observation for s in steps[:3]] == [True, True, False]
    assert steps[-1].answer == "12.50"


@pytest.mark.kernel
def test_the_mean_of_ratios_is_no_doubt_where_a_mean_is_asked(tracked: TrackedSession) -> None:
    replies = [
        code(SHARE_TABLE + "(s['gp'] / s['billed'] * 100).mean()"),
        "<answer>16.88</answer>",
    ]
    question = "What is the average gp percentage of an order, rounded to 2 decimals?"
    _, _, steps = play(tracked, replies, question, retry_samples=0)
    assert "16.875" in steps[0].observation
    assert "ratio" not in steps[0].observation, steps[0].observation
    assert steps[-1].answer == "16.88"


@pytest.mark.kernel
def test_a_fraction_answered_for_a_percentage_is_held_back_once(tracked: TrackedSession) -> None:
    replies = [
        code(SHARE_TABLE + "s['gp'].sum() / s['billed'].sum()"),
        "<answer>0.1250</answer>",
        "<answer>12.50</answer>",
    ]
    question = "What is gp as a percentage of billed? Give the percentage rounded to 2 decimals."
    _, events, steps = play(tracked, replies, question, retry_samples=0)
    assert [s.problem for s in steps] == [None, "fraction_answer", None]
    note = steps[1].observation
    assert "0.1250 is the fraction your code showed (0.125)" in note, note
    assert "As a percentage that is 12.50" in note
    assert events[-1].answer == "12.50"


@pytest.mark.kernel
@pytest.mark.parametrize(
    ("cell", "question"),
    [
        # the cell scaled by 100: 0.4 may be a percentage below 1
        ("s['gp'].sum() / s['billed'].sum() * 100 / 31.25", "What percentage is it?"),
        # a fraction asked
        ("s['gp'].sum() / s['billed'].sum()", "What is gp over billed? Give it as a fraction."),
    ],
)
def test_a_fraction_is_not_held_back_unless_a_percentage_is_asked_of_a_fraction(
    tracked: TrackedSession, cell: str, question: str
) -> None:
    replies = [code(SHARE_TABLE + cell), "<answer>0.125</answer>", "<answer>0.4</answer>"]
    _, events, steps = play(tracked, replies, question, retry_samples=0)
    assert all(s.problem != "fraction_answer" for s in steps), [s.problem for s in steps]
    assert events[-1].answer in ("0.125", "0.4")  # the turn ended on an answer


@pytest.mark.kernel
def test_a_sum_of_columns_filled_on_disjoint_rows_is_told_why_it_is_all_nan(
    tracked: TrackedSession,
) -> None:
    replies = [
        code(
            "import pandas as pd\n"
            "h = pd.DataFrame({'status': ['done', 'done', 'off'], 'charge': [10.0, 20.0, 5.0]})\n"
            "h['levy'] = h[h['status'] == 'done']['charge'] * 0.07\n"
            "h['fee'] = h[h['status'] == 'off']['charge'] * 0 + 1.6\n"
            "h['total'] = h['levy'] + h['fee']"
        ),
        # near miss: both columns hold a value in some row together; the sum is not empty
        code("h['both'] = h['levy'] + h['charge']\nprint(h['both'].sum())"),
        # near miss: an empty grouped result beside one partial column keeps the usual note
        code("h['by'] = h.groupby('status')['levy'].sum()\nprint(len(h))"),
        "<answer>3</answer>",
    ]
    worker = Worker(
        ScriptedModel(replies), GuardedSession(tracked, manager=NullSupervisor()), retry_samples=0
    )
    events = list(worker.run_turn(1, "What is the total of levies and fees?"))
    steps = [e for e in events if isinstance(e, StepRecord)]
    first = steps[0].observation
    assert "`h['total']` holds only missing values (NaN) in all 3 rows" in first
    assert "`h['levy']` (values in 2 of 3 rows) and `h['fee']` (values in 1 of 3 rows)" in first
    assert "fillna(0)" in first and "grouped result" not in first
    assert "missing values" not in steps[1].observation
    third = steps[2].observation
    assert "`h['by']` holds only missing values" in third and "grouped result" in third


@pytest.mark.kernel
def test_dt_used_on_dates_written_as_text_comes_with_the_line_converting_them(
    tracked: TrackedSession,
) -> None:
    """``.dt`` on a column of dates read from a CSV (text) fails; the note says the column
    holds dates as text and shows the failing line with the column converted where it is
    used, which runs and gives the months."""
    setup = (
        "import pandas as pd\n"
        "s = pd.DataFrame({'day': ['2025-01-03', '2025-02-10', '2025-02-11'],"
        " 'amt': [1.0, 2.0, 4.0], 'code': ['7', '8', '9']})\n"
        "m = s.groupby(s['day'].dt.to_period('M'))['amt'].sum()"
    )
    replies = [
        code(setup),
        code("print(s['code'].dt.year)"),
        "<answer>1</answer>",
    ]
    worker = Worker(
        ScriptedModel(replies), GuardedSession(tracked, manager=NullSupervisor()), retry_samples=0
    )
    steps = [e for e in worker.run_turn(1, "Amount per month?") if isinstance(e, StepRecord)]
    note = steps[0].observation
    line = "m = s.groupby(pd.to_datetime(s['day']).dt.to_period('M'))['amt'].sum()"
    assert "`s['day']` holds dates written as text (the first is '2025-01-03')" in note, note
    assert f"`{line}`" in note, note
    ns: dict[str, object] = {}
    exec(setup.rsplit("\n", 1)[0] + "\n" + line, ns)
    assert list(ns["m"]) == [1.0, 6.0]  # type: ignore[call-overload]
    # near miss: a text column that holds no dates gets no conversion
    assert "AttributeError" in steps[1].observation
    assert "to_datetime" not in steps[1].observation, steps[1].observation


@pytest.mark.kernel
def test_a_flat_amount_multiplied_by_a_per_row_quantity_is_a_doubt_in_a_later_turn(
    tracked: TrackedSession,
) -> None:
    """Turn 1's context states a flat charge per returned sale; at turn 2 a cell that
    multiplies the returned sales' takings by it is doubted, one that counts them is not,
    nor is one that multiplies a column of 0s and 1s."""
    context = (
        "On a paid sale the grower pays a commission of 6 % of trays × tray_price. A "
        "returned sale carries no commission; for it the grower pays a flat disposal "
        "charge of 1.20 instead."
    )
    setup = (
        "import pandas as pd\n"
        "s = pd.DataFrame({'trays': [2, 3, 1], 'tray_price': [5.0, 4.0, 10.0],"
        " 'settlement': ['paid', 'returned', 'returned']})\n"
        "print(len(s))"
    )
    replies = [
        code(setup),
        *["<answer>3</answer>"] * 2,  # asked once about the rates the context states
        code(
            "r = s[s['settlement'] == 'returned']\n"
            "print((r['trays'] * r['tray_price'] * 1.20).sum())"
        ),
        code("print(len(r) * 1.20)"),
        code(
            "s['ret'] = (s['settlement'] == 'returned').astype(int)\nprint((s['ret'] * 1.20).sum())"
        ),
        *["<answer>2.40</answer>"] * 2,  # asked once about the 6 %
    ]
    worker = Worker(
        ScriptedModel(replies), GuardedSession(tracked, manager=NullSupervisor()), retry_samples=0
    )
    list(worker.run_turn(1, "How many sales are there?", context))
    events = list(worker.run_turn(2, "What do the disposal charges come to in total?"))
    steps = [e for e in events if isinstance(e, StepRecord)]
    first = steps[0].observation
    assert "26.4" in first  # the cell ran and showed its (wrong) product
    assert "line 2 multiplies `r['trays'] * r['tray_price']` by 1.20, the task's flat" in first
    assert "disposal charge" in first and "`len(r) * 1.20`" in first, first  # its table
    # the same cell run again in a probe with 1.20 once per returned sale: 2 × 1.20
    assert "Run again with 1.20 charged once for each of those rows" in first, first
    assert first.rstrip().endswith("the same cell shows: 2.4"), first
    # near misses: a count of the rows, and a column of 0s and 1s
    assert "flat amount" not in steps[1].observation, steps[1].observation
    assert "flat amount" not in steps[2].observation, steps[2].observation
    assert events[-1].answer == "2.40"


@pytest.mark.kernel
def test_an_answer_taken_from_a_doubted_cells_output_is_held_back_once_with_the_note(
    tracked: TrackedSession,
) -> None:
    """The model answers with what a doubted cell showed: the note on that cell is told
    again once, and the same answer again goes on; an answer that a cell without a doubt
    showed is not held back."""
    context = "A returned sale costs the grower a flat disposal charge of 1.20."
    setup = (
        "import pandas as pd\n"
        "r = pd.DataFrame({'trays': [3, 1], 'tray_price': [4.0, 10.0]})\n"
        "print((r['trays'] * r['tray_price'] * 1.20).sum())"
    )
    replies = [code(setup), *["<answer>26.4</answer>"] * 2]
    worker = Worker(
        ScriptedModel(replies), GuardedSession(tracked, manager=NullSupervisor()), retry_samples=0
    )
    events = list(worker.run_turn(1, "What do the disposal charges come to?", context))
    steps = [e for e in events if isinstance(e, StepRecord)]
    held = [s for s in steps if s.problem == "doubted_answer"]
    assert len(held) == 1 and events[-1].answer == "26.4", [s.problem for s in steps]
    assert "its value is the output of step" in held[0].observation
    assert "the task's flat disposal charge" in held[0].observation, held[0].observation
    # near miss: the count of the rows times the charge, shown without a doubt
    replies = [code("print(len(r) * 1.20)"), "<answer>2.4</answer>"]
    worker = Worker(
        ScriptedModel(replies), GuardedSession(tracked, manager=NullSupervisor()), retry_samples=0
    )
    events = list(worker.run_turn(1, "What do the disposal charges come to?", context))
    assert events[-1].answer == "2.4"
    assert not [e for e in events if isinstance(e, StepRecord) and e.problem == "doubted_answer"]


@pytest.mark.kernel
def test_the_value_the_probe_showed_with_the_flat_amount_once_per_row_may_be_the_answer(
    tracked: TrackedSession,
) -> None:
    """The note on a scaled flat amount shows what the same cell shows with the amount once
    per row (computed by the session in a probe): an answer resting on it is grounded; a
    number neither an output nor that probe showed is not."""
    context = "A returned sale costs the grower a flat disposal charge of 1.20."
    setup = (
        "import pandas as pd\n"
        "r = pd.DataFrame({'trays': [3, 1], 'tray_price': [4.0, 10.0]})\n"
        "print((r['trays'] * r['tray_price'] * 1.20).sum())"
    )
    for answer, accepted in (("2.40", True), ("3.60", False)):
        replies = [code(setup), f"<answer>{answer}</answer>", code("print(len(r) * 1.20)")]
        replies.append("<answer>2.40</answer>")
        worker = Worker(
            ScriptedModel(replies),
            GuardedSession(tracked, manager=NullSupervisor()),
            retry_samples=0,
        )
        events = list(worker.run_turn(1, "What do the disposal charges come to?", context))
        steps = [e for e in events if isinstance(e, StepRecord)]
        assert steps[0].observation.rstrip().endswith("the same cell shows: 2.4")
        assert (steps[1].problem is None) is accepted, [s.problem for s in steps]
        assert events[-1].answer == "2.40"


def test_the_checks_that_doubt_a_shown_value_are_checks_of_the_worker() -> None:
    from stateguard.worker.doubts import FAILURES, VALUE_DOUBTS

    assert set(FAILURES) >= VALUE_DOUBTS
    assert "rebound_table" not in VALUE_DOUBTS  # about the session's state, not the value
