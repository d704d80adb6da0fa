"""Unit tests of the data-dir audit hook and the launcher's argument parsing (no kernel).

The hook is called directly, never installed: audit hooks cannot be removed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stateguard.kernel._launch import parse_args
from stateguard.kernel.guard import make_guard
from stateguard.kernel.limits import ResourceLimits, kernel_command


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    data = tmp_path / "data_src"
    data.mkdir()
    (data / "file.csv").write_text("a\n1\n")
    work = tmp_path / "work"
    work.mkdir()
    (work / "data").symlink_to(data)
    return data, work


@pytest.mark.parametrize(
    ("event", "args"),
    [
        ("open", ("{data}/file.csv", "w", 0)),
        ("open", ("{data}/new.csv", "x", 0)),
        ("open", ("{data}/file.csv", "r+", 0)),
        ("open", ("{data}/file.csv", "ab", 0)),
        ("open", ("{work}/data/file.csv", None, os.O_WRONLY | os.O_TRUNC)),
        ("open", ("{work}/data/file.csv", None, os.O_RDWR)),
        ("os.remove", ("{work}/data/file.csv", None)),
        ("os.rename", ("{data}/file.csv", "{work}/moved.csv", None, None)),
        ("os.rename", ("{work}/x.csv", "{data}/file.csv", None, None)),
        ("os.rmdir", ("{data}", None)),
        ("os.mkdir", ("{work}/data/sub", 0o777, None)),
        ("shutil.rmtree", ("{work}/data", None)),
        ("os.chmod", ("{data}/file.csv", 0o777, None)),
        ("os.truncate", ("{data}/file.csv", 0)),
        ("os.utime", ("{data}/file.csv", None, None, None)),
        ("os.link", ("{data}/file.csv", "{work}/hard", None, None)),
        ("shutil.copyfile", ("{work}/x.csv", "{data}/file.csv")),
        ("sqlite3.connect", ("{data}/db.sqlite",)),
        ("sqlite3.connect", ("file:{data}/db.sqlite?cache=shared",)),
    ],
)
def test_guard_refuses_modifications(
    layout: tuple[Path, Path], event: str, args: tuple[object, ...]
) -> None:
    data, work = layout
    hook = make_guard(str(data))
    filled = tuple(a.format(data=data, work=work) if isinstance(a, str) else a for a in args)
    with pytest.raises(PermissionError, match="read-only"):
        hook(event, filled)


@pytest.mark.parametrize(
    ("event", "args"),
    [
        ("open", ("{data}/file.csv", "r", 0)),
        ("open", ("{work}/data/file.csv", None, os.O_RDONLY)),
        ("open", ("{work}/out.csv", "w", 0)),
        ("os.remove", ("{work}/out.csv", None)),
        ("os.rename", ("{work}/a", "{work}/b", None, None)),
        ("shutil.copyfile", ("{data}/file.csv", "{work}/copy.csv")),
        ("os.listdir", ("{data}",)),
        ("compile", (b"", "<x>")),
        ("sqlite3.connect", ("file:{data}/db.sqlite?mode=ro",)),
        ("sqlite3.connect", (":memory:",)),
    ],
)
def test_guard_allows_reads_and_writes_elsewhere(
    layout: tuple[Path, Path], event: str, args: tuple[object, ...]
) -> None:
    data, work = layout
    hook = make_guard(str(data))
    filled = tuple(a.format(data=data, work=work) if isinstance(a, str) else a for a in args)
    hook(event, filled)


def test_guard_resolves_relative_paths_against_cwd(
    layout: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    data, work = layout
    monkeypatch.chdir(work)
    hook = make_guard(str(data))
    with pytest.raises(PermissionError):
        hook("open", ("data/file.csv", "w", 0))
    hook("open", ("data/file.csv", "r", 0))


def test_guard_resolves_dir_fd(layout: tuple[Path, Path]) -> None:
    data, _ = layout
    hook = make_guard(str(data))
    fd = os.open(data, os.O_RDONLY)
    try:
        with pytest.raises(PermissionError):
            hook("os.remove", ("file.csv", fd))
    finally:
        os.close(fd)


def test_launcher_args_round_trip() -> None:
    limits = ResourceLimits(memory_bytes=123, cpu_seconds=None, processes=7, file_size_bytes=9)
    cmd = kernel_command(limits, ["--x"], drop_to=(65534, 65533))
    assert cmd[1:3] == ["-m", "stateguard.kernel._launch"]
    parsed, drop_to, rest = parse_args(cmd[3:])
    assert parsed == {
        "memory_bytes": 123,
        "cpu_seconds": None,
        "processes": 7,
        "file_size_bytes": 9,
        "open_files": 1024,
    }
    assert drop_to == (65534, 65533)
    assert rest == ["-f", "{connection_file}", "--x"]
    assert parse_args(kernel_command(limits)[3:])[1] is None


def test_launcher_rejects_bad_limits() -> None:
    with pytest.raises(SystemExit, match="integer"):
        parse_args(["--memory-bytes", "lots", "--"])
    with pytest.raises(SystemExit, match="unknown"):
        parse_args(["--bogus", "--"])
    with pytest.raises(SystemExit, match="UID:GID"):
        parse_args(["--drop-to", "nobody", "--"])
