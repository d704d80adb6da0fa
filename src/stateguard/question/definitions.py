"""The quantities a task's text defines, and the sentences that say what each is.

A clause defines a quantity in one of two forms (a clause is a sentence, or a part of one
after a ``:`` or ``;`` or before ", and"):

- *X is …*, or *X are …* when what follows states an amount (a number, an operator, or a
  word that combines amounts, such as "plus" or "together": "a sale's takings are trays ×
  tray_price", not "the vets are self-employed"). X may follow an article, a possessive
  or "its", may carry an abbreviation in brackets and an "of a/an/each/every THING": "The
  net revenue of an order is units × unit_price × (1 − discount)", "its gross profit is
  the billed amount − carrier_cost", "The restaurant's payout of a delivered order is …",
  "cost of goods sold (COGS) is 42% of net revenue";
- *a X of NUMBER*: "a commission of 15 % of the basket_value", "a fee of 180 per
  credit", "a delivery fee of 1.50 + 0.60 × distance_km".

X is one to four lower-case words. A verb ("a reading costs its kwh × …") defines
nothing here, and no clause is guessed at: text in neither form defines nothing. A term
that is also a column of the data is the data's, which the caller decides.

A question asks for a defined quantity when the term's words stand together in it, up to
a plural ("the total payout by cuisine" asks for the payout).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from stateguard.question.parameters import Parameter, stated_parameters
from stateguard.question.sentences import sentences
from stateguard.question.stems import word_runs, word_spans, words

_CLAUSE_END = re.compile(r"\s*[:;]\s*|,\s+and\s+")
_TERM = r"(?!(?:a|an)\b)[a-z][a-z-]*(?:\s+(?!(?:a|an)\b)[a-z][a-z-]*){0,3}?"
"""One to four lower-case words, none of them "a" or "an": "the city a street-space charge of
…" names the charge, not the city."""
_IS_FORM = re.compile(
    rf"^(?:(?i:the|a|an|its|their|each|every)\s+)?(?:[A-Za-z-]+'s\s+)?(?P<term>{_TERM})"
    r"(?:\s*\((?P<abbr>[A-Z][A-Za-z]{1,7})\))?"
    r"(?:\s+of\s+(?:a|an|each|every|one)\s+[a-z][a-z-]*(?:\s+[a-z][a-z-]*){0,2}?)?"
    r"\s+(?P<verb>is|are)\s+\S"
)
_OF_NUMBER = re.compile(
    rf"\b(?i:a|an|the)\s+(?P<term>{_TERM})\s+of\s+(?!(?:19|20)\d\d\b)\d[\d.]*(?!\s*(?:st|nd|rd|th)\b)"
)
"""*a X of NUMBER*; a year (``of 2025``) or an ordinal is no amount."""
_AMOUNT = re.compile(r"\d|[×*+−/]|\b(?:plus|minus|times|less|together|sum|total)\b", re.I)
"""A sign that a plural clause (*X are …*) states an amount: a number, an operator, or a
word that combines amounts ("its commissions and its charges together")."""
_UNDER = re.compile(r"\bunder\s+(?:the|a|an|its|their)\s+[^,.;?]*", re.I)
"""A phrase naming what a figure is computed under, up to the next punctuation."""
_NOT_A_TERM = frozenset(
    {"it", "this", "that", "there", "what", "which", "who", "one", "each", "every", "all",
     "number", "total", "share", "sum", "value", "rest", "result", "answer", "question"}
)  # fmt: skip
"""First words that make a phrase a reference, not a quantity's name."""
_GENERIC_HEADS = frozenset({"amount", "value", "total", "figure", "number", "sum"})
"""Words too general to name a value on their own ("billed amount" is named by
"billed")."""


class Definition(BaseModel):
    """A quantity a text defines: its term (lower case, as written), the term's stemmed
    words, its abbreviation if the text gives one, and the clause that defines it."""

    model_config = ConfigDict(frozen=True)

    term: str
    words: tuple[str, ...]
    abbreviation: str | None = None
    clause: str
    statement: str = ""
    """The clause that defines it (the part of ``clause`` between ``:``, ``;`` or ", and")."""
    plural: bool = False
    """Defined with "are" ("a sale's takings are …"): asked for only as written, since
    its singular may be another word ("Taking all the sales …")."""

    @property
    def key_words(self) -> tuple[str, ...]:
        """The words of the term's head (the words before any "of"), general ones aside
        ("billed amount" → billed): a name for the value holds one of them
        ("contribution" for "contribution margin")."""
        head = [w for part in self.term.split(" of ")[0].split() for w in words(part)]
        own = tuple(w for w in head if w not in _GENERIC_HEADS)
        return own or tuple(head)


