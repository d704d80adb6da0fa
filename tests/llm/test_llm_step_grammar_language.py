"""The language of the step grammar, checked without llama.cpp.

The grammar has no recursion, so each rule can be turned into a Python regular
expression by substituting the rules it names; the replies below are then matched
against the root rule as llama.cpp would constrain them.
"""

from __future__ import annotations

import re

import pytest

from stateguard.llm.local import (
    ANSWER_CHARS,
    ANSWER_STEP_GRAMMAR,
    CODE_CHARS,
    CODE_LINES,
    CODE_STEP_GRAMMAR,
    STEP_GRAMMAR,
    THOUGHT_CHARS,
    UNBOUNDED_STEP_GRAMMAR,
)

F = "```"


def _regex(grammar: str) -> re.Pattern[str]:
    rules = dict(
        (name, body.strip())
        for name, body in re.findall(r"^(\w+)\s*::=\s*(.+)$", grammar, flags=re.M)
    )

    def expand(body: str) -> str:
        out = []
        for token in re.findall(
            r'"(?:\\.|[^"])*"|\[(?:\\.|[^\]])*\]|\{\d+(?:,\d*)?\}|\w+|[|*?+()]', body
        ):
            if token.startswith('"'):
                out.append(re.escape(token[1:-1].encode().decode("unicode_escape")))
            elif token.startswith("["):
                out.append(token.replace("\\n", "\n"))
            elif token in rules:
                out.append(f"(?:{expand(rules[token])})")
            else:
                out.append(token)
        return "".join(out)

    return re.compile(expand(rules["root"]), re.S)


STEP = _regex(STEP_GRAMMAR)
CODE_ONLY = _regex(CODE_STEP_GRAMMAR)
ANSWER_ONLY = _regex(ANSWER_STEP_GRAMMAR)


@pytest.mark.parametrize(
    ("reply", "step", "code_only"),
    [
        (f"Sum it.\n{F}python\nx = df['a'].sum()\n\nprint(x)\n{F}", True, True),
        ("<answer>42.5</answer>", True, False),
        ("Done.\n<answer>region: North</answer>", True, False),
        # the block closes only on a line of its own: no fence inside a code line
        (f"Answer.\n{F}python\n<answer>1</answer>{F}\n{F}", False, False),
        (f"Go.\n{F}python\nprint(1){F}\n\nprint(2)\n{F}", False, False),
        # blank lines come one at a time, and not first
        (f"Go.\n{F}python\nx = 1\n\n\ny = 2\n{F}", False, False),
        (f"Go.\n{F}python\n\nx = 1\n{F}", False, False),
        # one block only, and nothing after it
        (f"Go.\n{F}python\nx = 1\n{F}\nmore text", False, False),
    ],
)
def test_the_grammar_accepts_one_step_and_refuses_run_on_replies(
    reply: str, step: bool, code_only: bool
) -> None:
    assert bool(STEP.fullmatch(reply)) is step
    assert bool(CODE_ONLY.fullmatch(reply)) is code_only
    # the answer-only grammar takes exactly the step grammar's answers
    is_answer = step and not code_only
    assert bool(ANSWER_ONLY.fullmatch(reply)) is is_answer


def _step(thought_lines: list[str], code_lines: list[str]) -> str:
    return "\n".join(thought_lines) + f"\n{F}python\n" + "\n".join(code_lines) + f"\n{F}"


def test_every_thought_line_is_bounded() -> None:
    assert STEP.fullmatch(_step(["t" * THOUGHT_CHARS], ["x = 1"]))
    assert not STEP.fullmatch(_step(["t" * (THOUGHT_CHARS + 1)], ["x = 1"]))
    # the runaway reply: one line of notes repeated until the token limit
    runaway = "bookings: 640, cancelled: 100 " * 40
    assert not STEP.fullmatch(f"{runaway}\n<answer>640</answer>")
    assert not STEP.fullmatch(f"<answer>{'9' * (ANSWER_CHARS + 1)}</answer>")


def test_the_number_of_lines_is_bounded() -> None:
    assert STEP.fullmatch(_step(["a", "b", "c"], ["x = 1"]))
    assert not STEP.fullmatch(_step(["a", "b", "c", "d"], ["x = 1"]))
    assert STEP.fullmatch(_step(["go"], [f"x{i} = {i}" for i in range(CODE_LINES)]))
    assert not STEP.fullmatch(_step(["go"], [f"x{i} = {i}" for i in range(CODE_LINES + 1)]))
    assert STEP.fullmatch(_step(["go"], ["x = '" + "c" * (CODE_CHARS - 6) + "'"]))
    assert not STEP.fullmatch(_step(["go"], ["x = '" + "c" * (CODE_CHARS - 5) + "'"]))


def test_the_unbounded_grammar_differs_only_in_the_bounds() -> None:
    unbounded = _regex(UNBOUNDED_STEP_GRAMMAR)
    long_thought = _step(["t" * (THOUGHT_CHARS + 1)], ["x = 1"])
    assert unbounded.fullmatch(long_thought) and not STEP.fullmatch(long_thought)
    assert unbounded.fullmatch(_step(["ok"], ["x = 1"]))


def test_a_reply_cannot_open_with_a_bracket_as_the_summary_of_an_earlier_turn_does() -> None:
    """Earlier turns reach the prompt as ``[Earlier question, turn N] …`` notes; a small
    model opened its reply with one (cut there, it was an empty step)."""
    copied = _step(["[Earlier question, turn 2] How many?"], ["x = 1"])
    assert not STEP.fullmatch(copied) and not CODE_ONLY.fullmatch(copied)
    assert not STEP.fullmatch("[Earlier question, turn 2]\n<answer>3</answer>")
    # a bracket later in the thought, or in the code, is fine
    assert STEP.fullmatch(_step(["Count them.", "[a, b] are the columns."], ["x = [1, 2]"]))
    assert STEP.fullmatch(_step(["Take the [a] column."], ["x = [1]"]))
    assert _regex(UNBOUNDED_STEP_GRAMMAR).fullmatch(copied) is None
