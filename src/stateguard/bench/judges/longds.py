"""Deterministic judge for LongDS answers (any JSON value; objects judged field by field).

It never marks a correct answer wrong: what its rules cannot read is *undecided*
(`Judgement.undecided`), for an LLM judge when one is configured, else reported as such.

Rules (each has a table test):

- Gold objects: only the fields the question requests are judged (a field is requested
  when the question names it, `stateguard.question.named_fields`); extra prediction
  fields are ignored.
  When the question names no field, every field is judged, and a prediction that omits
  some while getting the others right is undecided. Field names match exactly, else
  case- and punctuation-insensitively (``"Total Revenue"`` answers ``total_revenue``).
- A single value (non-object gold, or a one-field object) may be answered bare, as a
  one-field object, or in prose: "The total revenue is 205." is right when its only
  number(s) equal the gold, or when a label gold occurs in it once; other prose is
  undecided, never wrong.
- Numbers are exact after normalization: ``"3.50" == "3.5" == 3.5``, ``"1,234" == 1234``;
  labels (``"mean: 3.5"``), currency symbols ($ € £ ¥), percent signs and surrounding
  whitespace are dropped first. Comparison is in decimal, so ``0.1 + 0.2 != 0.3``
  exactly but is within any tolerance ≥ 1e-16.
- Tolerance: ``|pred - gold| <= tol`` (absolute), or ``<= tol * |gold|`` (relative) when
  the tolerance note mentions "relative", "percent" or "%" and not "absolute". In
  relative mode a tolerance ≥ 1 is read as a percentage (``1`` means 1 %).
- Strings compare case-insensitively with punctuation, currency and percent signs
  removed and whitespace collapsed; a leading ``label:`` on the prediction is dropped
  when the gold has no colon.
- Lists: order matters when the field name has a token rank/ranking/top/order/sorted,
  when the note says so (rank/top/order/sort), or for lists of records carrying a
  ``rank`` key; otherwise lists compare as sets. In ordered lists, items whose scores
  are equal (numeric non-rank fields of a record, or the number of a ``[label, score]``
  pair) form a tie block and may appear in any order within it (their rank fields are
  then not checked).
- Booleans accept true/false, yes/no and 1/0; ``None`` accepts null/none/n/a/"".
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Protocol

from stateguard.bench.judges.base import Judgement
from stateguard.bench.tasks import BenchTurn
from stateguard.numbers import CURRENCY, DIGITS, parse_number
from stateguard.question import field_tokens, named_fields

_LABEL = re.compile(r"^\s*[A-Za-z][\w ()/\-]{0,40}?:\s*(?=\S)")
_ORDER_TOKENS = frozenset(
    {"rank", "ranks", "ranked", "ranking", "rankings", "top", "order", "ordered", "sorted"}
)
_NOTE_ORDER = re.compile(r"\b(?:rank\w*|top|order(?:ed|ing)?|sort\w*)\b", re.IGNORECASE)
_NOTE_RELATIVE = re.compile(r"relative|percent|%", re.IGNORECASE)
_NOTE_ABSOLUTE = re.compile(r"absolute", re.IGNORECASE)
_TRUE = frozenset({"true", "yes", "y", "1"})
_FALSE = frozenset({"false", "no", "n", "0"})
_NONE = frozenset({"", "none", "null", "na", "n a", "nan"})
_FREE_TEXT_MIN_WORDS = 4


class FieldJudge(Protocol):
    """What `judge_longds` needs from an LLM judge (see `judges.llm.LLMJudge`)."""

    def judge(
        self, question: str, gold: Any, prediction: Any, field: str | None = None
    ) -> Judgement:
        """Judge one free-text field."""
        ...


@dataclass(frozen=True)
class _Ctx:
    """Comparison settings for one turn; ``field`` is the innermost field name."""

    tolerance: Decimal | None
    relative: bool
    note: str
    field: str = ""


def tolerance_is_relative(note: str | None) -> bool:
    """True when a tolerance note asks for a relative (percent) tolerance."""
    if not note or _NOTE_ABSOLUTE.search(note):
        return False
    return bool(_NOTE_RELATIVE.search(note))


def normalize_text(value: Any, strip_label: bool = True) -> str:
    """Casefold, drop a leading ``label:``, punctuation, currency and percent signs."""
    text = unicodedata.normalize("NFKC", str(value)).strip()
    if strip_label:
        text = _LABEL.sub("", text, count=1)
    text = re.sub(r"[^\w\s]|_", "", text.casefold())
    return " ".join(text.split())


def _is_rank_key(key: str) -> bool:
    return "rank" in key.lower()


def _order_matters(gold: Sequence[Any], ctx: _Ctx) -> bool:
    if field_tokens(ctx.field) & _ORDER_TOKENS or _NOTE_ORDER.search(ctx.note):
        return True
    return any(isinstance(item, Mapping) and any(_is_rank_key(k) for k in item) for item in gold)


def _numbers_equal(gold: Decimal, pred: Decimal, ctx: _Ctx) -> bool:
    if ctx.tolerance is None:
        return gold == pred
    bound = ctx.tolerance * abs(gold) if ctx.relative else ctx.tolerance
    return abs(pred - gold) <= bound


def _as_list(pred: Any) -> list[Any] | None:
    if isinstance(pred, list | tuple):
        return list(pred)
    if hasattr(pred, "tolist") and not isinstance(pred, str):
        converted = pred.tolist()
        return converted if isinstance(converted, list) else None
    if isinstance(pred, str):
        try:
            loaded = json.loads(pred)
        except (ValueError, RecursionError):  # not JSON, nested too deep, or a huge integer
            return [part.strip() for part in pred.split(",")] if pred.strip() else []
        return loaded if isinstance(loaded, list) else None
    return None


def _as_mapping(pred: Any) -> Mapping[str, Any] | None:
    if isinstance(pred, Mapping):
        return pred
    if isinstance(pred, str):
        try:
            loaded = json.loads(pred)
        except (ValueError, RecursionError):  # not JSON, nested too deep, or a huge integer
            return None
        return loaded if isinstance(loaded, Mapping) else None
    return None


def _find_key(pred: Mapping[str, Any], name: str) -> str | None:
    if name in pred:
        return name
    wanted = normalize_text(name, strip_label=False).replace(" ", "")
    for key in pred:
        if normalize_text(key, strip_label=False).replace(" ", "") == wanted:
            return key
    return None


def compare_value(gold: Any, pred: Any, ctx: _Ctx) -> tuple[bool, str]:
    """Compare one gold value with a predicted value under the module's rules."""
    if gold is None:
        ok = pred is None or normalize_text(pred) in _NONE
        return ok, "" if ok else f"expected null, got {pred!r}"
    if isinstance(gold, bool):
        if isinstance(pred, bool) or type(pred).__name__ == "bool_":
            ok = bool(pred) == gold
        else:
            text = normalize_text(pred)
            ok = text in (_TRUE if gold else _FALSE)
        return ok, "" if ok else f"expected {gold}, got {pred!r}"
    if isinstance(gold, Mapping):
        return _compare_mapping(gold, pred, ctx)
    if isinstance(gold, list | tuple):
        return _compare_list(list(gold), pred, ctx)
    gold_number = parse_number(gold)
    if gold_number is not None:
        pred_number = parse_number(pred)
        if pred_number is None:
            return False, f"expected number {gold!r}, got {pred!r}"
        ok = _numbers_equal(gold_number, pred_number, ctx)
        return ok, "" if ok else f"expected {gold!r}, got {pred!r}"
    strip = ":" not in str(gold)
    ok = normalize_text(gold, strip) == normalize_text(pred, strip)
    return ok, "" if ok else f"expected {gold!r}, got {pred!r}"


