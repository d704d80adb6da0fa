"""Is a result empty or all-NaN? From the observation text, and from live values by probe."""

from __future__ import annotations

import re
from collections.abc import Sequence

from stateguard.verify.environment import Environment

_EMPTY_TEXT = (
    re.compile(r"^Empty DataFrame\b", re.M),
    re.compile(r"^Series\(\[\], ", re.M),
    re.compile(r"^Index\(\[\], ", re.M),
)
_NAN_ONLY = re.compile(r"^\s*(?:nan|NaN|<NA>|None|NaT)\s*$")
_IDENT = re.compile(r"^[A-Za-z_]\w*$")

# Runs in a fork of the kernel: reports, per name, "empty" or "all_nan" (absent: neither).
_PROBE = """
def __sg_emptiness(names, ns):
    out = {}
    for n in names:
        v = ns.get(n)
        try:
            size = getattr(v, "size", None)
            if hasattr(v, "isna") and size is not None:
                if size == 0:
                    out[n] = "empty"
                elif bool(v.isna().to_numpy().all()):
                    out[n] = "all_nan"
            elif type(v).__module__ == "numpy" and size is not None:
                import numpy as np
                if size == 0:
                    out[n] = "empty"
                elif v.dtype.kind == "f" and bool(np.isnan(v).all()):
                    out[n] = "all_nan"
            elif isinstance(v, float) and v != v:
                out[n] = "all_nan"
            elif isinstance(v, (list, dict, set, tuple)) and len(v) == 0:
                out[n] = "empty"
        except Exception:
            pass
    return out
__sg_emptiness(%r, globals())
"""


def empty_in_text(text: str) -> str | None:
    """``"empty"`` or ``"all_nan"`` when the shown result is one, else None."""
    if any(p.search(text or "") for p in _EMPTY_TEXT):
        return "empty"
    if text and _NAN_ONLY.match(text):
        return "all_nan"
    return None


def empty_values(env: Environment, names: Sequence[str], timeout: float = 30.0) -> dict[str, str]:
    """Of ``names`` (plain identifiers), those bound to an empty or all-NaN value."""
    names = sorted({n for n in names if _IDENT.match(n)})
    if not names:
        return {}
    res = env.probe(_PROBE % (names,), timeout=timeout)
    if not res.ok or not isinstance(res.value, dict):
        return {}
    return {str(k): str(v) for k, v in res.value.items() if v in ("empty", "all_nan")}
