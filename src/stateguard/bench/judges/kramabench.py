"""KramaBench answers, scored by their ``answer_type``.

Where these definitions come from: KramaBench's own evaluator is not published on
PyPI (``pip download kramabench`` finds nothing) and no copy of it or of the paper was
available offline, so the rules below follow the paper's published description of the
five answer types as we know it, not its code. What is our own choice says so: the
continuous score of ``numeric_approximate``, the tolerance behind the binary verdict
our metrics need, and the deterministic reading of ``string_approximate``. Numbers are
read with `stateguard.numbers`, the project's one number parser.

- ``numeric_exact``: the answer's number equals the gold number (as decimals, so
  ``3.30`` equals ``3.3``; no tolerance).
- ``numeric_approximate``: the relative absolute error ``RAE = |a - g| / |g|``
  (absolute error when ``g`` is 0). ``score = 1 / (1 + RAE)`` (our transform);
  ``correct`` when ``RAE <= APPROX_RTOL`` (ours: 1 %). A number written with ``%`` is
  also read as its fraction, and the closer reading counts.
- ``string_exact``: equal after Unicode normalization, case folding, trimming, outer
  quotes and a final full stop removed, whitespace collapsed.
- ``string_approximate``: the same normalization, then the token F1 of answer and gold
  (ours): 1 is correct, 0 is wrong, anything between is *undecided*, since words alone
  cannot tell a paraphrase from a different answer (an LLM judge decides it when one
  is configured).
- ``list_exact``: the items as a set (numbers by value, strings normalized as above);
  ``score`` is the F1 of answer items against gold items, ``correct`` when both sets
  are equal (order does not matter).

The deterministic rules never mark a correct answer wrong when they cannot tell: a
prose answer holding several different numbers, a ``string_exact`` answer that
contains the gold phrase among other words, and an unknown answer type are
*undecided*. A turn the workload gives no answer for is excluded.
"""

from __future__ import annotations

import ast
import json
import re
import unicodedata
from decimal import Decimal
from typing import Any

from stateguard.bench.judges.base import Judgement
from stateguard.numbers import parse_number, scan

ANSWER_TYPES = (
    "numeric_exact",
    "numeric_approximate",
    "string_exact",
    "string_approximate",
    "list_exact",
)
APPROX_RTOL = 0.01
"""Relative error up to which a ``numeric_approximate`` answer counts as correct (ours)."""

_QUOTES = "\"'`“”‘’"
_SPLIT = re.compile(r"\s*(?:\n|;|,(?!\d{3}\b))\s*")


def _undecided(reason: str, **details: Any) -> Judgement:
    return Judgement(
        correct=False,
        score=0.0,
        excluded=True,
        undecided=True,
        details={"reason": reason, **details},
    )


def _verdict(correct: bool, score: float, reason: str, **details: Any) -> Judgement:
    return Judgement(
        correct=correct, score=max(0.0, min(1.0, score)), details={"reason": reason, **details}
    )


def normalize_answer(value: Any) -> str:
    """NFKC, casefold, trimmed; outer quotes and a final full stop removed; one space."""
    text = unicodedata.normalize("NFKC", str(value)).casefold().strip()
    before = None
    while text != before:
        before = text
        text = text.removesuffix(".").strip()
        if len(text) >= 2 and text[0] in _QUOTES and text[-1] in _QUOTES:
            text = text[1:-1].strip()
    return " ".join(text.split())


def _literal(prediction: Any) -> Any:
    """A JSON or Python literal written as text (``[1, 2]``, ``"x"``), else the value."""
    if not isinstance(prediction, str):
        return prediction
    text = prediction.strip()
    if text[:1] in "[({\"'":
        for parse in (json.loads, ast.literal_eval):
            try:
                return parse(text)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
    return prediction


def _unwrap(value: Any) -> Any:
    while isinstance(value, list | tuple) and len(value) == 1:
        value = value[0]
    return value


def _number(prediction: Any) -> tuple[list[Decimal], bool]:
    """The candidate readings of the answer's number, and whether it is ambiguous.

    A whole value that is a number gives one reading (two with ``%``: value and
    fraction); prose gives the numbers written in it when they all agree.
    """
    value = _unwrap(_literal(prediction))
    whole = parse_number(value)
    if whole is not None:
        percent = isinstance(value, str) and value.strip().endswith("%")
        return ([whole, whole / 100] if percent else [whole]), False
    if not isinstance(value, str):
        return [], False
    found = scan(value)
    distinct = {Decimal(n.plain) for n in found}
    if len(distinct) != 1:
        return [], len(distinct) > 1
    number = found[0]
    base = Decimal(number.plain)
    return ([base, base / 100] if number.percent else [base]), False