def _compare_mapping(gold: Mapping[str, Any], pred: Any, ctx: _Ctx) -> tuple[bool, str]:
    pred_map = _as_mapping(pred)
    if pred_map is None:
        return False, f"expected an object, got {type(pred).__name__}"
    for name, value in gold.items():
        key = _find_key(pred_map, name)
        if key is None:
            return False, f"missing field {name!r}"
        ok, reason = compare_value(
            value, pred_map[key], _Ctx(ctx.tolerance, ctx.relative, ctx.note, name)
        )
        if not ok:
            return False, f"{name}: {reason}"
    return True, ""


def _score_of(item: Any) -> tuple[Any, ...] | None:
    """The tie key of a ranked item, or None when the item carries no score."""
    if isinstance(item, Mapping):
        scores = [
            (k, parse_number(v))
            for k, v in item.items()
            if not _is_rank_key(k) and not isinstance(v, str)
        ]
        scores = [(k, v) for k, v in scores if v is not None]
        return tuple(sorted(scores)) if scores else None
    if isinstance(item, list | tuple) and len(item) == 2 and not isinstance(item[1], str):
        number = parse_number(item[1])
        return (number,) if number is not None else None
    return None


def _without_rank(item: Any) -> Any:
    if isinstance(item, Mapping):
        return {k: v for k, v in item.items() if not _is_rank_key(k)}
    return item


def _match_all(golds: list[Any], preds: list[Any], eq: Callable[[Any, Any], bool]) -> bool:
    """True when a one-to-one matching pairs every gold item with an equal pred item."""
    if len(golds) != len(preds):
        return False
    owner: dict[int, int] = {}  # pred index -> gold index

    def assign(g: int, seen: set[int]) -> bool:
        for p in range(len(preds)):
            if p not in seen and eq(golds[g], preds[p]):
                seen.add(p)
                if p not in owner or assign(owner[p], seen):
                    owner[p] = g
                    return True
        return False

    return all(assign(g, set()) for g in range(len(golds)))


