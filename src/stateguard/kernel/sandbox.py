"""The kernel's sandbox: bubblewrap (``bwrap``), the namespace tool Flatpak is built on.

Why bubblewrap: it is a small, audited setuid-free C program packaged by every major
distribution (Debian: ``apt-get install bubblewrap``), it builds the sandbox from
kernel namespaces in one exec, and it needs no daemon, image or root. We only
assemble its command line; the isolation itself is the kernel's.

What the sandboxed kernel gets (`Sandbox.wrap`):

- its own network namespace with only a loopback interface (``--unshare-net``),
  unless the policy opts in to the host network. jupyter_client talks to it over
  Unix sockets (the ``ipc`` transport) in a directory bind-mounted into the sandbox;
- a fresh root: ``/usr`` and the Python installation read-only, a minimal ``/etc``
  (loader files and a synthetic ``passwd``/``group``/``hosts``), a private ``/tmp``
  (tmpfs of bounded size), a fresh ``/proc`` and minimal ``/dev``. The working
  directory is the only writable host directory; the data directory is read-only.
  Nothing else of the host is there: not the home directory, not the project, not
  the run directory (only its ``workdir``), not the task file or the gold;
- the stateguard package itself (the kernel imports its launcher, guard, probes and
  the lineage runtime) read-only under ``/opt/stateguard/lib``, and read-only any
  ``site-packages`` directory outside the installation that is on ``sys.path``
  (e.g. a ``pip install --user`` one);
- PID, IPC and UTS namespaces; ``--die-with-parent``, and since the kernel's
  children live in its PID namespace they all die with it;
- an unprivileged user. A non-root host runs bwrap unprivileged in a user
  namespace, as itself. A root host runs bwrap privileged (root is needed to mount),
  and the launcher then switches to `SandboxPolicy.uid` (``nobody``) before any user
  code runs; the working directory and the socket directory are chowned to it.
  bwrap sets ``no_new_privs``, so setuid binaries cannot regain root.

Known gaps: a root host cannot pass ``--disable-userns`` (it needs a user namespace
of bwrap's own; bwrap older than 0.8 lacks it), so the kernel may create nested user
namespaces; bwrap older than 0.7 cannot bound the size of /tmp; there is no
seccomp filter; RLIMIT_NPROC counts every process of the sandbox user, so
concurrent sandboxes share that budget.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

import stateguard
from stateguard.errors import KernelError
from stateguard.kernel.interpreter import KernelInterpreter

SANDBOX_ENV = "STATEGUARD_SANDBOX"
"""Overrides the default `SandboxPolicy.mode`: ``auto``, ``required`` or ``off``."""

_PACKAGE_ROOT = "/opt/stateguard/lib"
_SANDBOX_HOME = "/tmp"
_SANDBOX_HOSTNAME = "stateguard-sandbox"
_SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
# Host /etc entries the dynamic loader, locale and time zone handling need.
_ETC_KEEP = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "alternatives", "fonts")
# Extra /etc entries when the policy opts in to the host network.
_ETC_NETWORK = ("resolv.conf", "hosts", "ssl", "ca-certificates", "gai.conf")
_MAX_DATA_ENTRIES = 2000
_ROOT_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")


class SandboxUnavailableError(KernelError):
    """The policy requires the sandbox, but bubblewrap is missing or does not work here."""


class SandboxPolicy(BaseModel, frozen=True):
    """How the kernel is confined.

    `mode`: ``auto`` sandboxes when bubblewrap is available and otherwise runs the
    kernel unconfined (and says so in `Confinement`); ``required`` raises
    `SandboxUnavailableError` instead; ``off`` never sandboxes.
    """

    mode: Literal["auto", "required", "off"] = "auto"
    """Whether to sandbox (see the class docstring)."""
    network: bool = False
    """Share the host's network (opt-in per task); False gives a loopback-only namespace."""
    tmp_bytes: int = Field(default=512 * 1024**2, gt=0)
    """Size of the kernel's private /tmp (a tmpfs, so it counts against host memory)."""
    uid: int = Field(default=65534, gt=0)
    """User the kernel runs as when the host runs as root (65534 is ``nobody``)."""
    gid: int = Field(default=65534, gt=0)
    """Group the kernel runs as when the host runs as root."""

    @classmethod
    def from_env(cls) -> SandboxPolicy:
        """The default policy, with `mode` taken from ``STATEGUARD_SANDBOX`` if set."""
        raw = os.environ.get(SANDBOX_ENV, "").strip().lower()
        if not raw:
            return cls()
        if raw not in ("auto", "required", "off"):
            raise KernelError(f"{SANDBOX_ENV} must be auto, required or off, got {raw!r}")
        return cls(mode=raw)  # type: ignore[arg-type]