def _gold_number(gold: Any) -> Decimal | None:
    return parse_number(_unwrap(gold))


def _numeric(gold: Any, prediction: Any, *, exact: bool) -> Judgement:
    g = _gold_number(gold)
    if g is None:
        return _undecided("the gold answer is not a number", gold=gold)
    readings, ambiguous = _number(prediction)
    if ambiguous:
        return _undecided("the answer states several different numbers", answer=prediction)
    if not readings:
        return _verdict(False, 0.0, "the answer states no number", answer=prediction)
    if exact:
        ok = any(r == g for r in readings)
        return _verdict(ok, float(ok), "equal" if ok else "not equal", read=str(readings[0]))
    errors = [abs(r - g) / abs(g) if g != 0 else abs(r) for r in readings]
    best = min(range(len(readings)), key=lambda i: errors[i])
    rae = float(errors[best])
    ok = rae <= APPROX_RTOL
    return _verdict(
        ok,
        1.0 / (1.0 + rae),
        f"relative absolute error {rae:.4g}",
        rae=rae,
        read=str(readings[best]),
    )


def _tokens(text: str) -> list[str]:
    return re.findall(r"\w+", text)


def _f1(predicted: list[Any], gold: list[Any]) -> float:
    if not predicted or not gold:
        return float(predicted == gold)
    pool = list(gold)
    hits = 0
    for item in predicted:
        if item in pool:
            pool.remove(item)
            hits += 1
    if hits == 0:
        return 0.0
    precision, recall = hits / len(predicted), hits / len(gold)
    return 2 * precision * recall / (precision + recall)


def _string(gold: Any, prediction: Any, *, exact: bool) -> Judgement:
    g = normalize_answer(_unwrap(gold))
    p = normalize_answer(_unwrap(_literal(prediction)))
    if not p:
        return _verdict(False, 0.0, "empty answer")
    if p == g:
        return _verdict(True, 1.0, "equal")
    if exact:
        if re.search(rf"(?<!\w){re.escape(g)}(?!\w)", p):
            return _undecided("the answer contains the gold phrase among other words", answer=p)
        return _verdict(False, 0.0, "not equal", answer=p, gold=g)
    f1 = _f1(_tokens(p), _tokens(g))
    if f1 == 1.0:
        return _verdict(True, 1.0, "same words")
    if f1 == 0.0:
        return _verdict(False, 0.0, "no word in common", answer=p, gold=g)
    return _undecided("partial word overlap; paraphrase needs a judge", token_f1=f1)


def _item(value: Any) -> Any:
    number = parse_number(value)
    return number if number is not None else normalize_answer(value)


def _items(prediction: Any) -> list[Any] | None:
    value = _literal(prediction)
    if isinstance(value, list | tuple | set):
        return [_item(v) for v in value]
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return []
        return [_item(part) for part in _SPLIT.split(text) if part.strip()]
    return None if value is None else [_item(value)]


def _list(gold: Any, prediction: Any) -> Judgement:
    gold_items = _items(gold if isinstance(gold, list | tuple) else [gold]) or []
    items = _items(prediction)
    if not items:
        return _verdict(False, 0.0, "the answer lists nothing")
    wanted, got = set(gold_items), set(items)
    f1 = _f1(sorted(got, key=str), sorted(wanted, key=str))
    ok = wanted == got
    missing = sorted(map(str, wanted - got))
    extra = sorted(map(str, got - wanted))
    return _verdict(ok, f1, "same items" if ok else "items differ", missing=missing, extra=extra)


def judge_kramabench(answer_type: str | None, gold: Any, prediction: Any) -> Judgement:
    """Score one answer (text or value) against the gold of its `answer_type`.

    A turn without gold (a subtask the workload gives no answer for) is excluded.
    """
    if gold is None:
        return Judgement(
            correct=False, score=0.0, excluded=True, details={"reason": "no gold answer"}
        )
    if prediction is None or (isinstance(prediction, str) and not prediction.strip()):
        return _verdict(False, 0.0, "no answer")
    if answer_type == "numeric_exact":
        return _numeric(gold, prediction, exact=True)
    if answer_type == "numeric_approximate":
        return _numeric(gold, prediction, exact=False)
    if answer_type == "string_exact":
        return _string(gold, prediction, exact=True)
    if answer_type == "string_approximate":
        return _string(gold, prediction, exact=False)
    if answer_type == "list_exact":
        return _list(gold, prediction)
    return _undecided(f"unknown answer_type {answer_type!r}; known: {', '.join(ANSWER_TYPES)}")
