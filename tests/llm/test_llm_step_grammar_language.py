"""The language of the step grammar, checked without llama.cpp.

The grammar has no recursion, so each rule can be turned into a Python regular
expression by substituting the rules it names; the replies below are then matched
against the root rule as llama.cpp would constrain them.
"""

from __future__ import annotations

import re

import pytest

from stateguard.llm.local import CODE_STEP_GRAMMAR, STEP_GRAMMAR

F = "```"


def _regex(grammar: str) -> re.Pattern[str]:
    rules = dict(
        (name, body.strip())
        for name, body in re.findall(r"^(\w+)\s*::=\s*(.+)$", grammar, flags=re.M)
    )

    def expand(body: str) -> str:
        out = []
        for token in re.findall(r'"(?:\\.|[^"])*"|\[(?:\\.|[^\]])*\]|\w+|[|*?+()]', body):
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