class Confinement(BaseModel, frozen=True):
    """What confines a kernel session: recorded in run metadata, shown by the CLI."""

    confined: bool
    """True when the kernel runs inside the bubblewrap sandbox."""
    tool: str | None = None
    """The sandbox tool and version, e.g. ``bubblewrap 0.8.0``."""
    network: Literal["none", "host"] = "host"
    """``none``: a network namespace with only loopback; ``host``: the host's network."""
    user: str = ""
    """Who the kernel runs as."""
    reason: str = ""
    """Why the kernel is unconfined (empty when confined)."""

    def describe(self) -> str:
        """One line for humans; unconfined sessions say so in capitals."""
        if self.confined:
            return f"sandboxed with {self.tool}: network {self.network}, runs as {self.user}"
        return (
            f"UNCONFINED: {self.reason}. Model-written code runs with your privileges, "
            "your network, your files and your environment"
        )


def _system_args() -> list[str]:
    """``/usr`` read-only, the host's top-level links into it (``/lib64``...), /proc, /dev."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in _ROOT_LINKS:
        host = Path("/") / name
        if host.is_symlink():
            args += ["--symlink", os.readlink(host), str(host)]
        elif host.is_dir():
            args += ["--ro-bind", str(host), str(host)]
    return [*args, "--proc", "/proc", "--dev", "/dev"]


@functools.lru_cache(maxsize=8)
def _check_bwrap(path: str, as_root: bool) -> tuple[str | None, str]:
    """(version or None, why it is unusable or ""): ``--version``, then a tiny sandbox.

    The second step catches hosts where bwrap is installed but may not create
    namespaces (e.g. an unprivileged container). Cached per process.
    """
    try:
        out = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"{path} --version failed: {exc}"
    version = out.stdout.strip()
    if out.returncode != 0 or not version:
        return None, f"{path} --version failed: {out.stderr.strip()[:300]}"
    smoke = [path, "--unshare-net", "--unshare-pid", "--die-with-parent"]
    if not as_root:
        smoke.append("--unshare-user")
    smoke += [*_system_args(), "--", "/usr/bin/env", "true"]
    try:
        out = subprocess.run(smoke, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return version, f"{path} cannot create a sandbox here: {exc}"
    if out.returncode != 0:
        detail = out.stderr.strip()[:300] or f"exit status {out.returncode}"
        return version, f"{path} cannot create a sandbox here: {detail}"
    return version, ""


def _release(version: str) -> tuple[int, ...]:
    """``bubblewrap 0.8.0`` -> (0, 8, 0); unparsable -> (0,), i.e. assume the oldest."""
    digits = version.split()[-1].split(".") if version.split() else []
    try:
        return tuple(int(part) for part in digits)
    except ValueError:
        return (0,)


def _ancestors(path: Path) -> list[Path]:
    """Parents of `path` below ``/``, outermost first."""
    return list(reversed(path.parents))[1:]


class Sandbox:
    """Builds the bubblewrap command line around the kernel's argv and prepares its files."""

    def __init__(
        self,
        bwrap: str,
        version: str,
        policy: SandboxPolicy,
        interpreter: KernelInterpreter | None = None,
    ) -> None:
        self.bwrap = bwrap
        self.version = version
        self.policy = policy
        self.interpreter = interpreter
        """The kernel's interpreter when it is not this one (its installation is bound)."""
        self.as_root = os.geteuid() == 0
        self._release = _release(version)

    def with_interpreter(self, interpreter: KernelInterpreter) -> Sandbox:
        """The same sandbox for a kernel running on `interpreter`."""
        chosen = None if interpreter.host else interpreter
        return Sandbox(self.bwrap, self.version, self.policy, chosen)

    @property
    def drop_to(self) -> tuple[int, int] | None:
        """(uid, gid) the launcher switches to inside the sandbox, if the host is root."""
        return (self.policy.uid, self.policy.gid) if self.as_root else None

    def confinement(self) -> Confinement:
        """The typed description of this sandbox."""
        if self.as_root:
            user = f"uid {self.policy.uid} / gid {self.policy.gid} (the host runs as root)"
        else:
            user = f"your uid {os.geteuid()} in a user namespace, without capabilities"
        return Confinement(
            confined=True,
            tool=self.version,
            network="host" if self.policy.network else "none",
            user=user,
        )

    # -------------------------------------------------------------- host side
    def prepare(self, runtime: Path, ipc_dir: Path, workdir: Path) -> Path:
        """Write the synthetic /etc files; give the sandbox user its writable dirs.

        Returns the directory holding the synthetic /etc files (not visible as such
        inside the sandbox; each file is bound individually).
        """
        etc = runtime / "etc"
        etc.mkdir(mode=0o755, exist_ok=True)
        uid, gid = self.drop_to or (os.geteuid(), os.getegid())
        files = {
            "passwd": f"root:x:0:0:root:/root:/usr/sbin/nologin\n"
            f"sandbox:x:{uid}:{gid}:sandbox:{_SANDBOX_HOME}:/usr/sbin/nologin\n",
            "group": f"root:x:0:\nsandbox:x:{gid}:\n",
            "nsswitch.conf": "passwd: files\ngroup: files\nhosts: files dns\n",
        }
        if not self.policy.network:
            files["hosts"] = f"127.0.0.1 localhost {_SANDBOX_HOSTNAME}\n::1 localhost\n"
        for name, text in files.items():
            (etc / name).write_text(text, encoding="utf-8")
            (etc / name).chmod(0o644)
        if self.drop_to is not None:
            for path in (ipc_dir, workdir):
                os.chown(path, uid, gid)
        return etc

    def owner(self) -> tuple[int, int] | None:
        """Owner to give files the kernel must read (the connection file), if not us."""
        return self.drop_to

    # ------------------------------------------------------------ command line
    def wrap(
        self,
        inner: list[str],
        *,
        etc: Path,
        ipc_dir: Path,
        workdir: Path,
        data_dir: Path | None,
    ) -> list[str]:
        """The full argv: a SIGINT-ignoring shell exec'ing bwrap, which runs `inner`.

        jupyter_client interrupts by signalling the kernel's whole process group; the
        shell makes bwrap's own processes ignore SIGINT (inherited across exec), and
        the launcher restores it for the kernel.
        """
        args: list[str] = [
            "--die-with-parent",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--hostname",
            _SANDBOX_HOSTNAME,
        ]
        # ipykernel exits when its parent is no longer JPY_PARENT_PID, and inside the
        # PID namespace its parent is bwrap; --die-with-parent covers the host instead.
        args += ["--unsetenv", "JPY_PARENT_PID"]
        if not self.policy.network:
            args.append("--unshare-net")
        if self.as_root:
            args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        else:
            args.append("--unshare-user")
            if self._release >= (0, 8, 0):
                args.append("--disable-userns")
        args += _system_args()
        args += ["--perms", "1777"]
        if self._release >= (0, 7, 0):
            args += ["--size", str(self.policy.tmp_bytes)]
        args += ["--tmpfs", "/tmp"]
        args += ["--perms", "1777", "--tmpfs", "/dev/shm"]
        args += self._etc_args(etc)
        made: set[Path] = {Path("/usr"), Path("/tmp"), Path("/etc"), Path("/proc"), Path("/dev")}
        for path in [*self._python_dirs(), *self._site_dirs()]:
            args += self._bind("--ro-bind", path, path, made)
        package = Path(stateguard.__file__).resolve().parent
        args += self._bind("--ro-bind", package, Path(_PACKAGE_ROOT) / "stateguard", made)
        args += self._bind("--bind", workdir, workdir, made)
        if data_dir is not None:
            args += self._data_args(data_dir, made)
        args += self._bind("--bind", ipc_dir, ipc_dir, made)
        # The directories bwrap created for the mount points live on its root tmpfs,
        # which an unprivileged sandbox user owns: make it read-only (submounts keep
        # their own flags), so writes outside the workdir and /tmp fail.
        args += ["--remount-ro", "/", "--chdir", str(workdir), "--", *inner]
        shell = ["/bin/sh", "-c", "trap '' INT; exec \"$@\"", "stateguard-sandbox"]
        return [*shell, self.bwrap, *args]

    def _etc_args(self, etc: Path) -> list[str]:
        args = ["--perms", "0555", "--dir", "/etc"]
        keep = _ETC_KEEP + (_ETC_NETWORK if self.policy.network else ())
        for name in keep:
            host = Path("/etc") / name
            if host.exists():
                args += ["--ro-bind", str(host), str(host)]
        for synthetic in sorted(etc.iterdir()):
            args += ["--ro-bind", str(synthetic), f"/etc/{synthetic.name}"]
        return args

    def _data_args(self, data_dir: Path, made: set[Path]) -> list[str]:
        """Bind `data_dir` read-only where the sandbox user can traverse it.

        The sandbox user of a root host cannot enter a directory that is private to
        root (``mkdtemp`` and pytest make them 0700), so then each entry is bound into
        a world-readable directory of the sandbox instead; symlinks among them are
        recreated as symlinks (binding would follow them out of the data directory).
        """
        mode = data_dir.stat().st_mode
        if not self.as_root or (mode & 0o005) == 0o005:
            return self._bind("--ro-bind", data_dir, data_dir, made)
        entries = sorted(data_dir.iterdir())
        if len(entries) > _MAX_DATA_ENTRIES:
            raise SandboxUnavailableError(
                f"data_dir {data_dir} is private to root and has {len(entries)} entries; "
                f"make it world-readable (chmod o+rx) or group its files in subdirectories "
                f"(at most {_MAX_DATA_ENTRIES} entries)"
            )
        args = self._bind("--perms", Path("0555"), data_dir, made)
        args[-3:] = ["--perms", "0555", "--dir", str(data_dir)]
        for entry in entries:
            if entry.is_symlink():
                args += ["--symlink", os.readlink(entry), str(entry)]
            else:
                args += ["--ro-bind", str(entry), str(entry)]
        return args

    @staticmethod
    def _bind(flag: str, source: Path, dest: Path, made: set[Path]) -> list[str]:
        """`flag source dest`, preceded by its parents, made readable by all, writable by none.

        Left to itself, bwrap would copy a host parent's mode (e.g. 0700), and in a user
        namespace the sandbox user would own, and could write, those directories.
        """
        args: list[str] = []
        for parent in _ancestors(dest):
            if parent in made:
                continue
            args += ["--perms", "0555", "--dir", str(parent)]
            made.add(parent)
        made.add(dest)
        return [*args, flag, str(source), str(dest)]

    def _python_dirs(self) -> list[Path]:
        """The kernel interpreter's installation (and virtualenv) directories outside /usr."""
        home = Path.home().resolve()
        found: list[Path] = []
        if self.interpreter is not None:
            candidates = list(self.interpreter.prefixes)
        else:
            candidates = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
            candidates.append(str(Path(sys.executable).resolve().parent.parent))
        for raw in candidates:
            path = Path(raw).resolve()
            if path == Path("/usr") or path.is_relative_to("/usr"):
                continue
            if path == Path("/") or home.is_relative_to(path):
                raise SandboxUnavailableError(
                    f"the Python installation at {path} contains the home directory "
                    f"{home}; binding it would expose the home directory to the kernel"
                )
            if not any(path.is_relative_to(p) for p in found):
                found = [p for p in found if not p.is_relative_to(path)] + [path]
        return found

    def _site_dirs(self) -> list[Path]:
        """``site-packages``/``dist-packages`` dirs on ``sys.path`` outside the installation.

        E.g. a ``pip install --user`` directory, or one a ``.pth`` file adds. Only such
        directories are bound: other ``sys.path`` entries (a source checkout, test
        directories) stay out of the sandbox. For another interpreter, those of its own
        ``sys.path`` (this one's packages would shadow its own).
        """
        if self.interpreter is not None:
            return [Path(p) for p in self.interpreter.site_dirs]
        roots = [Path("/usr"), *self._python_dirs()]
        found: list[Path] = []
        for raw in sys.path:
            if not raw:
                continue
            path = Path(raw).resolve()
            if path.name not in ("site-packages", "dist-packages") or not path.is_dir():
                continue
            if any(path.is_relative_to(r) for r in roots) or path in found:
                continue
            found.append(path)
        return found

    # ------------------------------------------------------------- environment
    def kernel_env(self, env: dict[str, str]) -> dict[str, str]:
        """`env` adjusted for the sandbox's file system (HOME, PATH, PYTHONPATH)."""
        out = dict(env)
        out["HOME"] = _SANDBOX_HOME
        out["TMPDIR"] = "/tmp"
        interpreter = self.interpreter
        bin_dir = Path(sys.executable).parent if interpreter is None else interpreter.bin_dir
        out["PATH"] = f"{bin_dir}:{_SANDBOX_PATH}"
        out["PYTHONPATH"] = ":".join([_PACKAGE_ROOT, *map(str, self._site_dirs())])
        out["PYTHONNOUSERSITE"] = "1"
        return out

    @staticmethod
    def exit_signal(code: int | None) -> int | None:
        """bwrap exits with 128 + N when the kernel was killed by signal N: recover N."""
        if code is not None and 128 < code < 128 + signal.NSIG:
            return code - 128
        return None


def resolve_sandbox(policy: SandboxPolicy) -> tuple[Sandbox | None, Confinement]:
    """The sandbox `policy` asks for, or None with the reason the kernel is unconfined.

    Raises `SandboxUnavailableError` when `policy.mode` is ``required`` and bubblewrap
    is missing, broken, or not allowed to create namespaces on this host.
    """
    if policy.mode == "off":
        return None, Confinement(confined=False, reason="the sandbox is turned off")
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        version, reason = (
            None,
            (
                "bubblewrap (bwrap) is not installed; install it with your package manager, "
                "e.g. apt-get install bubblewrap"
            ),
        )
    else:
        version, reason = _check_bwrap(bwrap, os.geteuid() == 0)
    if version is None or reason:
        if policy.mode == "required":
            raise SandboxUnavailableError(f"the sandbox is required but {reason}")
        return None, Confinement(confined=False, reason=reason)
    assert bwrap is not None
    sandbox = Sandbox(bwrap, version, policy)
    return sandbox, sandbox.confinement()
