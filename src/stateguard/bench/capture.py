"""Kernel-side helpers of the replay worker: they run *inside* the kernel.

The host calls them through silent executions (or inside a fork probe), e.g.
``__import__('stateguard.bench.capture', fromlist=['capture']).capture(...)``, so
they never bind names in the user namespace and never fire lineage hooks.
Values cross to the host as pickle files in the kernel's working directory:
a value that cannot be pickled crosses as ``{UNPICKLABLE: repr}``, so the host
can still compare it by its text.

Standard library and IPython only.
"""

from __future__ import annotations

import ast
import pickle
from pathlib import Path
from typing import Any

UNPICKLABLE = "__unpicklable_repr__"
_REPR_CHARS = 4000


def _user_ns() -> dict[str, Any]:
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:  # pragma: no cover - only reachable outside a kernel
        raise RuntimeError("stateguard.bench.capture must run inside an IPython kernel")
    return shell.user_ns


def portable(value: Any) -> Any:
    """The value itself if it pickles, else ``{UNPICKLABLE: repr(value)}``."""
    try:
        pickle.dumps(value)
    except Exception:
        try:
            text = repr(value)
        except Exception as exc:  # a user __repr__ that raises
            text = f"<{type(value).__name__}: repr failed: {type(exc).__name__}>"
        return {UNPICKLABLE: text[:_REPR_CHARS]}
    return value


def _dump(path: str, payload: dict[str, Any]) -> None:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(target.suffix + ".tmp")
    with open(tmp, "wb") as fh:
        pickle.dump(payload, fh)
    tmp.replace(target)


def _namespace(ns: dict[str, Any], names: list[str]) -> dict[str, Any]:
    return {n: portable(ns[n]) for n in names if n in ns}


def capture(path: str, count: int | None, names: list[str]) -> None:
    """Pickle the last-expression value of cell ``count`` (IPython's ``Out``) and ``names``.

    ``has_result`` is False when the cell displayed no value (IPython stores only
    non-None last-expression values in ``Out``).
    """
    ns = _user_ns()
    out = ns.get("Out") or {}
    has_result = count is not None and count in out
    _dump(
        path,
        {
            "has_result": has_result,
            "result": portable(out[count]) if has_result else None,
            "namespace": _namespace(ns, names),
        },
    )


def snapshot(path: str, names: list[str]) -> None:
    """Pickle the current values of ``names`` (those that exist and pickle)."""
    ns = _user_ns()
    saved: dict[str, Any] = {}
    for name in names:
        if name in ns:
            try:
                saved[name] = pickle.loads(pickle.dumps(ns[name]))
            except Exception:
                continue
    _dump(path, {"values": saved})


def dry_run(code: str, path: str, names: list[str], preload: dict[str, str] | None = None) -> None:
    """Run ``code`` like a cell (last expression evaluated) and pickle what it produced.

    Meant for a fork probe: the namespace it changes is a throw-away copy.
    ``preload`` maps names to ``(snapshot file, name in it)`` written as
    ``"file::name"``; those values are bound first (a stale alias, for instance).
    """
    ns = _user_ns()
    for alias, spec in (preload or {}).items():
        file, _, source = spec.rpartition("::")
        with open(file, "rb") as fh:
            ns[alias] = pickle.load(fh)["values"][source]
    result: Any = None
    error: str | None = None
    try:
        tree = ast.parse(code)
        last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        body = tree.body[:-1] if last is not None else tree.body
        exec(compile(ast.Module(body=body, type_ignores=[]), "<dry-run>", "exec"), ns)
        if last is not None:
            result = eval(compile(ast.Expression(last.value), "<dry-run>", "eval"), ns)
    except BaseException as exc:  # user code failing is a result
        error = f"{type(exc).__name__}: {exc}"
    _dump(
        path,
        {
            "has_result": result is not None,
            "result": portable(result),
            "namespace": _namespace(ns, names),
            "error": error,
        },
    )
