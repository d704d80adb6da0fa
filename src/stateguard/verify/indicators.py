"""A 0/1 mark that counts the other group than the one the question asks about.

"Discover the Male percentage per occupation": the step marks each user with
``gender_n`` and averages it. If the mark is 1 for ``'F'`` and 0 for ``'M'`` (a
function with its tests inverted, ``!=`` for ``==``), the mean is the female share,
and nothing fails. `marked_columns` reads, from the code alone, the columns a cell
writes from one other column of the same frame (a ``map``, ``apply``, comparison,
``np.where``…); `indicator_values` asks the kernel, in a copy-on-write probe, which
categories of the source each mark gives 1 and 0. The question names the group it
counts in a share or count phrase ("the Male percentage", "the share of women", "the
number of smokers"); a group the question names that the mark gives 0 while it gives
no named group 1 is a mark that counts the others.

A category is named by the word itself, up to a plural (``'female'`` ← "females"), or
as an abbreviation of one or two letters (``'M'`` ← "Male"), and only by the word that
a share or count phrase is about: "the percentage of users who are female" names no
category, so it is not judged.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict

from stateguard.audit.filterchecks import column_assignments, frame_column, probe_rows
from stateguard.kernel import ProbeResult
from stateguard.question import asked_groups, stem


class MarkedColumn(BaseModel):
    """``frame[column]`` written by ``code`` from ``frame[source]`` alone."""

    model_config = ConfigDict(frozen=True)

    frame: str
    column: str
    source: str
    code: str


class Indicator(BaseModel):
    """A 0/1 mark of ``marked.source``'s categories: those it marks 1 and those 0."""

    model_config = ConfigDict(frozen=True)

    marked: MarkedColumn
    ones: tuple[str, ...]
    zeros: tuple[str, ...]


def marked_columns(code: str) -> list[MarkedColumn]:
    """Each ``frame['c'] = <expression>`` of ``code`` whose expression reads exactly one
    other column of ``frame`` by name (attributes of other names, ``np.nan``, do not
    count; the probe keeps only columns that exist)."""
    out: list[MarkedColumn] = []
    for written, node in column_assignments(code):
        read = {fc for fc in _columns_read(node.value) if fc[0] == written[0]} - {written}
        if len(read) == 1:
            ((_, source),) = read
            out.append(
                MarkedColumn(
                    frame=written[0], column=written[1], source=source, code=ast.unparse(node)
                )
            )
    return list(dict.fromkeys(out))


def _columns_read(node: ast.AST) -> set[tuple[str, str]]:
    """``(frame, column)`` of each ``frame['c']`` an expression reads, and of each
    ``frame.c`` that is not itself called (``frame.assign(…)`` reads no column)."""
    called = {id(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)}
    return {
        fc
        for sub in ast.walk(node)
        if isinstance(sub, ast.expr)
        and id(sub) not in called
        and (fc := frame_column(sub)) is not None
    }


def indicators(
    probe: Callable[..., ProbeResult], code: str, timeout: float = 20.0
) -> list[Indicator]:
    """The columns ``code`` writes from one other column that are, now, a 0/1 mark of a
    few of its categories (one probe; none when the code writes no such column)."""
    marked = marked_columns(code)
    if not marked:
        return []
    return probe_rows(
        probe,
        "indicator_values",
        {(m.frame, m.column, m.source): m for m in marked},
        lambda m, rest: Indicator(
            marked=m, ones=tuple(str(v) for v in rest[0]), zeros=tuple(str(v) for v in rest[1])
        ),
        timeout,
    )


def names_category(word: str, category: str) -> bool:
    """Whether ``word`` of the question names ``category``: the same word up to a plural
    and case, or an abbreviation of it of one or two letters."""
    w, c = word.lower(), category.strip().lower()
    if not c or not c.isalpha():
        return False
    if stem(w) == stem(c):
        return True
    return len(c) <= 2 and len(w) > len(c) and w.startswith(c)


def inverted(question: str, found: Indicator) -> str | None:
    """A sentence when the question's group is marked 0 and no group it names is marked 1."""
    groups = asked_groups(question)
    if not groups:
        return None
    named_ones = [c for c in found.ones if any(names_category(g, c) for g in groups)]
    named_zeros = [c for c in found.zeros if any(names_category(g, c) for g in groups)]
    if named_ones or not named_zeros:
        return None
    m = found.marked
    asked = ", ".join(repr(c) for c in named_zeros)
    ones = ", ".join(repr(c) for c in found.ones) or "nothing"
    return (
        f"the question counts {asked} ({', '.join(groups)}), but `{m.frame}[{m.column!r}]` "
        f"(`{m.code[:120]}`) marks {asked} with 0 and {ones} with 1: the mark counts the "
        "other group"
    )


def inverted_marks(
    probe: Callable[..., ProbeResult], question: str, code: str, timeout: float = 20.0
) -> list[str]:
    """Each 0/1 mark ``code`` writes that counts the other group than the question's."""
    if not asked_groups(question):
        return []  # the question counts no group: spare the probe
    return [m for f in indicators(probe, code, timeout) if (m := inverted(question, f))]
