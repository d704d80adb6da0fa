"""The interpreter a kernel runs on: this one, or another the user chooses (``--kernel-python``).

A benchmark's users run it in the environment it was written for (e.g. pandas 2 for
DSEval), so the kernel may run on another Python installation, typically a
virtualenv. stateguard is not installed there: the host puts its own package on the
kernel's import path instead, and only that package. Unconfined, that is a private
directory holding one link, ``stateguard`` -> this installation's package (the
host's ``site-packages`` stay out, so the chosen interpreter's pandas is the one
imported); in the sandbox it is the read-only package copy the sandbox binds anyway
(`stateguard.kernel.sandbox`). The package's kernel-side modules (launcher, probes,
lineage runtime, bench capture, in-kernel checks, join guard) import the standard
library, IPython and pydantic, and numpy/pandas for the data they look at; so the
chosen interpreter needs Python >= 3.11, ``ipykernel`` and ``pydantic`` (v2)::

    python3 -m venv /path/pd2 && /path/pd2/bin/pip install 'pandas<3' ipykernel pydantic

`inspect_interpreter` checks a candidate by running it once on a small probe that
imports every kernel-side module from the package as the kernel would, and raises
`KernelPythonError` (with a `reason`) naming the option and what is wrong.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

import stateguard
from stateguard.errors import KernelError

KERNEL_PYTHON_ENV = "STATEGUARD_KERNEL_PYTHON"
"""When set, kernels run on this interpreter unless a session names another one."""

MIN_VERSION = (3, 11)
"""The oldest Python the kernel-side modules support (the project's ``requires-python``)."""

KERNEL_SIDE_MODULES = (
    "stateguard.kernel._launch",
    "stateguard.kernel.probe",
    "stateguard.kernel.namespace",
    "stateguard.lineage.runtime",
    "stateguard.bench.capture",
    "stateguard.bench.dseval_kernel",
    "stateguard.audit.guardsetup",
    "stateguard.audit.joinguard",
)
"""Kernel-side modules every kernel may need: the launcher, probes, lineage, bench checks,
the join guard."""

OPTIONAL_KERNEL_MODULES = (
    "stateguard.audit.kernelops",
    "stateguard.audit.sourcewatch",
    "stateguard.bench.kernel_match",
)
"""Kernel-side modules of opt-in features (the audit operators also need duckdb there, the
DSEval matcher over values the host holds as stand-ins pandas)."""

_PROBE_TIMEOUT = 120.0

# Runs in the candidate interpreter: only syntax every Python 3 parses, so that a too
# old one still reports its version.
_PROBE = """
import json, sys
out = {"version": list(sys.version_info[:3]), "executable": sys.executable,
       "prefixes": [sys.prefix, getattr(sys, "base_prefix", sys.prefix), sys.exec_prefix,
                    getattr(sys, "base_exec_prefix", sys.exec_prefix)],
       "path": list(sys.path), "ipykernel": None, "failed": {}, "package": None}
if tuple(sys.version_info[:2]) >= tuple(json.loads(sys.argv[1])):
    import importlib
    try:
        importlib.import_module("ipykernel.kernelapp")
        out["ipykernel"] = ""
    except Exception as exc:
        out["ipykernel"] = "%s: %s" % (type(exc).__name__, exc)
    for name in json.loads(sys.argv[2]):
        try:
            importlib.import_module(name)
        except Exception as exc:
            out["failed"][name] = "%s: %s" % (type(exc).__name__, exc)
    if "stateguard" in sys.modules:
        out["package"] = sys.modules["stateguard"].__file__
print("STATEGUARD-PROBE " + json.dumps(out))
"""

Reason = Literal[
    "not_found", "not_executable", "not_python", "too_old", "no_ipykernel", "missing_modules"
]


class KernelPythonError(KernelError):
    """The interpreter chosen for the kernel cannot run it; `reason` says why."""

    def __init__(self, option: str, path: str, reason: Reason, detail: str) -> None:
        super().__init__(f"{option} {path}: {detail}")
        self.option = option
        self.path = path
        self.reason: Reason = reason


class KernelInterpreter(BaseModel, frozen=True):
    """A checked interpreter for the kernel."""

    executable: str
    """Absolute path as given (a virtualenv's ``bin/python`` is kept, not resolved)."""
    version: tuple[int, int, int]
    prefixes: tuple[str, ...]
    """Its installation directories (``sys.prefix``, ``sys.base_prefix``, ...), resolved."""
    site_dirs: tuple[str, ...] = ()
    """``site-packages`` dirs on its ``sys.path`` outside `prefixes` (a ``.pth`` file's)."""
    host: bool = False
    """True for the interpreter running stateguard itself (the default)."""
    unavailable: dict[str, str] = {}
    """Optional kernel-side modules that do not import there, with the error (their
    features fail in such a kernel; the rest works)."""

    @property
    def bin_dir(self) -> Path:
        """The directory of `executable` (first on the kernel's PATH)."""
        return Path(self.executable).parent

    def describe(self) -> str:
        """One line for humans, e.g. ``/venv/bin/python (Python 3.11.7)``."""
        version = ".".join(map(str, self.version))
        return f"{self.executable} (Python {version}{', this interpreter' if self.host else ''})"


def host_interpreter() -> KernelInterpreter:
    """The interpreter running stateguard (kernels use it unless told otherwise)."""
    prefixes = (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)
    return KernelInterpreter(
        executable=sys.executable,
        version=tuple(sys.version_info[:3]),  # type: ignore[arg-type]
        prefixes=tuple(dict.fromkeys(str(Path(p).resolve()) for p in prefixes)),
        host=True,
    )


@functools.lru_cache(maxsize=1)
def package_path() -> Path:
    """A private directory whose only entry links to this installation's package.

    Put on an unconfined foreign kernel's ``PYTHONPATH``; removed at exit.
    """
    root = Path(tempfile.mkdtemp(prefix="stateguard-kpath-"))
    os.chmod(root, 0o755)
    (root / "stateguard").symlink_to(Path(stateguard.__file__).resolve().parent)
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return root


def kernel_pythonpath(env: dict[str, str], package_dir: Path) -> str:
    """``PYTHONPATH`` for a foreign kernel: the package dir, then the user's own entries."""
    rest = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    return os.pathsep.join([str(package_dir), *rest])


def _fail(option: str, path: str, reason: Reason, detail: str) -> KernelPythonError:
    return KernelPythonError(option, path, reason, detail)


def _run_probe(option: str, executable: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONHOME", "VIRTUAL_ENV")}
    env["PYTHONPATH"] = kernel_pythonpath({}, package_path())
    env["PYTHONNOUSERSITE"] = "1"
    argv = [
        executable,
        "-c",
        _PROBE,
        json.dumps(list(MIN_VERSION)),
        json.dumps([*KERNEL_SIDE_MODULES, *OPTIONAL_KERNEL_MODULES]),
    ]
    try:
        out = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=_PROBE_TIMEOUT,
            check=False,
            env=env,
            cwd=tempfile.gettempdir(),
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise _fail(option, executable, "not_python", f"could not be run: {exc}") from exc
    for line in out.stdout.splitlines():
        if line.startswith("STATEGUARD-PROBE "):
            try:
                data = json.loads(line.removeprefix("STATEGUARD-PROBE "))
            except ValueError:
                break
            if isinstance(data, dict):
                return data
    tail = (out.stderr.strip() or out.stdout.strip() or f"exit status {out.returncode}")[-300:]
    raise _fail(option, executable, "not_python", f"is not a working Python interpreter: {tail}")


@functools.lru_cache(maxsize=16)
def _inspect(option: str, executable: str, stamp: float) -> KernelInterpreter:
    data = _run_probe(option, executable)
    version = tuple(int(v) for v in data.get("version", [0, 0, 0])[:3])
    if version[:2] < MIN_VERSION:
        need = ".".join(map(str, MIN_VERSION))
        raise _fail(
            option,
            executable,
            "too_old",
            f"is Python {'.'.join(map(str, version))}; the kernel needs Python >= {need}",
        )
    if data.get("ipykernel"):
        raise _fail(
            option,
            executable,
            "no_ipykernel",
            f"cannot import ipykernel ({data['ipykernel']}); install it there "
            f"({Path(executable).parent / 'pip'} install ipykernel)",
        )
    failed: dict[str, str] = dict(data.get("failed") or {})
    unavailable = {name: failed.pop(name) for name in OPTIONAL_KERNEL_MODULES if name in failed}
    if failed:
        by_reason: dict[str, list[str]] = {}
        for name, why in failed.items():
            by_reason.setdefault(why, []).append(name)
        listed = "; ".join(f"{why} (in {', '.join(names)})" for why, names in by_reason.items())
        raise _fail(
            option,
            executable,
            "missing_modules",
            f"cannot import stateguard's kernel-side modules ({listed}); the kernel needs "
            "ipykernel and pydantic (v2) in that interpreter",
        )
    prefixes = [str(Path(p).resolve()) for p in data.get("prefixes", [])]
    prefixes.append(str(Path(executable).resolve().parent.parent))
    roots = [Path("/usr"), *map(Path, prefixes)]
    site_dirs = []
    for raw in data.get("path", []):
        entry = Path(raw).resolve() if raw else None
        if entry is None or entry.name not in ("site-packages", "dist-packages"):
            continue
        if entry.is_dir() and not any(entry.is_relative_to(r) for r in roots):
            site_dirs.append(str(entry))
    return KernelInterpreter(
        executable=executable,
        version=version,  # type: ignore[arg-type]
        prefixes=tuple(dict.fromkeys(prefixes)),
        site_dirs=tuple(dict.fromkeys(site_dirs)),
        unavailable=unavailable,
    )


def inspect_interpreter(path: str | Path, *, option: str = "kernel_python") -> KernelInterpreter:
    """Check that `path` can run a stateguard kernel; raise `KernelPythonError` if not.

    `option` is how the caller names the setting in errors (``--kernel-python``).
    A bare name is looked up on ``PATH``. Cached per path and modification time.
    """
    raw = str(path)
    if not raw.strip():
        raise _fail(option, repr(raw), "not_found", "is empty; give the path of a Python")
    candidate = Path(raw).expanduser()
    if os.sep not in raw and not candidate.exists():
        found = shutil.which(raw)
        if found is not None:
            candidate = Path(found)
    candidate = candidate.absolute()
    if not candidate.exists():
        raise _fail(option, str(candidate), "not_found", "not found")
    if candidate.is_dir():
        raise _fail(
            option,
            str(candidate),
            "not_executable",
            "is a directory; give the interpreter itself (e.g. VENV/bin/python)",
        )
    if not os.access(candidate, os.X_OK):
        raise _fail(option, str(candidate), "not_executable", "is not executable")
    return _inspect(option, str(candidate), candidate.stat().st_mtime)


def resolve_kernel_python(
    path: str | Path | None, *, option: str = "kernel_python"
) -> KernelInterpreter:
    """The interpreter for a kernel: `path`, else ``STATEGUARD_KERNEL_PYTHON``, else this one."""
    if path is None:
        env = os.environ.get(KERNEL_PYTHON_ENV, "").strip()
        if not env:
            return host_interpreter()
        return inspect_interpreter(env, option=KERNEL_PYTHON_ENV)
    return inspect_interpreter(path, option=option)


def use_for_kernels(path: str | Path | None, *, option: str = "--kernel-python") -> str | None:
    """Check `path` and make it the interpreter of every kernel this process starts.

    Sets ``STATEGUARD_KERNEL_PYTHON``, so worker processes spawned after this (the
    benchmark's process pool) use it too. Returns a description, or None when `path`
    is None (nothing changes). Raises `KernelPythonError`.
    """
    if path is None:
        return None
    interpreter = inspect_interpreter(path, option=option)
    os.environ[KERNEL_PYTHON_ENV] = interpreter.executable
    return interpreter.describe()
