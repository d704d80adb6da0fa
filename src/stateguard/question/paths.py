"""The file paths a question writes in its prose.

A question may name the files it reads as paths under a folder (DSEval's ``inputs/``).
Between backticks a path is written whole, spaces and all (`` `inputs/Netflix
Userbase.csv` ``: `backticked`). Bare in the prose (`bare_paths`) it ends at the first
character that is not a letter, a digit, ``_``, ``.`` or ``-``, and a sentence's full stop
after it is not part of it ("see inputs/q.data." → ``q.data``), so a bare mention of a
name with a space gives only its first piece. A name that runs into a ``{`` is a template
(``inputs/{name}.csv``), not a file.
"""

from __future__ import annotations

import re

_BACKTICKED = re.compile(r"`+([^`\n]+?)`+")
"""A span between backticks (one or more on each side), on one line."""


def backticked(question: str) -> list[str]:
    """What ``question`` writes between backticks, as written, in text order:
    `` `inputs/a b.csv` `` and ```` ``x`` ```` give ``inputs/a b.csv``, ``x``."""
    return _BACKTICKED.findall(question)


def bare_paths(question: str, folder: str) -> list[str]:
    """The names ``question`` writes after ``<folder>/`` outside backticks (see the module),
    in text order: "see inputs/q.data." with folder ``inputs`` gives ``q.data``."""
    prose = _BACKTICKED.sub(" ", question)
    mention = r"\b" + re.escape(folder) + r"/([\w.\-]+)(?![\w.\-]*\{)"
    return [m.rstrip(".") for m in re.findall(mention, prose)]


def names_file(text: str, name: str) -> bool:
    """Whether ``text`` writes the file name ``name`` (``enrolments.csv``) as a name of its
    own: alone or at the end of a path (``data/enrolments.csv``), not inside a longer name
    (``old_enrolments.csv``, ``enrolments.csv.gz``)."""
    return re.search(r"(?<![\w.\-])" + re.escape(name) + r"(?![\w\-]|\.\w)", text) is not None
