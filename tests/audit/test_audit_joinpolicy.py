"""Which join findings are alarms: what the code and the question state decide row loss,
never keys."""

from __future__ import annotations

import pandas as pd
import pytest

from stateguard.audit.joinguard import JoinGuard
from stateguard.audit.joinpolicy import alarms, is_alarm

SALES = pd.DataFrame({"year": [2018, 2019, 2020], "v": [1, 2, 3]})
TARGETS = pd.DataFrame({"year": [2018, 2020], "t": [1, 2]})


def _records(call: str) -> list:
    ns = {"pd": pd, "sales": SALES, "targets": TARGETS}
    g = JoinGuard(None, user_ns=ns)
    g.install()
    try:
        exec(call, ns)
    finally:
        g.uninstall()
    return g.records


def test_default_inner_merge_that_drops_rows_is_an_alarm() -> None:
    (rec,) = _records("m = sales.merge(targets, on='year')")
    assert rec.how_stated is False
    assert [d.kind for d in alarms(rec)] == ["dropped_rows"]


@pytest.mark.parametrize("how", ["inner", "left"])
def test_a_how_the_code_states_makes_row_findings_notes(how: str) -> None:
    (rec,) = _records(f"m = sales.merge(targets, on='year', how={how!r})")
    assert rec.how_stated is True and rec.diagnostics  # still reported...
    assert alarms(rec) == ()  # ...as a note


def test_key_findings_stay_alarms_when_how_is_stated() -> None:
    lookup = "pd.DataFrame({'year': [*range(2000, 2020), 2018], 't': range(21)})"
    (rec,) = _records(f"m = sales.merge({lookup}, on='year', how='inner')")
    kinds = {d.kind: is_alarm(rec, d) for d in rec.diagnostics}
    assert kinds["near_unique_key"] is True and kinds["dropped_rows"] is False


def test_cross_product_is_an_alarm_and_a_one_row_broadcast_is_nothing() -> None:
    (rec,) = _records("m = sales.merge(targets, how='cross')")
    assert [d.kind for d in alarms(rec)] == ["cross_product"]
    (one,) = _records("m = sales.merge(targets.head(1), how='cross')")
    assert one.diagnostics == ()


def test_concat_findings_are_notes() -> None:
    (rec,) = _records("c = pd.concat([sales, targets.rename(columns={'t': 'w'})])")
    assert rec.diagnostics and alarms(rec) == ()


@pytest.mark.parametrize(
    ("call", "asked", "alarm"),
    [
        ("m = sales.merge(targets, on='year')", "all", True),
        ("m = sales.merge(targets, on='year', how='inner')", "all", True),
        ("m = sales.merge(targets, on='year')", "unstated", False),
        ("m = sales.merge(targets, on='year')", "matching", False),
        ("m = sales.merge(targets, on='year', how='inner')", "matching", False),
    ],
)
def test_the_question_decides_rows_an_inner_join_drops(call: str, asked: str, alarm: bool) -> None:
    (rec,) = _records(call)
    (d,) = rec.diagnostics
    assert d.kind == "dropped_rows" and is_alarm(rec, d, asked) is alarm  # type: ignore[arg-type]


def test_the_question_never_excuses_a_key_finding() -> None:
    (rec,) = _records("m = sales.merge(targets, how='cross')")
    assert [d.kind for d in alarms(rec, "matching")] == ["cross_product"]