def _dedupe(items: list[Any], eq: Callable[[Any, Any], bool]) -> list[Any]:
    kept: list[Any] = []
    for item in items:
        if not any(eq(item, k) for k in kept):
            kept.append(item)
    return kept


def _compare_list(gold: list[Any], pred: Any, ctx: _Ctx) -> tuple[bool, str]:
    pred_list = _as_list(pred)
    if pred_list is None:
        return False, f"expected a list, got {type(pred).__name__}"

    def eq(g: Any, p: Any) -> bool:
        return compare_value(g, p, ctx)[0]

    if not _order_matters(gold, ctx):
        ok = _match_all(_dedupe(gold, eq), _dedupe(pred_list, eq), eq)
        return ok, "" if ok else f"set mismatch: expected {gold!r}, got {pred_list!r}"
    if len(gold) != len(pred_list):
        return False, f"expected {len(gold)} items, got {len(pred_list)}"
    start = 0
    while start < len(gold):
        end = start + 1
        score = _score_of(gold[start])
        while score is not None and end < len(gold) and _score_of(gold[end]) == score:
            end += 1
        block_gold, block_pred = gold[start:end], pred_list[start:end]
        if end - start > 1:  # tie block: any order, rank fields free
            ok = _match_all(
                [_without_rank(g) for g in block_gold], [_without_rank(p) for p in block_pred], eq
            )
        else:
            ok = eq(block_gold[0], block_pred[0])
        if not ok:
            return (
                False,
                f"order mismatch at position {start + 1}: expected {gold!r}, got {pred_list!r}",
            )
        start = end
    return True, ""


def _is_free_text(gold: Any) -> bool:
    return (
        isinstance(gold, str)
        and parse_number(gold) is None
        and len(gold.split()) >= _FREE_TEXT_MIN_WORDS
    )


_PROSE_NUMBER = re.compile(rf"[-+]?[{re.escape(CURRENCY)}]?{DIGITS}%?")


def _is_prose(pred: Any) -> bool:
    """A sentence rather than a value: a string of several words that is not JSON."""
    return (
        isinstance(pred, str)
        and len(pred.split()) >= 2
        and _as_mapping(pred) is None
        and not pred.strip().startswith("[")
    )


def _prose_verdict(gold: Any, text: str, ctx: _Ctx) -> tuple[bool | None, str]:
    """Read a prose answer against a single gold value: True, or None (undecided).

    Accepted when the sentence states the gold unambiguously: the only number in it
    equals a numeric gold (all numbers agree), or a label gold appears in it exactly
    once. Anything else is undecided: prose can state a right answer in ways these
    rules cannot read, so it is never marked wrong here.
    """
    gold_number = parse_number(gold) if not isinstance(gold, bool) else None
    if gold_number is not None:
        numbers = [parse_number(m.group()) for m in _PROSE_NUMBER.finditer(text)]
        numbers = [n for n in numbers if n is not None]
        if numbers and all(_numbers_equal(gold_number, n, ctx) for n in numbers):
            return True, "prose answer states the gold number"
        return None, f"prose answer; numbers {[str(n) for n in numbers]} vs gold {gold!r}"
    if isinstance(gold, str) and normalize_text(gold):
        words = f" {normalize_text(text, strip_label=False)} "
        if words.count(f" {normalize_text(gold, strip_label=False)} ") == 1:
            return True, "prose answer names the gold label"
    return None, f"prose answer against gold {gold!r}"


def _verdict(
    correct: bool | None, score: float, details: dict[str, Any], excluded: bool = False
) -> Judgement:
    if correct is None:
        return Judgement(correct=False, score=0.0, excluded=True, undecided=True, details=details)
    return Judgement(correct=correct, score=score, details=details, excluded=excluded)


def _judge_value(
    gold: Any, prediction: Any, ctx: _Ctx, llm_judge: FieldJudge | None, question: str
) -> Judgement:
    """A single gold value (not an object of fields) against the prediction."""
    pred = prediction
    pred_map = _as_mapping(prediction) if not isinstance(gold, Mapping) else None
    if pred_map is not None and not isinstance(gold, list | tuple):
        if len(pred_map) != 1:
            return _verdict(None, 0.0, {"reason": "an object answers a single-value gold"})
        pred = next(iter(pred_map.values()))
    ok, reason = compare_value(gold, pred, ctx)
    if ok:
        return _verdict(True, 1.0, {"reason": ""})
    if _is_prose(pred):
        decided, why = _prose_verdict(gold, pred, ctx)
        if decided is None and llm_judge is not None and _is_free_text(gold):
            verdict = llm_judge.judge(question, gold, pred, field=ctx.field or None)
            return _verdict(
                verdict.correct,
                verdict.score,
                {"reason": "llm judge", "llm": verdict.details},
                excluded=verdict.excluded,
            )
        return _verdict(decided, 1.0 if decided else 0.0, {"reason": why})
    return _verdict(False, 0.0, {"reason": reason})


