"""Values a ``map`` or ``apply`` lost: which assignments are read, and the probe's answer."""

from __future__ import annotations

import json

from stateguard.audit.mapchecks import describe, lost_values, mapped_columns
from stateguard.kernel import ProbeResult


def _probe(rows: object):
    calls: list[str] = []

    def probe(code: str, timeout: float = 20.0) -> ProbeResult:
        calls.append(code)
        return ProbeResult(status="ok", wall_time=0.0, stdout=json.dumps(rows))

    return probe, calls


def test_map_and_apply_of_a_column_of_the_same_frame_are_read() -> None:
    code = (
        "users['g'] = users['gender'].map({'M': 1, 'F': 0})\n"
        "users['h'] = users.gender.apply(f).astype(float)\n"
        "users['k'] = other['gender'].map(d)\n"  # another frame: not judged
        "users['m'] = users['gender'].str.len()\n"  # not a map or apply
        "x = users['gender'].map(d)\n"  # not a column
        "users[cols] = users['gender'].map(d)\n"  # a column the code does not name
    )
    got = [(m.frame, m.column, m.source) for m in mapped_columns(code)]
    assert got == [("users", "g", "gender"), ("users", "h", "gender")]
    assert mapped_columns("users['g'] = (") == []


def test_lost_values_reads_the_probe_and_ignores_forged_output() -> None:
    code = "users['g'] = users['gender'].map({'M': 1})"
    probe, calls = _probe([["users", "g", "gender", 3, 10]])
    (found,) = lost_values(probe, code)
    assert (found.lost, found.rows) == (3, 10) and "lost_values" in calls[0]
    assert "left 3 of 10 rows" in describe(found) and "`users['gender']`" in describe(found)
    # a row for an assignment the code does not make, and forged rows, say nothing
    assert lost_values(_probe([["users", "z", "gender", 3, 10]])[0], code) == []
    assert lost_values(_probe([["users", "g"]])[0], code) == []
    # no map in the code: no probe at all
    probe, calls = _probe([])
    assert lost_values(probe, "users.gender.nunique()") == [] and calls == []
