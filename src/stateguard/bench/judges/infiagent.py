"""InfiAgent-DABench closed-form judge.

A response states each sub-answer as ``@name[value]``. A sub-answer is right when its
stripped value equals the gold string or both parse as floats within 1e-6; a question
is right when every gold sub-answer is. Parsing uses the benchmark's own pattern
(non-greedy up to the first ``]``), which is also how the gold labels were extracted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from stateguard.bench.judges.base import Judgement

_HEAD = re.compile(r"@(\w+)\[")
FLOAT_TOLERANCE = 1e-6


def parse_infiagent_answer(text: str) -> dict[str, str]:
    r"""``{name: value}`` for every ``@name[value]`` in ``text``; a repeated name keeps the last.

    The same matches as ``re.findall(r"@(\w+)\[(.*?)\]", text, re.DOTALL)``, in linear
    time: that pattern rescans to the end from every ``@x[`` that no ``]`` follows.
    """
    out: dict[str, str] = {}
    text, pos = text or "", 0
    while (head := _HEAD.search(text, pos)) is not None:
        close = text.find("]", head.end())
        if close < 0:  # no later head can close either
            break
        out[head.group(1)] = text[head.end() : close]
        pos = close + 1
    return out


def sub_answer_equal(predicted: str, gold: str) -> bool:
    """String equality after stripping, else both floats within `FLOAT_TOLERANCE`."""
    if predicted.strip() == gold.strip():
        return True
    try:
        return abs(float(predicted) - float(gold)) <= FLOAT_TOLERANCE
    except ValueError:
        return False


def judge_infiagent(gold: Mapping[str, str], response: str) -> Judgement:
    """Judge a free-text response against the gold ``{name: value}`` sub-answers.

    ``score`` is the fraction of gold sub-answers right; ``details["sub_answers"]``
    maps each gold name to ``{"predicted", "gold", "correct"}``.
    """
    predicted = parse_infiagent_answer(response)
    subs = {
        name: {
            "predicted": predicted.get(name),
            "gold": value,
            "correct": name in predicted and sub_answer_equal(predicted[name], value),
        }
        for name, value in gold.items()
    }
    n_right = sum(1 for s in subs.values() if s["correct"])
    return Judgement(
        correct=bool(subs) and n_right == len(subs),
        score=n_right / len(subs) if subs else 0.0,
        details={"sub_answers": subs},
    )
