"""Host side of DSEval's kernel-evaluated validators (``model``, ``table_test``, compare_fn).

`kernel_extras` runs `stateguard.bench.dseval_kernel` helpers in fork probes of a
session's kernel and returns what the judge reads from ``DsevalObservation.extras``;
`KernelCodeRunner` is the judge's `CodeRunner`: benchmark-supplied compare_fn code, and
any comparison of values the host holds only as stand-ins, runs in a probe, never in
this process. Values cross as pickle files in the kernel's working directory
(``.stateguard-bench/``): what the host reads is plain data only (`kernel.transfer`);
what it passes from the reference's kernel to another (inputs and labels, test cases)
it copies as the bytes that kernel wrote, unread. A file holding reference values is
removed as soon as the probe that needed it has returned, so later cells of the
session never find it.
"""

from __future__ import annotations

import pickle
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from stateguard.bench.judges.dseval import (
    INFERRED_KEY,
    DsevalObservation,
    ValueComparison,
    kernel_checks,
)
from stateguard.bench.judges.matching import MatchResult
from stateguard.bench.tasks import BenchTask, BenchTurn
from stateguard.errors import KernelError
from stateguard.kernel.transfer import TransferError, load_value
from stateguard.lineage import TrackedSession

CAPTURE_DIR = ".stateguard-bench"
_DSEVAL = "__import__('stateguard.bench.dseval_kernel', fromlist=['dseval_kernel'])"
_MATCH = "__import__('stateguard.bench.kernel_match', fromlist=['kernel_match'])"


def _load(path: Path) -> dict[str, Any]:
    try:
        value = load_value(path)  # the kernel wrote it: plain data types only
    except TransferError as exc:
        return {"error": f"cannot read what the kernel computed ({path.name}): {exc}"}
    if not isinstance(value, dict):
        return {"error": f"cannot read what the kernel computed ({path.name}): not a mapping"}
    return value


def _probe_dump(
    session: TrackedSession, call: str, path: Path, timeout: float, inputs: Sequence[Path] = ()
) -> dict[str, Any]:
    """Run a kernel-side helper in a fork probe and read the pickle it wrote; the
    ``inputs`` written for it are removed afterwards."""
    path.unlink(missing_ok=True)
    try:
        probe = session.kernel.run_probe(call, timeout=timeout)
    except KernelError as exc:  # a dead kernel: the check fails, the run goes on
        return {"error": f"kernel unavailable: {exc}"}
    finally:
        for written in inputs:
            written.unlink(missing_ok=True)
    if not path.exists():
        detail = probe.error.evalue if probe.error else probe.status
        return {"error": f"kernel evaluation failed: {detail}"}
    return _load(path)


def _ensure_dir(session: TrackedSession, folder: Path) -> None:
    """Create ``folder`` from inside the kernel (a sandboxed kernel can write only there)."""
    if not folder.is_dir() and session.kernel.is_alive():
        code = f"__import__('os').makedirs({str(folder)!r}, exist_ok=True)"
        session.kernel.execute(code, silent=True, store_history=False)


def _dump_host(path: Path, value: Any) -> None:
    with open(path, "wb") as fh:
        pickle.dump(value, fh)


