"""Answer formatting as its own step: the requested format, filled from printed results.

A small model often computes and prints the right values, then answers with other
numbers, or writes the answer format into its code. `AnswerSpec.from_question` is the
form the question asks its answer in, as `stateguard.question.answer_form` reads it: a
template in backticks with ``<placeholders>`` (``orders: <count>, net_revenue: <total
rounded to 2 decimals>``: one number, count or text field per ``label: <...>``), else one
value, a month (``YYYY-MM``), a count ("how many") or a number ("rounded to N decimals",
"percentage", "average", "total", ...). A question asking for a name ("which region")
without a template gets no spec.

`extract_answer` fills a spec from what the turn's cells printed (newest first), or
returns None; it never guesses:

* a template field is the value after its label followed by ``:`` or ``=`` (``Online:
  48515.78``, ``{'Online': 48515.78}``), or, for a number field, a line that is the label
  and one number (a printed Series: ``Online    48515.78``);
* else, when no field is labelled and the newest output has exactly one line per field
  (or is one tuple of one value per field), each line's last value;
* a single value is taken from the newest output only, and only when it holds exactly
  one number (or one ``YYYY-MM``).

Numbers are rounded to the requested decimal places; counts must be integers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from stateguard.audit.printchecks import LabelledSeries, labelled_series
from stateguard.numbers import DIGITS, EXPONENT
from stateguard.question import answer_form

Kind = Literal["number", "count", "month", "text"]

_NUMBER = rf"[-+]?{DIGITS}{EXPONENT}?"
_NUMBER_RE = re.compile(rf"(?<![\w.]){_NUMBER}(?![\w.])")
_MONTH = re.compile(r"(?<!\d)(\d{4})-(\d{2})(?!\d)")
_REPEATED_FIELDS = 3
"""The fewest number fields of a form that `AnswerSpec.repeated_value` speaks of (two
equal values, a mean and a median, are common enough)."""
_NOISE = re.compile(r"^(?:Name|dtype|Length|Freq):|dtype:", re.I)


class AnswerField(BaseModel):
    """One value the answer must hold."""

    model_config = ConfigDict(frozen=True)

    label: str
    kind: Kind
    decimals: int | None = None


class AnswerSpec(BaseModel):
    """What a question asks for (see the module docstring)."""

    model_config = ConfigDict(frozen=True)

    template: str | None = None
    fields: tuple[AnswerField, ...]

    @classmethod
    def from_question(cls, question: str) -> AnswerSpec | None:
        """The spec of ``question``, or None when it asks for nothing this module can fill."""
        form = answer_form(question)
        if form is None:
            return None
        fields = tuple(
            AnswerField(label=f.label, kind=f.kind, decimals=f.decimals) for f in form.fields
        )
        return cls(template=form.template, fields=fields)

    @property
    def one_number(self) -> AnswerField | None:
        """The field, when the question asks for one number or count and writes no form of
        several fields; None otherwise."""
        one = self.template is None and len(self.fields) == 1
        return self.fields[0] if one and self.fields[0].kind in ("number", "count") else None

    def missing_labels(self, answer: str) -> list[str]:
        """Labels of the template's fields that `answer` does not hold (case and the
        spelling of separators aside); none when there is no template of two or more
        fields, where any single value may stand alone."""
        if self.template is None or len(self.fields) < 2:
            return []
        text = _label_key(answer)
        return [f.label for f in self.fields if _label_key(f.label) not in text]

    def unformed(self, answer: str) -> AnswerField | None:
        """The one field asked for, when the question writes its form out and ``answer``
        holds no value of that form: a month asked as ``YYYY-MM`` and the answer writes none
        (``June 2024``), or a number asked "rounded to N decimals" and the answer holds no
        number. None otherwise (a template's fields are `missing_labels`' work)."""
        if self.template is not None or len(self.fields) != 1:
            return None
        field = self.fields[0]
        if field.kind == "month" and not _MONTH.search(answer):
            return field
        if field.kind == "number" and field.decimals is not None:
            return None if _NUMBER_RE.search(answer) else field
        return None

    def unlabelled(self, answer: str) -> str:
        """``answer`` without the labels of the form's fields (``refunded: 147`` → ``147``):
        a label the question's form writes is no value the answer names, even when it is a
        value of the data (``rental_state`` holds ``refunded``). As given without a form."""
        if self.template is None:
            return answer
        for f in self.fields:
            if label := _label_pattern(f.label):
                answer = re.sub(rf"(?<!\w)['\"]?{label}['\"]?\s*[:=]", " ", answer, flags=re.I)
        return answer

    def repeated_value(self, answer: str) -> str | None:
        """The one number ``answer`` gives for every number field of a form of three or
        more (``Economy: 3.43, Standard: 3.43, Express: 3.43``): parts of a breakdown that
        are all equal are one value repeated (a total, an earlier turn's result) far more
        often than a fact. None when a field is unlabelled or two values differ."""
        if self.template is None:
            return None
        numbers = [f for f in self.fields if f.kind in ("number", "count")]
        if len(numbers) < _REPEATED_FIELDS:
            return None
        values = {_labelled(f, answer) for f in numbers}
        return None if None in values or len(values) != 1 else values.pop()

    def text_values(self, answer: str) -> list[str]:
        """The values ``answer`` gives, by label, for the template's text fields (a name:
        ``region: North``); none without a template."""
        if self.template is None:
            return []
        return [
            v for f in self.fields if f.kind == "text" and (v := _labelled(f, answer)) is not None
        ]

    def misprinted(self, stdout: str) -> list[LabelledSeries]:
        """Series printed after a label (`stateguard.audit.printchecks`) where this spec asks
        for a single value: after one of its number fields' labels, or after any label when
        it asks for one value. A table asked for, or printed under another label, is what
        it is."""
        if all(f.kind == "text" for f in self.fields):
            return []
        found = labelled_series(stdout)
        if len(self.fields) == 1:
            return found
        labels = {_label_key(f.label) for f in self.fields if f.kind != "text"}
        return [s for s in found if _label_key(s.label) in labels]


def _label_key(label: str) -> str:
    return re.sub(r"[\W_]+", " ", label).strip().lower()


def _format_number(token: str, field: AnswerField) -> str | None:
    try:
        value = float(token.replace(",", ""))
    except ValueError:
        return None
    if field.kind == "count":
        return str(int(value)) if value.is_integer() else None
    if field.decimals is not None:
        return f"{value:.{field.decimals}f}"
    return token.replace(",", "")


def _label_pattern(label: str) -> str:
    """A pattern for ``label`` written with spaces or underscores between its words ("" for
    a label of no words)."""
    return r"[\s_]*".join(re.escape(w) for w in re.split(r"[\s_]+", label) if w)


def _labelled(field: AnswerField, text: str) -> str | None:
    label = _label_pattern(field.label)
    if not label:
        return None
    value = _NUMBER if field.kind != "text" else r"[A-Za-z][\w\- ]*?"
    # the value ends its field: a separator or the end of the line follows (not more values,
    # as in ``total: 0    33137.10`` where a printed Series follows the label)
    # (or, for a number, a unit word: ``orders: 1200 rows x 10 columns``)
    end = r"(?![\w.])" if field.kind != "text" else ""
    end += r"['\"]?(?=[ \t]*(?:[,;})\]]|$)"
    end += r"|[ \t]+[A-Za-z])" if field.kind != "text" else ")"
    pattern = rf"(?<!\w)['\"]?{label}['\"]?\s*[:=]\s*['\"]?({value}){end}"
    found = re.findall(pattern, text, flags=re.I | re.M)
    if field.kind != "text" and not found:
        # a printed Series: the label, spaces, one number, alone on its line
        found = re.findall(rf"(?im)^\s*{label}\s+({_NUMBER})\s*$", text)
    if len(set(found)) != 1:
        return None
    raw = found[0].strip()
    return raw if field.kind == "text" else _format_number(raw, field)


def _lines(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not _NOISE.match(ln.strip())]


def _single(field: AnswerField, text: str) -> str | None:
    if field.kind == "month":
        months = {f"{y}-{m}" for y, m in _MONTH.findall(text)}
        return months.pop() if len(months) == 1 else None
    numbers = _NUMBER_RE.findall(text)
    if len(numbers) != 1:
        return None
    return _format_number(numbers[0], field)


def _last_value(field: AnswerField, line: str) -> str | None:
    if field.kind == "text":
        m = re.search(r"([A-Za-z][\w\-]*)['\"]?\s*$", line)
        return m.group(1) if m else None
    m = re.search(rf"({_NUMBER})\s*$", line)
    return _format_number(m.group(1), field) if m else None


def _held(value: str, values: Sequence[str | None]) -> bool:
    """Whether ``value`` is, as a number, one of ``values``."""
    try:
        number = float(value)
    except ValueError:
        return value in values
    for v in values:
        try:
            if v is not None and float(v) == number:
                return True
        except ValueError:
            continue
    return False


def extract_answer(
    spec: AnswerSpec, outputs: Sequence[str], *, positional: bool = True, given: str | None = None
) -> str | None:
    """The answer in the requested format from ``outputs`` (newest first), or None.

    ``positional=False`` fills a template from labelled values only. ``given``: the
    model's own answer, one bare value without the template's labels; it fills the one
    field the outputs leave open, when exactly one is open."""
    outputs = [o for o in outputs if o and o.strip()]
    if not outputs:
        return None
    if spec.template is None:
        return _single(spec.fields[0], outputs[0])
    values: list[str | None] = []
    for field in spec.fields:
        values.append(next((v for o in outputs if (v := _labelled(field, o)) is not None), None))
    if positional and all(v is None for v in values):
        lines = _lines(outputs[0])
        if len(lines) == 1 and len(spec.fields) > 1:
            # a tuple shown on one line: ('North', 35685.77)
            parts = [p.strip(" ()[]'\"") for p in lines[0].split(",")]
            lines = parts if len(parts) == len(spec.fields) else lines
        if len(lines) == len(spec.fields):
            values = [_last_value(f, ln) for f, ln in zip(spec.fields, lines, strict=True)]
    open_fields = [i for i, v in enumerate(values) if v is None]
    if given is not None and len(open_fields) == 1 and len(open_fields) < len(values):
        values[open_fields[0]] = _single(spec.fields[open_fields[0]], given)
    elif positional and len(open_fields) == 1 and len(open_fields) < len(values):
        # the labels fill every field but one, and the newest output is one bare value
        # (``np.float64(11163.77)``) no filled field holds: that field's value
        bare = _single(spec.fields[open_fields[0]], outputs[0])
        if bare is not None and len(_lines(outputs[0])) == 1 and not _held(bare, values):
            values[open_fields[0]] = bare
    if any(v is None for v in values):
        return None
    return ", ".join(f"{f.label}: {v}" for f, v in zip(spec.fields, values, strict=True))
