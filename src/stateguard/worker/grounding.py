"""Is every number of an answer one the session showed? A deterministic check.

A small model fills the answer format with numbers it never computed (often the
ones of an example). Before an answer goes to review, each number in it must
appear in something the model was shown: an observation of the session, the
question or its context. A number counts as shown when its text appears there as a
number of its own (``10`` is not written in ``10787.75``), or
when a shown number rounds to it at the answer's precision (also as a percentage
of a shown fraction). Integers below 10 are not checked (ordinals, counts of
decimals, months).

The same test keeps the model's own guesses out of what it reads again: `unclaimed`
drops, from a reply's thought before its code, each line stating a number nothing showed
("shipments: 1900, returned: 1400" written before any cell counted them). A small model
copies such a line into every later step and answer, whatever the outputs say.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from stateguard.numbers import scan, values_in

SMALL = 10
"""Integers below this are not checked: ordinals, counts of decimals, months."""


def _matches(decimals: int, value: float, shown: list[float]) -> bool:
    half = 0.5 * 10**-decimals + 1e-9
    for x in shown:
        for candidate in (x, x * 100):
            if abs(candidate - value) <= half:
                return True
    return False


def _written_in(token: str, text: str) -> bool:
    """Whether ``text`` holds ``token`` as a number of its own: ``10`` is not written in
    ``10787.75`` or ``2.10``."""
    return re.search(rf"(?<![\d.]){re.escape(token)}(?!\d|\.\d)", text) is not None


def unseen_numbers(answer: str, shown_texts: Iterable[str]) -> list[str]:
    """The numbers of ``answer`` that no shown text holds (see the module docstring)."""
    texts = list(shown_texts)
    shown: list[float] | None = None
    unseen: list[str] = []
    for n in scan(answer):
        token, plain, value = n.literal, n.plain, n.value
        if value.is_integer() and abs(value) < SMALL:
            continue
        if any(_written_in(token, t) or _written_in(plain, t) for t in texts):
            continue
        if shown is None:
            shown = [x for t in texts for x in values_in(t)]
        if not _matches(n.decimals, value, shown):
            unseen.append(token)
    return list(dict.fromkeys(unseen))


def held_by(answer: str, outputs: Iterable[str]) -> bool:
    """Whether ``outputs`` hold every number of ``answer`` (small integers too: here they
    are the answer, not ordinals) and there is at least one."""
    texts = list(outputs)
    numbers = scan(answer)
    if not numbers or unseen_numbers(answer, texts):
        return False
    shown = [x for t in texts for x in values_in(t)]
    small = [n for n in numbers if n.value.is_integer() and abs(n.value) < SMALL]
    return all(any(x == n.value for x in shown) for n in small)


_FENCE = "```"


_ECHO_CHARS = 12
"""The shortest thought line `unclaimed` takes for a copy of the last message."""


def unclaimed(reply: str, shown_texts: Iterable[str], last_message: str = "") -> str:
    """``reply`` without the lines of its thought (the text before its first code fence)
    that hold a number no shown text holds (`unseen_numbers`), or that copy a line of the
    message the reply answers (``Result:``, ``The cell created: …``: a small model copies
    the observation into its thought, then its own copies into every later one); the reply
    itself when it has no code fence or no such line."""
    head, fence, rest = reply.partition(_FENCE)
    if not fence:
        return reply
    texts = list(shown_texts)
    echoed = {line.strip() for line in last_message.splitlines()}
    lines = head.splitlines(keepends=True)
    kept = [
        line
        for line in lines
        if not unseen_numbers(line, texts)
        and not (len(line.strip()) >= _ECHO_CHARS and line.strip() in echoed)
    ]
    if len(kept) == len(lines):
        return reply
    return "".join(kept).lstrip("\n") + fence + rest