def kernel_extras(
    session: TrackedSession,
    task: BenchTask,
    turn: BenchTurn,
    tag: str,
    reference: DsevalObservation | None = None,
    timeout: float = 120.0,
) -> dict[str, Any]:
    """What DSEval's ``model`` / ``table_test`` validators need, computed in the kernel.

    Without ``reference`` this is the reference side (metrics of the reference model and
    its inputs/labels; generated cases and the reference function's behaviour); with it,
    the submission side, on the reference's inputs and cases. Runs in fork probes.
    """
    if task.suite != "dseval" or not session.kernel.is_alive():
        return {}
    out: dict[str, Any] = {}
    base = session.kernel.workdir / CAPTURE_DIR
    checks = kernel_checks(turn.validator)
    if checks:
        _ensure_dir(session, base)
    for key, alias, config in checks:
        path = base / f"{tag}-{key.replace('#', '-')}.pkl"
        ref = None if reference is None else reference.extras.get(key)
        if reference is not None and (not ref or "error" in ref):
            continue  # the judge excludes the turn; nothing to compute
        written: list[Path] = []
        if alias == "model":
            ref_path = None
            if ref is not None:
                if not isinstance(ref.get("inputs_labels"), bytes):
                    out[key] = {"error": "the reference's inputs and labels were not saved"}
                    continue
                ref_path = base / f"{tag}-{key.replace('#', '-')}-ref.pkl"
                ref_path.write_bytes(ref["inputs_labels"])  # the reference kernel's bytes
                written.append(ref_path)
            call = (
                f"{_DSEVAL}.model_metrics({str(path)!r}, {config['model_name']!r}, "
                f"{config['inputs_name']!r}, {config['labels_name']!r}, "
                f"{config['metric_type']!r}, {None if ref_path is None else str(ref_path)!r})"
            )
        elif ref is None:
            call = (
                f"{_DSEVAL}.table_reference({str(path)!r}, {config['function_name']!r}, "
                f"{config['test_cases']!r}, {config['input_validator']!r})"
            )
        else:
            if not isinstance(ref.get("cases_pickle"), bytes):
                out[key] = {"error": "the reference's test cases were not saved"}
                continue
            cases_path = base / f"{tag}-{key.replace('#', '-')}-cases.pkl"
            cases_path.write_bytes(ref["cases_pickle"])  # the reference kernel's bytes
            written.append(cases_path)
            call = (
                f"{_DSEVAL}.table_submission({str(path)!r}, {config['function_name']!r}, "
                f"{str(cases_path)!r})"
            )
        out[key] = _probe_dump(session, call, path, timeout, written)
    return out


class KernelCodeRunner:
    """`CodeRunner` over a session: compare_fn code runs in a fork probe of its kernel."""

    def __init__(self, session: TrackedSession, timeout: float = 60.0) -> None:
        self.session = session
        self.timeout = timeout
        self.calls = 0

    def compare(self, code: str, pairs: Sequence[tuple[Any, Any]]) -> list[MatchResult]:
        """``compare_fn(ref, sub)`` per pair, evaluated in the kernel."""
        self.calls += 1
        base = self.session.kernel.workdir / CAPTURE_DIR
        _ensure_dir(self.session, base)
        job, out = base / f"compare-{self.calls}-in.pkl", base / f"compare-{self.calls}-out.pkl"
        _dump_host(job, {"code": code, "pairs": list(pairs)})
        call = f"{_DSEVAL}.compare_code({str(job)!r}, {str(out)!r})"
        got = _probe_dump(self.session, call, out, self.timeout, [job])
        if "results" not in got:
            return [MatchResult(match=False, reason=got.get("error", "no result"))] * len(pairs)
        return [MatchResult(match=r["match"], reason=r["reason"]) for r in got["results"]]

    def compare_values(
        self, options: Mapping[str, Any], pairs: Sequence[tuple[Any, Any]]
    ) -> list[ValueComparison]:
        """DSEval's matcher per pair, evaluated in the kernel on the revived values."""
        self.calls += 1
        base = self.session.kernel.workdir / CAPTURE_DIR
        _ensure_dir(self.session, base)
        job, out = base / f"match-{self.calls}-in.pkl", base / f"match-{self.calls}-out.pkl"
        _dump_host(job, {"options": dict(options), "pairs": list(pairs)})
        call = f"{_MATCH}.compare_values({str(job)!r}, {str(out)!r})"
        got = _probe_dump(self.session, call, out, self.timeout, [job])
        if "results" not in got:
            return [ValueComparison(match=False, reason=got.get("error", "no result"))] * len(pairs)
        return [ValueComparison.model_validate(r) for r in got["results"]]


INFERRED = INFERRED_KEY
"""Extras key of a missing result inferred from the submission's code (DSEval's guess)."""


def infer_missing_result(
    session: TrackedSession, source: str, reference: Any, tag: str, timeout: float = 60.0
) -> dict[str, Any]:
    """DSEval's guess of the value a cell meant to show, evaluated in a fork probe."""
    if not session.kernel.is_alive():
        return {"error": "kernel unavailable"}
    base = session.kernel.workdir / CAPTURE_DIR
    _ensure_dir(session, base)
    path = base / f"{tag}-inferred.pkl"
    kind, keys = type(reference).__name__, None
    if isinstance(reference, dict) and all(isinstance(k, str | int) for k in reference):
        keys = list(reference)
    call = f"{_DSEVAL}.infer_output({str(path)!r}, {source!r}, {kind!r}, {keys!r})"
    return _probe_dump(session, call, path, timeout)
