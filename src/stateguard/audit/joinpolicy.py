"""Which join-guard findings are alarms (evidence against a result) and which are notes.

Every finding is shown to the agent; only an *alarm* is concrete enough for a
manager to refuse an answer on it. The line is drawn by what the code itself
states:

- ``how`` says which unmatched rows to keep. Rows an inner merge drops are its
  documented semantics, so when the call writes ``how='inner'`` (or ``'left'``,
  ``'right'``) the loss is what was asked for: a **note** naming the rows. When the
  call states no ``how`` and pandas' default inner join drops rows, nobody asked
  for the loss: an **alarm** (`dropped_rows` without ``how_stated``). A left or
  right join never loses rows (its unmatched rows stay, with nulls shown in the
  result): `unmatched_keys` is always a note.
- Nothing the code can state makes a key right. A key unique in neither input
  (`many_to_many`), a lookup key with a stray duplicate (`near_unique_key`), keys
  of different types or formats that barely match (`key_mismatch`, `key_format`)
  and rows paired by position while a shared column disagrees
  (`positional_pairing`) are **alarms** whatever ``how`` says: they multiply or
  mis-pair rows, which silently changes every later sum, count and mean.
- A cross product of two multi-row tables (`cross_product`) is an **alarm** even
  when written as ``how='cross'``: it is how a merge "without a key" is spelled in
  pandas (a keyless ``merge`` raises), and as an analysis result it is the 5×5
  table of two top-5 lists, not a pairing. Broadcasting a one-row table is not
  reported at all (see `joinchecks`).
- `pd.concat` takes no key and no ``how``: what it does is exactly what its
  arguments say (stack, or place side by side by index), and its findings are
  guesses about intent from column names. They are **notes**.

Rows lost to an inner join are the one finding whose weight depends on what was
asked, and the question (when the caller knows it) decides them
(`stateguard.audit.joinintent`):

- a question that asks to keep unmatched rows ("merge all values…, where available")
  makes any row an inner join drops an **alarm**, ``how='inner'`` written or not;
- a question that asks for the shared rows only, or names no choice ("merge a and b
  along subject_id"), makes pandas' default a fair reading: the loss is a **note**;
- with no question, the code-only line above holds.

The policy reads only the record (operation, whether ``how`` was stated), the
finding's kind and what the question asks; it is the same for every session and
every data set.
"""

from __future__ import annotations

from stateguard.audit.diagnostics import JoinDiagnostic, JoinRecord
from stateguard.audit.joinintent import RowsAsked

KEY_ALARMS = frozenset(
    {
        "cross_product",
        "positional_pairing",
        "many_to_many",
        "near_unique_key",
        "key_mismatch",
        "key_format",
    }
)
"""Findings about the key or the pairing of a merge/join: alarms whatever `how` says."""

ROW_LOSS = frozenset({"dropped_rows", "unmatched_keys"})
"""Findings about unmatched rows: what `how` decides."""


def is_alarm(
    record: JoinRecord, diagnostic: JoinDiagnostic, asked: RowsAsked | None = None
) -> bool:
    """Whether `diagnostic` of `record` is evidence against the result (see the module).

    ``asked``: what the question asks the join to keep (`joinintent.rows_asked`); None
    when no question is known."""
    if record.operation == "concat":
        return False
    if diagnostic.kind in KEY_ALARMS:
        return True
    if diagnostic.kind == "dropped_rows":
        if asked is None:
            return record.how_stated is not True
        return asked == "all"
    return False


def alarms(record: JoinRecord, asked: RowsAsked | None = None) -> tuple[JoinDiagnostic, ...]:
    """The alarms among a record's findings, in order."""
    return tuple(d for d in record.diagnostics if is_alarm(record, d, asked))