def judge_longds(
    gold: Any,
    prediction: Any,
    *,
    tolerance: float | None = None,
    tolerance_note: str | None = None,
    relative: bool | None = None,
    llm_judge: FieldJudge | None = None,
    question: str = "",
) -> Judgement:
    """Judge a predicted answer against a LongDS gold answer (any JSON value).

    A gold object is judged field by field, but only on the fields the question
    requests (`stateguard.question.named_fields`); when the question names none, every
    field is judged and a prediction that gets every field it gives right but omits some
    is *undecided* (the omitted ones may not have been asked for). A single value (a
    non-object gold, or an object of one field) may be answered by the bare value, a
    one-field object, or prose (see `_prose_verdict`). ``prediction`` may be a JSON
    string. ``relative`` overrides what the note implies. With ``llm_judge``, free-text
    string fields (≥ 4 words, not numbers) that fail the deterministic rules are re-judged
    by it; an unparseable LLM reply excludes the turn.

    The verdict is never "wrong" for an answer these rules cannot read: such a turn is
    returned with ``undecided=True`` (and ``excluded``), for an LLM judge or the report.
    ``score`` is the fraction of judged fields right.
    """
    note = tolerance_note or ""
    rel = tolerance_is_relative(note) if relative is None else relative
    tol: Decimal | None = None
    if tolerance is not None:
        tol = Decimal(repr(float(tolerance)))
        if rel and tol >= 1:
            tol = tol / 100
    if not isinstance(gold, Mapping):
        return _judge_value(gold, prediction, _Ctx(tol, rel, note), llm_judge, question)
    pred_map = _as_mapping(prediction)
    if len(gold) == 1:
        name, value = next(iter(gold.items()))
        key = None if pred_map is None else _find_key(pred_map, name)
        if key is not None or pred_map is None:
            pred = pred_map[key] if key is not None else prediction
            single = _judge_value(value, pred, _Ctx(tol, rel, note, name), llm_judge, question)
            entry = {"correct": single.correct, **single.details}
            details = {"fields": {name: entry}, **single.details}
            return single.model_copy(update={"details": details})
    if pred_map is None:
        return (
            _verdict(None, 0.0, {"error": "prediction is not an object", "fields": {}})
            if _is_prose(prediction)
            else _verdict(False, 0.0, {"error": "prediction is not an object", "fields": {}})
        )
    requested = named_fields(question, list(gold))
    judged = requested or list(gold)
    fields: dict[str, dict[str, Any]] = {}
    excluded = False
    for name in judged:
        key = _find_key(pred_map, name)
        if key is None:
            fields[name] = {"correct": False, "reason": "missing field"}
            continue
        gold_value = gold[name]
        ok, reason = compare_value(gold_value, pred_map[key], _Ctx(tol, rel, note, name))
        entry: dict[str, Any] = {"correct": ok, "reason": reason}
        if not ok and llm_judge is not None and _is_free_text(gold_value):
            verdict = llm_judge.judge(question, gold_value, pred_map[key], field=name)
            entry = {"correct": verdict.correct, "reason": "llm judge", "llm": verdict.details}
            excluded = excluded or verdict.excluded
        fields[name] = entry
    n_right = sum(1 for f in fields.values() if f["correct"])
    missing = [n for n, f in fields.items() if f["reason"] == "missing field"]
    details: dict[str, Any] = {"fields": fields, "requested": requested}
    if missing and not requested and n_right == len(fields) - len(missing):
        details["reason"] = (
            f"fields {missing} missing, and the question does not say which fields it asks for"
        )
        return _verdict(None, 0.0, details)
    return Judgement(
        correct=n_right == len(fields) and not excluded,
        score=n_right / len(fields) if fields else 0.0,
        details=details,
        excluded=excluded,
    )


def judge_longds_turn(
    turn: BenchTurn, prediction: Any, llm_judge: FieldJudge | None = None
) -> Judgement:
    """`judge_longds` with gold, tolerance and note taken from a `BenchTurn`."""
    mode = turn.meta.get("tolerance_mode")
    return judge_longds(
        turn.gold,
        prediction,
        tolerance=turn.tolerance,
        tolerance_note=turn.meta.get("tolerance_note"),
        relative=None if mode is None else mode == "relative",
        llm_judge=llm_judge,
        question=turn.question,
    )
