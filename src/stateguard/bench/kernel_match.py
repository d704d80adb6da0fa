"""Kernel side of DSEval's matcher for values the host holds only as stand-ins.

`compare_values` runs in a fork probe of a kernel: it revives the stand-ins of
`stateguard.bench.capture` (a fitted model, a ``scipy`` object, a user object) from their
own pickles, there and not on the host, and compares each pair with
`stateguard.bench.matching`, DSEval's matcher. Only verdicts and reasons go back. It needs
numpy and pandas in the kernel (every DSEval kernel has them).
"""

from __future__ import annotations

from typing import Any

from stateguard.bench.capture import _dump, one_thread, revive
from stateguard.bench.dseval_kernel import _load
from stateguard.bench.matching import LOOSE_OPTIONS, compare_objects


def compare_values(in_path: str, out_path: str) -> None:
    """DSEval's matcher over pairs of values, stand-ins revived: strict, then loose.

    Each result is ``{"match", "reason", "loose"}``; ``loose`` (the looser comparison
    DSEval gives partial credit for) is computed only when the strict one fails and the
    job asks for it.
    """
    job = _load(in_path)
    options = dict(job["options"])
    results: list[dict[str, Any]] = []
    for ref, sub in job["pairs"]:
        try:
            with one_thread():  # reviving a model fitted with OpenMP threads, in a fork
                ref, sub = revive(ref), revive(sub)
                strict = compare_objects(ref, sub, **options)
                loose = None
                if not strict.match and job.get("loose", True):
                    loose = compare_objects(ref, sub, **{**options, **LOOSE_OPTIONS}).match
            results.append({"match": strict.match, "reason": strict.reason, "loose": loose})
        except Exception as exc:
            message = f"comparison failure: {type(exc).__name__}: {exc}"
            results.append({"match": False, "reason": message, "loose": None})
    _dump(out_path, {"results": results})
