"""Helpers that act on the user namespace from inside the kernel, in one module.

The host never sends ad-hoc snippets: it sends one call into this module (built by
`call`), and the function prints its JSON result on stdout. Standard library only;
the kernel imports this module on first use.

* `delete` — remove names; prints the names that existed.
* `checkpoint` — pickle the values of names into a file; prints the names saved
  (values that cannot be pickled are skipped).
* `restore` — rebind names from a checkpoint file; run it as a *tracked* cell so
  lineage records the new bindings.
* `describe` — type and shape of names (what the error-context note shows); run it
  in a probe so the namespace is untouched.
"""

from __future__ import annotations

import json
import os
import pickle
from collections.abc import Sequence
from typing import Any

_MODULE = "stateguard.kernel.namespace"


def call(function: str, *args: Any) -> str:
    """The one-line cell that runs ``function(*args)`` of this module in the kernel."""
    rendered = ", ".join(repr(a) for a in args)
    return f"__import__({_MODULE!r}, fromlist=[{function!r}]).{function}({rendered})"


def _user_ns() -> dict[str, Any]:
    from IPython import get_ipython  # the kernel's shell, present inside any kernel

    return get_ipython().user_ns


def delete(names: Sequence[str]) -> None:
    """Remove ``names``; print the list of those that existed."""
    ns = _user_ns()
    print(json.dumps([n for n in names if ns.pop(n, ns) is not ns]))


def checkpoint(path: str, names: Sequence[str]) -> None:
    """Pickle the values of ``names`` into ``path``; print the sorted names saved."""
    ns = _user_ns()
    saved: dict[str, bytes] = {}
    for name in names:
        if name in ns:
            try:
                saved[name] = pickle.dumps(ns[name])
            except Exception:
                continue
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)  # created by the kernel's user
    with open(path, "wb") as fh:
        pickle.dump(saved, fh)
    print(json.dumps(sorted(saved)))


def restore(path: str, names: Sequence[str]) -> None:
    """Rebind each of ``names`` saved in ``path`` (others stay as they are)."""
    ns = _user_ns()
    with open(path, "rb") as fh:
        saved = pickle.load(fh)
    for name, blob in saved.items():
        if name in names:
            ns[name] = pickle.loads(blob)


def _describe(value: Any) -> str:
    kind = type(value).__name__
    shape = getattr(value, "shape", None)
    if shape is not None:
        dtype = f" dtype={value.dtype}" if hasattr(value, "dtype") else ""
        return f"{kind} shape={tuple(shape)}{dtype}"
    if isinstance(value, list | tuple | dict | set):
        return f"{kind} len={len(value)}"
    return f"{kind} {repr(value)[:60]}"


def describe(names: Sequence[str]) -> None:
    """Print ``{name: "type shape/len/repr"}`` for each of ``names`` that exists."""
    ns = _user_ns()
    print(json.dumps({n: _describe(ns[n]) for n in names if n in ns}))
