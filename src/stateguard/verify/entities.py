"""A result that lists one thing twice when the question asks for one value per thing.

"What is the price of each item?", "the male percentage per occupation", "revenue for
every year": the question asks for one row per item, occupation or year. A shown table
or Series whose column or index for that thing repeats a value gives two answers for
one item (a filter that was dropped, ``quantity != 1`` for ``== 1``, a join that fanned
out). Only the thing named right after *each*, *per* or *every* is read, and only when
the question names one such thing: "per region per year" and "each regiment and
company" expect regions and regiments to repeat. So does a result with several index
levels, or with another column of labels beside the thing's (items per gender).

A column stands for the thing when its name is the thing's word, with generic words
(``name``, ``id``…) set aside: ``item_name`` for "each item", ``order_id`` for "per
order". The shown value is read by a fork probe (`stateguard.kernel.namespace.shown_keys`).
"""

from __future__ import annotations

from collections.abc import Callable

from stateguard.audit.filterchecks import probe_json
from stateguard.kernel import ProbeResult, namespace
from stateguard.question import asked_entity, is_generic, words


def stands_for(key: str, entity: str) -> bool:
    """Whether the column or index name ``key`` names ``entity`` (generic words aside)."""
    if is_generic(key):
        return False
    own = [w for w in words(key) if not is_generic(w)]
    return own == [entity]


def repeated_entity(
    probe: Callable[..., ProbeResult], question: str, timeout: float = 20.0
) -> str | None:
    """A sentence when the last shown value repeats the question's one thing, else None."""
    entity = asked_entity(question)
    if entity is None:
        return None
    shown = probe_json(probe, namespace.call("shown_keys"), timeout)
    if not isinstance(shown, dict) or not isinstance(shown.get("repeats"), dict):
        return None
    for key, count in shown["repeats"].items():
        if isinstance(count, int) and count > 0 and stands_for(str(key), entity):
            return (
                f"the question asks for one value per {entity}, but the shown result repeats "
                f"`{key}` in {count} of its {shown.get('rows', '?')} rows"
            )
    return None
