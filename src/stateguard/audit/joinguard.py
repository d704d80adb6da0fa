"""The join guard: runs *inside* the kernel and watches plain pandas code.

`install_join_guard()` wraps `pd.merge`, `DataFrame.merge`, `DataFrame.join` and
`pd.concat`. Each wrapper calls the original pandas function with exactly the
arguments it was given and returns exactly its result; only afterwards, and only
for calls made directly from user code (a cell or a function defined in the
kernel's namespace), it checks the inputs and the result with
`stateguard.audit.joinchecks` and keeps a `JoinRecord`. Calls pandas makes
internally, calls from libraries, and the guard's own pandas calls are not
checked (a depth counter and a caller test ensure it).

IPython ``pre_run_cell``/``post_run_cell`` hooks delimit a cell: after it, the
records are published as private display data (`JOIN_MIME`), which
`KernelSession` separates from the user's output. In ``mode="reject"`` a call
with an error-severity finding raises `JoinRejectedError` instead of returning
(the cell fails with the diagnostic as its message); in ``mode="flag"`` (the
default) results are never changed.
"""

from __future__ import annotations

import functools
import inspect
import sys
import time
import types
import warnings
import weakref
from typing import Any, Literal

import pandas as pd

from stateguard.audit.concatchecks import check_concat
from stateguard.audit.diagnostics import JOIN_MIME, JoinCellReport, JoinRecord
from stateguard.audit.guardsetup import disarm
from stateguard.audit.joinchecks import Named, check_merge

MAX_RECORDS = 50
"""Records kept per cell; later calls are still checked (and rejected) but only counted."""

Mode = Literal["flag", "reject"]


class JoinRejectedError(ValueError):
    """Raised in reject mode by a guarded pandas call whose result is almost surely wrong."""

    def __init__(self, record: JoinRecord) -> None:
        self.record = record
        reasons = "; ".join(d.message for d in record.errors)
        super().__init__(f"join guard rejected this {record.operation}: {reasons}")


