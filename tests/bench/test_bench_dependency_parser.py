"""Table tests of the LongDS dependency-comment parser."""

from __future__ import annotations

import pytest

from stateguard.bench.loaders.longds import parse_dependency_comments

CASES = [
    # (id, code, turn_id, expected)
    ("single_with_note", "# Depends on Task 3 (definition update)\nx = 1", 10, (3,)),
    ("oxford_list", "# Depends on Tasks 1, 8, and 9\ny = 2", 10, (1, 8, 9)),
    ("slash", "# Depends on Task 14/17", 20, (14, 17)),
    ("hyphen_range", "# Depends on Tasks 2-4", 10, (2, 3, 4)),
    ("en_dash_range", "# Depends on Tasks 2–4", 10, (2, 3, 4)),
    ("lowercase", "# depends on task 5", 10, (5,)),
    ("colon_and_repeat", "# Depends on: Task 2 and Task 6", 10, (2, 6)),
    ("inline_comment", "df = load()  # depends on Tasks 1 & 2", 4, (1, 2)),
    ("to_range", "# Depends on Tasks 3 to 5", 9, (3, 4, 5)),
    ("comma_repeat", "# Depends on Task 2, Task 3", 9, (2, 3)),
    ("two_comments", "# Depends on Task 1\nx = 1\n# Depends on Task 4\n", 9, (1, 4)),
    ("dedup_and_sort", "# Depends on Tasks 4, 2, 4-2", 9, (2, 3, 4)),
    ("dependency_word", "# Dependency: Task 3", 5, (3,)),
    # only earlier turns count
    ("later_dropped", "# Depends on Tasks 2, 12", 5, (2,)),
    ("self_dropped", "# Depends on Task 5 and Task 4", 5, (4,)),
    ("range_clipped", "# Depends on Tasks 3-8", 5, (3, 4)),
    ("zero_dropped", "# Depends on Task 0", 5, ()),
    # no dependency
    ("no_comment", "x = 1\ny = x + 1", 5, ()),
    ("empty", "", 5, ()),
    ("task_without_depend", "# Task 3 result, reused below\ny = 2", 5, (3,)),
    ("based_on_results_from", "# Based on results from Task 5\ny = 2", 9, (5,)),
    ("based_on_the_results_of", "# based on the results of Task 2\ny = 2", 9, (2,)),
    ("based_on_bare", "# Based on Task 4, recompute", 9, (4,)),
    ("from_task", "# reuse the frame from Task 5", 9, (5,)),
    ("double_hyphen_range", "# Tasks 2--4", 9, (2, 3, 4)),
    ("em_dash_range", "# Tasks 2—4", 9, (2, 3, 4)),
    ("bare_slash", "# uses Task 14/17 outputs", 20, (14, 17)),
    ("several_comments", "# Based on Task 1\nx = 1  # and Task 3\n# see Tasks 6-7", 7, (1, 3, 6)),
    ("depend_in_string", 'msg = "# Depends on Task 2"', 5, ()),
    ("depend_without_task", "# depends on the cleaned frame", 5, ()),
    ("number_without_task", "# keep 3 decimals, 2-4 rows", 5, ()),
    ("broken_code", 'x = "unterminated\n# Depends on Task 1', 5, (1,)),
]


@pytest.mark.parametrize(
    ("code", "turn_id", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_parse_dependency_comments(code: str, turn_id: int, expected: tuple[int, ...]) -> None:
    assert parse_dependency_comments(code, turn_id) == expected
