"""Table tests of reply parsing: every valid and malformed shape."""

from __future__ import annotations

import pytest

from stateguard.worker.parsing import parse_reply
from stateguard.worker.prompts import corrective_messages

FENCE = "```"

CASES = [
    # id, reply, code_ran, expected (code, answer, problem)
    ("empty", "", False, (None, None, "empty")),
    ("whitespace", "  \n\t ", True, (None, None, "empty")),
    ("no tags", "I think the answer is 6.", True, (None, None, "no_action")),
    (
        "one block",
        f"Sum it.\n{FENCE}python\ndf.a.sum()\n{FENCE}",
        False,
        ("df.a.sum()", None, None),
    ),
    ("py label", f"{FENCE}py\nx = 1\n{FENCE}", False, ("x = 1", None, None)),
    (
        "answer inside a code fence",
        f"{FENCE}python\n<answer>count: 10</answer>\n{FENCE}",
        True,
        (None, "count: 10", None),
    ),
    (
        "answer inside a code fence, nothing run yet",
        f"{FENCE}python\n<answer>10</answer>\n{FENCE}",
        False,
        (None, "10", "answer_without_code"),
    ),
    ("bare fence", f"{FENCE}\nx = 2\n{FENCE}", False, ("x = 2", None, None)),
    (
        "text block ignored",
        f"{FENCE}python\nx = 3\n{FENCE}\nExpected:\n{FENCE}text\n3\n{FENCE}",
        False,
        ("x = 3", None, None),
    ),
    (
        "two blocks",
        f"{FENCE}python\nx = 1\n{FENCE}\nthen\n{FENCE}python\ny = 2\n{FENCE}",
        False,
        ("x = 1\n\ny = 2", None, None),
    ),
    (
        "block plus unterminated",
        f"{FENCE}python\nx = 1\n{FENCE}\n{FENCE}python\ny = 2",
        False,
        ("x = 1", None, None),
    ),
    (
        "unterminated",
        f"Load.\n{FENCE}python\nimport pandas as pd\ndf = pd.re",
        False,
        (None, None, "unterminated_code"),
    ),
    ("empty block", f"{FENCE}python\n\n{FENCE}", False, (None, None, "empty_code")),
    (
        "only comments",
        f"{FENCE}python\n# t = df['x'].sum()\n  # print(t)\n{FENCE}",
        False,
        (None, None, "commented_code"),
    ),
    (
        "only comments, then an answer: the answer",
        f"{FENCE}python\n# print(t)\n{FENCE}\n<answer>6</answer>",
        True,
        (None, "6", None),
    ),
    (
        "a comment above code (near miss)",
        f"{FENCE}python\n# the total\nprint(1)\n{FENCE}",
        False,
        ("# the total\nprint(1)", None, None),
    ),
    ("answer after code ran", "Done.\n<answer>6</answer>", True, (None, "6", None)),
    ("answer without code", "<answer>6</answer>", False, (None, "6", "answer_without_code")),
    ("empty answer", "<answer>  </answer>", True, (None, "", "empty_answer")),
    ("None is parsed as an answer", "<answer>None</answer>", True, (None, "None", None)),
    ("zero is a value", "<answer>0</answer>", True, (None, "0", None)),
    ("unclosed answer", "So: <answer>42 units", True, (None, "42 units", None)),
    ("last answer wins", "<answer>1</answer> no, <answer>2</answer>", True, (None, "2", None)),
    ("case-insensitive tag", "<ANSWER>yes</Answer>", True, (None, "yes", None)),
    (
        "code and answer",
        f"{FENCE}python\nprint(6)\n{FENCE}\n<answer>6</answer>",
        False,
        ("print(6)", "6", None),
    ),
    (
        "answer tag inside code is code",
        f"{FENCE}python\nprint('<answer>x</answer>')\n{FENCE}",
        False,
        ("print('<answer>x</answer>')", None, None),
    ),
    (
        "indented block in a list",
        f"1. Load:\n    {FENCE}python\n    x = 1\n    y = 2\n    {FENCE}",
        False,
        ("x = 1\ny = 2", None, None),
    ),
    (
        "fence text inside a line does not close",
        f"{FENCE}python\ns = '{FENCE}'\n{FENCE}",
        False,
        (f"s = '{FENCE}'", None, None),
    ),
    (
        "four-backtick fence holds a three-backtick line",
        f"`{FENCE}python\nmd = '''\n{FENCE}\n'''\n`{FENCE}",
        False,
        (f"md = '''\n{FENCE}\n'''", None, None),
    ),
]


@pytest.mark.parametrize(
    ("reply", "code_ran", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_parse_reply(reply: str, code_ran: bool, expected: tuple) -> None:
    parsed = parse_reply(reply, code_ran=code_ran)
    assert (parsed.code, parsed.answer, parsed.problem) == expected
    assert parsed.action == ("invalid" if expected[2] else ("code" if expected[0] else "answer"))


def test_thought_excludes_code_and_answer() -> None:
    parsed = parse_reply(f"First I load the file.\n{FENCE}python\nx=1\n{FENCE}\nok", code_ran=False)
    assert parsed.thought == "First I load the file.\n\nok"
    parsed = parse_reply("Checked above. <answer>7</answer>", code_ran=True)
    assert parsed.thought == "Checked above."


def test_every_problem_has_a_corrective_message() -> None:
    problems = {c[3][2] for c in CASES if c[3][2] is not None}
    messages = corrective_messages()
    assert problems <= set(messages)
    assert all(messages[p].strip() for p in problems)
    assert "verify" in messages["answer_without_code"].lower()


@pytest.mark.parametrize(
    ("reply", "stated"),
    [
        (
            "answer: shipments: 900, base_charge: 11163.77\n\n## 2. What",
            "shipments: 900, base_charge: 11163.77",
        ),
        ("**Final Answer:** `42.5`", "42.5"),
        ("Final answer: Leeds", "Leeds"),
        ("The answer is in the output", None),
        ("answers: 3", None),
        ("answer:", None),
    ],
)
def test_an_answer_line_is_kept_as_stated(reply: str, stated: str | None) -> None:
    assert parse_reply(reply, code_ran=True).stated == stated


def test_an_answer_line_without_a_block_is_the_answer() -> None:
    parsed = parse_reply("answer: 42.5", code_ran=True)
    assert (parsed.answer, parsed.problem) == ("42.5", None)
    early = parse_reply("answer: 42.5", code_ran=False)
    assert (early.answer, early.problem) == ("42.5", "answer_without_code")
    # an <answer> element wins over an answer line; beside code the loop decides
    both = parse_reply("answer: 1\n<answer>2</answer>", code_ran=True)
    assert both.answer == "2"
    code = parse_reply("answer: 42.5\n```python\nx = 1\n```", code_ran=True)
    assert (code.code, code.answer, code.stated) == ("x = 1", None, "42.5")


def test_an_answer_line_beside_a_block_of_comments_only_is_the_answer() -> None:
    reply = "answer: 42.5\n```python\n# nothing left to compute\n```"
    assert (
        parse_reply(reply, code_ran=True).answer,
        parse_reply(reply, code_ran=True).problem,
    ) == (
        "42.5",
        None,
    )
    early = parse_reply(reply, code_ran=False)
    assert (early.answer, early.problem) == ("42.5", "answer_without_code")
    # no answer line: the block of comments is still one
    assert parse_reply("```python\n# done\n```", code_ran=True).problem == "commented_code"