class JoinGuard:
    """Per-kernel guard state: the originals, the current cell's records, the mode."""

    def __init__(
        self,
        shell: Any,
        mode: Mode = "flag",
        *,
        use_indexers: bool = True,
        user_ns: dict[str, Any] | None = None,
    ) -> None:
        """`use_indexers=False` always hashes key values (the exact, slower path).

        Without a shell, `user_ns` is the namespace whose code counts as user code
        (and whose names label frames); with neither, every caller counts.
        """
        self.shell = shell
        self._user_ns = shell.user_ns if shell is not None else user_ns
        self.use_indexers = use_indexers
        self.mode: Mode = mode
        self.records: list[JoinRecord] = []
        self._results: list[Any] = []
        """A weak reference to the result of each record, to name it when the cell ends
        (a result the cell dropped has no name, and the guard must not keep it alive)."""
        self.truncated = 0
        self._depth = 0
        self._originals: dict[str, Any] = {}
        self._tapped: list[tuple[Any, Any]] = []
        """Join indexers pandas computed during the current guarded call."""

    # -- installation -------------------------------------------------------------

    def install(self) -> None:
        """Wrap the pandas entry points and register the cell hooks."""
        targets = {
            "pd.merge": (pd, "merge", self._merge_wrapper, "merge"),
            "pd.concat": (pd, "concat", self._concat_wrapper, "concat"),
            "DataFrame.merge": (pd.DataFrame, "merge", self._merge_wrapper, "merge"),
            "DataFrame.join": (pd.DataFrame, "join", self._merge_wrapper, "join"),
        }
        for key, (owner, attr, make, op) in targets.items():
            original = owner.__dict__[attr]
            self._originals[key] = original
            setattr(owner, attr, make(original, op))
        self._tap_join_info()
        if self.shell is not None:
            self.shell.events.register("pre_run_cell", self.pre_run_cell)
            self.shell.events.register("post_run_cell", self.post_run_cell)

    def _tap_join_info(self) -> None:
        """Keep the join indexers pandas computes, so the checks need not hash keys again.

        `_MergeOperation._get_join_info` is private pandas API: if it is absent the
        guard falls back to hashing the key values (same findings, more time).
        """
        op = getattr(pd.core.reshape.merge, "_MergeOperation", None)
        original = getattr(op, "_get_join_info", None) if op is not None else None
        if original is None:
            return
        guard = self

        @functools.wraps(original)
        def tapped(op_self: Any) -> Any:
            info = original(op_self)
            if guard._depth:
                guard._tapped.append((info[1], info[2]))
            return info

        self._originals["_MergeOperation._get_join_info"] = original
        op._get_join_info = tapped

    def uninstall(self) -> None:
        """Restore the original pandas functions and remove the hooks."""
        owners = {
            "pd": pd,
            "DataFrame": pd.DataFrame,
            "_MergeOperation": getattr(pd.core.reshape.merge, "_MergeOperation", None),
        }
        for key, original in self._originals.items():
            owner, attr = key.split(".")
            setattr(owners[owner], attr, original)
        self._originals.clear()
        if self.shell is not None:
            for event, cb in (
                ("pre_run_cell", self.pre_run_cell),
                ("post_run_cell", self.post_run_cell),
            ):
                if cb in self.shell.events.callbacks[event]:
                    self.shell.events.unregister(event, cb)

    # -- cell hooks -----------------------------------------------------------------

    def pre_run_cell(self, info: Any) -> None:
        """Forget records of calls made outside a cell (host bookkeeping)."""
        self.records = []
        self._results = []
        self.truncated = 0

    def post_run_cell(self, result: Any) -> None:
        """Publish the cell's records, if it made any guarded call."""
        if not self.records and not self.truncated:
            return
        refs = self._results + [_dead] * (len(self.records) - len(self._results))
        results = [ref() for ref in refs]
        records = [
            r.model_copy(update={"output_names": self._named(obj).names}) if obj is not None else r
            for r, obj in zip(self.records, results, strict=False)
        ]
        report = JoinCellReport(records=tuple(records), mode=self.mode, truncated=self.truncated)
        self.records = []
        self._results = []
        self.truncated = 0
        from IPython.display import publish_display_data

        publish_display_data({JOIN_MIME: report.model_dump(mode="json")})

    # -- wrappers -------------------------------------------------------------------

    def _user_frame(self, frame: types.FrameType | None) -> types.FrameType | None:
        """The caller's frame if it is user code (globals are the kernel's namespace)."""
        if frame is None:
            return None
        if self._user_ns is None:  # outside IPython, no namespace given: every caller counts
            return frame
        return frame if frame.f_globals is self._user_ns else None

    def _merge_wrapper(self, original: Any, op: str) -> Any:
        signature = inspect.signature(original)

        @functools.wraps(original)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if self._depth:
                return original(*args, **kwargs)
            caller = self._user_frame(sys._getframe(1))
            if caller is None:
                return original(*args, **kwargs)
            self._depth += 1
            self._tapped = []
            try:
                result = _call_in_place_of(caller, original, args, kwargs)
                # exactly one join computed: its indexers describe this call's rows
                tapped = self._tapped[0] if len(self._tapped) == 1 else None
                self._observe(
                    lambda: self._merge_record(signature, op, args, kwargs, result, tapped),
                    caller,
                    result,
                )
            finally:
                self._tapped = []
                self._depth -= 1
            return result

        return wrapper

    def _concat_wrapper(self, original: Any, op: str) -> Any:
        signature = inspect.signature(original)

        @functools.wraps(original)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if self._depth:
                return original(*args, **kwargs)
            caller = self._user_frame(sys._getframe(1))
            if caller is None:
                return original(*args, **kwargs)
            self._depth += 1
            try:
                # a generator argument would be consumed by concat: materialize it once
                # and hand pandas the very same objects, in the same order
                if args and isinstance(args[0], types.GeneratorType):
                    args = (list(args[0]), *args[1:])
                result = _call_in_place_of(caller, original, args, kwargs)
                self._observe(
                    lambda: self._concat_record(signature, args, kwargs, result), caller, result
                )
            finally:
                self._depth -= 1
            return result

        return wrapper

    def _observe(self, build: Any, caller: types.FrameType, result: Any = None) -> None:
        started = time.perf_counter()
        try:
            record = build()
        except Exception as exc:  # the guard must never break a call that pandas accepted
            record = None
            error = f"{type(exc).__name__}: {exc}"
        if record is None:
            return self._keep_failed(error, caller, started, result)
        record = record.model_copy(
            update={
                "line": caller.f_lineno,
                "where": "<cell>" if caller.f_code.co_name == "<module>" else caller.f_code.co_name,
                "check_seconds": time.perf_counter() - started,
            }
        )
        self._keep(record, result)
        if self.mode == "reject" and record.errors:
            raise JoinRejectedError(record)
        return None

    def _keep_failed(
        self, error: str, caller: types.FrameType, started: float, result: Any
    ) -> None:
        self._keep(
            JoinRecord(
                operation="merge",
                how="?",
                inputs=(),
                output_rows=0,
                line=caller.f_lineno,
                check_error=error,
                check_seconds=time.perf_counter() - started,
            ),
            result,
        )

    def _keep(self, record: JoinRecord, result: Any = None) -> None:
        if len(self.records) < MAX_RECORDS:
            self.records.append(record)
            self._results.append(_weak(result))
        else:
            self.truncated += 1

    def _named(self, obj: Any) -> Named:
        ns = self._user_ns if self._user_ns is not None else {}
        names = tuple(k for k, v in ns.items() if v is obj and not k.startswith("_"))
        return Named(obj, names)

    def _merge_record(
        self,
        signature: inspect.Signature,
        op: str,
        args: Any,
        kwargs: Any,
        result: Any,
        indexers: tuple[Any, Any] | None,
    ) -> JoinRecord | None:
        bound = signature.bind(*args, **kwargs)
        stated = bound.arguments.get("how") is not None
        bound.apply_defaults()
        a = bound.arguments
        left = a.get("self", a.get("left"))
        right = a.get("right", a.get("other"))
        if not isinstance(left, pd.DataFrame) or not isinstance(right, (pd.DataFrame, pd.Series)):
            return None  # DataFrame.join with a list of frames, or a Series on the left
        if op == "join":
            on = a.get("on")
            return check_merge(
                self._named(left),
                self._named(right),
                result,
                how=a.get("how") or "left",
                left_on=on,
                left_index=on is None,
                right_index=True,
                operation="join",
                indexers=indexers if self.use_indexers else None,
                how_stated=stated,
            )
        return check_merge(
            self._named(left),
            self._named(right),
            result,
            how=a.get("how") or "inner",
            on=a.get("on"),
            left_on=a.get("left_on"),
            right_on=a.get("right_on"),
            left_index=bool(a.get("left_index")),
            right_index=bool(a.get("right_index")),
            indexers=indexers if self.use_indexers else None,
            how_stated=stated,
        )

    def _concat_record(
        self, signature: inspect.Signature, args: Any, kwargs: Any, result: Any
    ) -> JoinRecord | None:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        a = bound.arguments
        objs = a.get("objs")
        if isinstance(objs, dict):
            objs = list(objs.values())
        if not isinstance(objs, (list, tuple)):
            return None
        named = [self._named(o) for o in objs if isinstance(o, (pd.DataFrame, pd.Series))]
        axis = a.get("axis", 0)
        return check_concat(
            named, result, axis=1 if axis in (1, "columns") else 0, join=a.get("join") or "outer"
        )


