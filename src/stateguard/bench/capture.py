"""Kernel-side helpers of the replay worker: they run *inside* the kernel.

The host calls them through silent executions (or inside a fork probe), e.g.
``__import__('stateguard.bench.capture', fromlist=['capture']).capture(...)``, so
they never bind names in the user namespace and never fire lineage hooks.
Values cross to the host as pickle files in the kernel's working directory, as plain
data only (what `stateguard.kernel.transfer` reads):

- a value that is plain data crosses as itself;
- a tuple, list or dict of another type (a named tuple, a ``scipy.stats`` result) crosses
  as the plain container of its items, which DSEval compares the same way;
- any other value (a fitted estimator, a user object) crosses as ``{NOT_PLAIN: {"type",
  "repr", "pickle"}}``: its type name, its text, and its own pickle as opaque ``bytes``
  that the host never unpickles; what must look inside it runs in a kernel
  (`revive` turns the marker back into the object there);
- a value that cannot be pickled crosses as ``{UNPICKLABLE: repr}``, so the host can
  still compare it by its text.

Standard library, IPython and `stateguard.kernel.transfer` only (`threadpoolctl` where
installed).
"""

from __future__ import annotations

import ast
import contextlib
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from stateguard.kernel.transfer import TransferError, loads_value

UNPICKLABLE = "__unpicklable_repr__"
NOT_PLAIN = "__not_plain__"
_REPR_CHARS = 4000


def _user_ns() -> dict[str, Any]:
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:  # pragma: no cover - only reachable outside a kernel
        raise RuntimeError("stateguard.bench.capture must run inside an IPython kernel")
    return shell.user_ns


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """OpenMP and BLAS limited to one thread while a fork probe predicts.

    A probe is a fork of a kernel whose model may have been fitted with OpenMP threads
    (XGBoost, scikit-learn); in the fork those threads are gone, and a parallel region
    waiting for them never returns. With one thread no pool is used. `threadpoolctl`
    (a scikit-learn dependency) sets the limit where it is installed.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(limits=1):
        yield


def _repr(value: Any) -> str:
    try:
        text = repr(value)
    except Exception as exc:  # a user __repr__ that raises
        text = f"<{type(value).__name__}: repr failed: {type(exc).__name__}>"
    return text[:_REPR_CHARS]


def _is_plain(data: bytes) -> bool:
    """True when the host's reader (`kernel.transfer`) would read this pickle."""
    try:
        loads_value(data)
    except TransferError:
        return False
    return True


def type_name(value: Any) -> str:
    """``module.QualifiedName`` of the value's type."""
    kind = type(value)
    return f"{kind.__module__}.{kind.__qualname__}"


def portable(value: Any) -> Any:
    """What crosses to the host for ``value``: plain data only (see the module docstring)."""
    try:
        data = pickle.dumps(value)
    except Exception:
        return {UNPICKLABLE: _repr(value)}
    if _is_plain(data):
        return value
    if isinstance(value, tuple):
        return tuple(portable(v) for v in value)
    if isinstance(value, list):
        return [portable(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str | int | float | bool) for k in value):
        return {k: portable(v) for k, v in value.items()}
    return {NOT_PLAIN: {"type": type_name(value), "repr": _repr(value), "pickle": data}}


def is_marker(value: Any) -> bool:
    """True for the ``{NOT_PLAIN: ...}`` / ``{UNPICKLABLE: ...}`` stand-ins of `portable`."""
    return (
        isinstance(value, dict) and len(value) == 1 and (NOT_PLAIN in value or UNPICKLABLE in value)
    )


def revive(value: Any) -> Any:
    """Inside a kernel: `portable`'s stand-ins back to the objects they stand for
    (unpicklable ones stay their text), through tuples, lists and dicts."""
    if is_marker(value):
        return pickle.loads(value[NOT_PLAIN]["pickle"]) if NOT_PLAIN in value else value
    if isinstance(value, tuple):
        return tuple(revive(v) for v in value)
    if isinstance(value, list):
        return [revive(v) for v in value]
    if isinstance(value, dict):
        return {k: revive(v) for k, v in value.items()}
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
        with one_thread():  # a fork of a kernel whose OpenMP threads are gone
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
