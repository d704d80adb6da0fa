"""DSEval's matcher, re-exported where the judges import it (see `stateguard.bench.matching`,
which lives outside this package so that a kernel can import it without the judges)."""

from stateguard.bench.matching import (
    BOOL_OPTIONS,
    FLOAT_OPTIONS,
    LOOSE_OPTIONS,
    MATCH_OPTIONS,
    MatchResult,
    compare_objects,
    strip_container,
)

__all__ = [
    "BOOL_OPTIONS",
    "FLOAT_OPTIONS",
    "LOOSE_OPTIONS",
    "MATCH_OPTIONS",
    "MatchResult",
    "compare_objects",
    "strip_container",
]
