"""The sandbox policy, its command line, and how an unconfined session reports itself."""

from __future__ import annotations

from pathlib import Path

import pytest

import stateguard
from stateguard.errors import KernelError
from stateguard.kernel import Confinement, KernelSession, SandboxPolicy
from stateguard.kernel import sandbox as sandbox_module
from stateguard.kernel.sandbox import Sandbox, SandboxUnavailableError, resolve_sandbox

PROJECT = Path(stateguard.__file__).resolve().parents[2]


def _no_bwrap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox_module.shutil, "which", lambda name: None)


def test_missing_bwrap_is_reported_loudly_in_auto_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_bwrap(monkeypatch)
    sandbox, confinement = resolve_sandbox(SandboxPolicy(mode="auto"))
    assert sandbox is None
    assert not confinement.confined
    assert "bubblewrap (bwrap) is not installed" in confinement.reason
    assert confinement.describe().startswith("UNCONFINED: ")
    session = KernelSession(sandbox=SandboxPolicy(mode="auto"))
    assert session.confinement == confinement
    session.stop()


def test_missing_bwrap_is_an_error_when_required(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_bwrap(monkeypatch)
    with pytest.raises(SandboxUnavailableError, match="required but bubblewrap"):
        KernelSession(sandbox=SandboxPolicy(mode="required"))


def test_mode_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEGUARD_SANDBOX", "off")
    assert SandboxPolicy.from_env().mode == "off"
    _, confinement = resolve_sandbox(SandboxPolicy.from_env())
    assert confinement == Confinement(confined=False, reason="the sandbox is turned off")
    monkeypatch.setenv("STATEGUARD_SANDBOX", "sometimes")
    with pytest.raises(KernelError, match="STATEGUARD_SANDBOX must be auto, required or off"):
        SandboxPolicy.from_env()


def test_command_line_isolates_network_pid_and_files(tmp_path: Path) -> None:
    workdir, data, ipc, etc = (tmp_path / n for n in ("work", "data", "ipc", "etc"))
    for d in (workdir, data, ipc, etc):
        d.mkdir()
    (etc / "passwd").write_text("root:x:0:0::/:/bin/false\n")
    (data / "f.csv").write_text("a\n1\n")
    sb = Sandbox("/usr/bin/bwrap", "bubblewrap 0.0", SandboxPolicy())
    argv = sb.wrap(["python", "-m", "x"], etc=etc, ipc_dir=ipc, workdir=workdir, data_dir=data)
    assert argv[:3] == ["/bin/sh", "-c", "trap '' INT; exec \"$@\""]
    args = argv[argv.index("/usr/bin/bwrap") + 1 :]
    for flag in ("--unshare-net", "--unshare-pid", "--die-with-parent"):
        assert flag in args
    assert args[-8:] == ["--remount-ro", "/", "--chdir", str(workdir), "--", "python", "-m", "x"]
    binds = {(args[i], args[i + 2]) for i, a in enumerate(args) if a in ("--bind", "--ro-bind")}
    writable = {dest for flag, dest in binds if flag == "--bind"}
    assert writable == {str(workdir), str(ipc)}
    dests = {dest for _, dest in binds}
    assert str(Path.home()) not in dests and str(PROJECT) not in dests
    assert not any(d == "/" or d == "/etc" or d == str(tmp_path) for d in dests)
    networked = Sandbox("/usr/bin/bwrap", "bubblewrap 0.0", SandboxPolicy(network=True))
    assert "--unshare-net" not in networked.wrap(
        ["python"], etc=etc, ipc_dir=ipc, workdir=workdir, data_dir=None
    )


def test_bwrap_exit_status_of_a_signalled_kernel_is_decoded() -> None:
    assert Sandbox.exit_signal(128 + 9) == 9
    assert Sandbox.exit_signal(1) is None
    assert Sandbox.exit_signal(None) is None


def test_options_missing_from_old_bwrap_releases_are_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox_module.os, "geteuid", lambda: 1000)
    etc = tmp_path / "etc"
    etc.mkdir()
    kw = {"etc": etc, "ipc_dir": tmp_path, "workdir": tmp_path, "data_dir": None}
    new = Sandbox("bwrap", "bubblewrap 0.8.0", SandboxPolicy()).wrap(["python"], **kw)
    old = Sandbox("bwrap", "bubblewrap 0.6.1", SandboxPolicy()).wrap(["python"], **kw)
    assert "--disable-userns" in new and "--size" in new and "--unshare-user" in new
    assert "--disable-userns" not in old and "--size" not in old and "--unshare-user" in old
    assert "--cap-add" not in new


def test_bwrap_that_cannot_create_namespaces_leaves_the_kernel_unconfined(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = --version ]; then echo "bubblewrap 0.8.0"; exit 0; fi\n'
        "echo 'bwrap: Creating new namespace failed: Operation not permitted' >&2\n"
        "exit 1\n"
    )
    fake.chmod(0o755)
    monkeypatch.setattr(sandbox_module.shutil, "which", lambda name: str(fake))
    sandbox, confinement = resolve_sandbox(SandboxPolicy(mode="auto"))
    assert sandbox is None and not confinement.confined
    assert "cannot create a sandbox here: bwrap: Creating new namespace failed" in (
        confinement.reason
    )
    with pytest.raises(SandboxUnavailableError, match=r"required but .* cannot create"):
        resolve_sandbox(SandboxPolicy(mode="required"))