def _call_in_place_of(caller: types.FrameType, original: Any, args: Any, kwargs: Any) -> Any:
    """Call pandas; warnings it attributes to this wrapper are re-issued at `caller`.

    pandas points its warnings at the first frame outside pandas, which is now the
    wrapper. Re-issuing them at the user's line keeps them exactly as visible as
    without the guard (a DeprecationWarning is shown only for ``__main__`` code).
    """
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:  # type: ignore[assignment]
            warnings.simplefilter("always")
            result = original(*args, **kwargs)
    finally:
        _reissue(caught, caller)
    return result


def _reissue(caught: list[warnings.WarningMessage], caller: types.FrameType) -> None:
    for w in caught:
        if w.filename == __file__:
            warnings.warn_explicit(
                w.message,
                w.category,
                caller.f_code.co_filename,
                caller.f_lineno,
                module=caller.f_globals.get("__name__", "<unknown>"),
                registry=caller.f_globals.setdefault("__warningregistry__", {}),
                module_globals=caller.f_globals,
            )
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno or 0)


def _dead() -> None:
    return None


def _weak(obj: Any) -> Any:
    """A callable returning `obj` while it lives (None for objects without weak refs)."""
    try:
        return weakref.ref(obj)
    except TypeError:
        return _dead


_GUARD: JoinGuard | None = None


def install_join_guard(shell: Any | None = None, *, mode: Mode = "flag") -> JoinGuard:
    """Install (or re-install) the join guard in this kernel and return it.

    `mode="flag"` records and reports; `mode="reject"` also raises
    `JoinRejectedError` for error-severity findings.
    """
    global _GUARD
    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
    if _GUARD is not None:
        _GUARD.uninstall()
    _GUARD = JoinGuard(shell, mode)
    _GUARD.install()
    return _GUARD


def uninstall_join_guard() -> None:
    """Restore pandas and remove the hooks (no-op when not installed)."""
    global _GUARD
    disarm()
    if _GUARD is not None:
        _GUARD.uninstall()
        _GUARD = None


def join_guard() -> JoinGuard | None:
    """The installed guard, if any."""
    return _GUARD


def install_code(mode: Mode = "flag") -> str:
    """Python source a host runs (silently) in a kernel to install the guard.

    The guard is installed when the kernel's code first imports pandas
    (`stateguard.audit.guardsetup`), so a kernel without pandas pays nothing.
    """
    return f"__import__('stateguard.audit.guardsetup', fromlist=['install']).install({mode!r})"
