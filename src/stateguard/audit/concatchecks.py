"""Pure checks of one `pd.concat`: frames in, a `JoinRecord` out.

Stacking rows (axis 0) is checked for columns some inputs lack (filled with
nulls, or dropped with ``join='inner'``); pairing side by side (axis 1) for index
labels that do not line up and for default indexes paired by position while a
shared column disagrees. Inputs are only read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from stateguard.audit.diagnostics import JoinDiagnostic, JoinRecord
from stateguard.audit.joinchecks import (
    MAX_EXAMPLES,
    Named,
    disagreeing_pairing,
    examples_of,
    label,
    quote,
)


def check_concat(
    objs: Sequence[Named], result: Any, *, axis: int = 0, join: str = "outer"
) -> JoinRecord:
    """Check one `pd.concat` of frames (Series inputs only count rows)."""
    frames = [o for o in objs if isinstance(o.frame, pd.DataFrame)]
    base: dict[str, Any] = {
        "operation": "concat",
        "how": join,
        "axis": axis,
        "inputs": tuple(o.ref() for o in objs),
        "output_rows": len(result),
    }
    if axis in (1, "columns"):
        found = _concat_columns(frames, join)
        return JoinRecord(**{**base, "axis": 1}, diagnostics=tuple(found))
    found = []
    if len(frames) >= 2:
        all_cols: list[Any] = []
        for f in frames:
            all_cols.extend(c for c in f.frame.columns if c not in all_cols)
        missing = {str(c): [f for f in frames if c not in set(f.frame.columns)] for c in all_cols}
        missing = {c: fs for c, fs in missing.items() if fs}
        if missing and join == "outer":
            parts = [
                f"`{c}` is missing from {', '.join(label(f) for f in fs)} "
                f"({sum(len(f.frame) for f in fs)} rows)"
                for c, fs in list(missing.items())[:MAX_EXAMPLES]
            ]
            rows = sum(len(f.frame) for fs in missing.values() for f in fs)
            found.append(
                JoinDiagnostic(
                    kind="union_fills_nulls",
                    severity="warning",
                    rows=rows,
                    columns=tuple(missing),
                    message=(
                        f"concat of {', '.join(label(f) for f in frames)} filled missing "
                        f"columns with nulls: {'; '.join(parts)}"
                    ),
                )
            )
        elif missing:
            found.append(
                JoinDiagnostic(
                    kind="union_drops_columns",
                    severity="warning",
                    columns=tuple(missing),
                    message=(
                        f"concat(join='inner') of {', '.join(label(f) for f in frames)} "
                        f"dropped columns not present in every input: {quote(list(missing))}"
                    ),
                )
            )
    return JoinRecord(**base, diagnostics=tuple(found))


def _concat_columns(frames: Sequence[Named], join: str) -> list[JoinDiagnostic]:
    if len(frames) < 2:
        return []
    first = frames[0]
    found: list[JoinDiagnostic] = []
    for other in frames[1:]:
        found += disagreeing_pairing(
            first, other, first.frame, other.frame, "concatenated side by side (axis=1)"
        )
        a, b = first.frame.index, other.frame.index
        if a.equals(b):
            continue
        only_a = a.difference(b, sort=False)
        only_b = b.difference(a, sort=False)
        if not len(only_a) and not len(only_b):
            continue
        effect = "dropped" if join == "inner" else "filled with nulls"
        found.append(
            JoinDiagnostic(
                kind="index_misaligned",
                severity="warning",
                side="both",
                rows=len(only_a) + len(only_b),
                keys=examples_of(list(only_a) + list(only_b)),
                message=(
                    f"concat(axis=1) aligns rows by index: {len(only_a)} index label(s) of "
                    f"{label(first)} are not in {label(other)} and {len(only_b)} of "
                    f"{label(other)} are not in {label(first)}; those rows were {effect}"
                ),
            )
        )
    return found