def _clauses(sentence: str) -> list[str]:
    return [c.strip() for c in _CLAUSE_END.split(sentence) if c and c.strip()]


def defined_terms(text: str) -> list[Definition]:
    """Every quantity ``text`` defines, in order, each term once (see the module)."""
    out: dict[str, Definition] = {}
    for sentence in sentences(text):
        for clause in _clauses(sentence):
            found = [m for m in [_IS_FORM.match(clause)] if m] + list(_OF_NUMBER.finditer(clause))
            for m in found:
                if m.groupdict().get("verb") == "are" and not _AMOUNT.search(clause[m.end() - 1 :]):
                    continue  # "the vets are self-employed" states no amount
                term = " ".join(m.group("term").lower().split())
                first = term.split()[0]
                if first in _NOT_A_TERM or term in out:
                    continue
                abbr = m.groupdict().get("abbr")
                out[term] = Definition(
                    term=term,
                    words=tuple(words(term)),
                    abbreviation=abbr,
                    clause=sentence,
                    statement=clause,
                    plural=m.groupdict().get("verb") == "are",
                )
    return list(out.values())


def _stands_in(text: str, ws: Sequence[str]) -> bool:
    return bool(word_runs([s[2] for s in word_spans(text)], list(ws)))


def asked_terms(question: str, definitions: Iterable[Definition]) -> list[Definition]:
    """The defined quantities whose term stands in ``question`` (its words together, up
    to a plural), or whose abbreviation does, outside a phrase "under the …" (which names
    the terms a figure is computed under, not the figure: "the total tuition under the
    revised fee" asks for the tuition); a term inside a longer asked one is left out
    ("net" when "net revenue" is asked). A plural term stands only as written."""
    question = _UNDER.sub(" ", question)
    asked = [
        d
        for d in definitions
        if (
            re.search(rf"\b{re.escape(d.term)}\b", question, re.I)
            if d.plural
            else _stands_in(question, d.words)
        )
        or (d.abbreviation is not None and re.search(rf"\b{re.escape(d.abbreviation)}\b", question))
    ]
    return [
        d
        for d in asked
        if not any(
            o is not d and len(o.words) > len(d.words) and _stands_in(o.term, d.words)
            for o in asked
        )
    ]


def sentences_about(definition: Definition, text: str) -> list[str]:
    """The sentences of ``text`` whose words hold the term's words together, in order."""
    return [s for s in sentences(text) if _stands_in(s, definition.words)]


_ADJECTIVES = frozenset({"flat", "fixed"})
"""Words before a term that say how it is charged, not what it is: "the disposal charges"
speaks of "a flat disposal charge"."""


def _named_in(text: str, definition: Definition) -> bool:
    abbr = definition.abbreviation
    if abbr is not None and re.search(rf"\b{re.escape(abbr)}\b", text):
        return True
    ws = list(definition.words)
    while len(ws) > 1 and ws[0] in _ADJECTIVES:
        ws = ws[1:]
    return _stands_in(text, ws)


def term_parameters(
    definition: Definition, definitions: Sequence[Definition]
) -> list[tuple[Definition, Parameter]]:
    """The parameters a defined quantity rests on: those its defining clause states,
    and those of the defined quantities that clause names, and of theirs (three steps
    at most), each once, with the quantity whose clause states it. "The
    receipts are its pitch commissions and its disposal charges together", after "a
    pitch commission of 6 % of the takings" and "a flat disposal charge of 1.20", rests
    on 6 % and 1.20."""
    out: dict[float, tuple[Definition, Parameter]] = {}
    seen = {definition.term}
    level = [definition]
    for _ in range(3):
        named: list[Definition] = []
        for d in level:
            text = d.statement or d.clause
            for p in stated_parameters(text):
                out.setdefault(p.value, (d, p))
            for other in definitions:
                if other.term not in seen and _named_in(text, other):
                    seen.add(other.term)
                    named.append(other)
        level = named
    return list(out.values())
