"""File probes: what the kernel can see and write outside its working directory."""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

import pytest
from security_probes import require_confined, run

import stateguard
from stateguard.kernel import KernelSession

pytestmark = pytest.mark.kernel

PROJECT = Path(stateguard.__file__).resolve().parents[2]


def _visible(session: KernelSession, path: Path | str) -> str | None:
    """The kernel's view of `path`: 'missing', 'denied', or the first bytes it can read."""
    res = run(
        session,
        "import os\n"
        f"p = {str(path)!r}\n"
        "try:\n"
        "    view = sorted(os.listdir(p)) if os.path.isdir(p) else open(p, 'rb').read(64)\n"
        "except FileNotFoundError:\n"
        "    view = 'missing'\n"
        "except PermissionError:\n"
        "    view = 'denied'\n"
        "view",
    )
    return res.result


def test_home_project_and_host_secrets_are_invisible(session: KernelSession) -> None:
    require_confined(session)
    home = Path.home()
    assert _visible(session, home) in ("'missing'", "[]", "'denied'", "['.pyenv']")
    for path in [
        PROJECT / "pyproject.toml",
        PROJECT / ".git",
        PROJECT / "tests",
        "/etc/shadow",
        "/root/.ssh",
        "/var",
        "/home",
    ]:
        assert _visible(session, path) == "'missing'", path


def test_etc_passwd_is_a_synthetic_minimal_file(session: KernelSession) -> None:
    require_confined(session)
    res = run(session, "open('/etc/passwd').read().splitlines()")
    users = [line.split(":")[0] for line in eval(res.result or "[]")]
    assert users == ["root", "sandbox"]
    assert Path("/etc/passwd").read_text().splitlines() != eval(res.result or "[]")


def test_run_directory_records_cannot_be_tampered_with(
    session: KernelSession, task_tree: Path
) -> None:
    require_confined(session)
    run_dir = task_tree / "run"
    before = (run_dir / "trajectory.jsonl").read_bytes()
    res = run(
        session,
        "import os, sqlite3\n"
        "outcomes = []\n"
        f"for target in ['../trajectory.jsonl', {str(run_dir / 'trajectory.jsonl')!r}]:\n"
        "    try:\n"
        "        with open(target, 'a') as f:\n"
        '            f.write(\'{"kind": "forged"}\\n\')\n'
        "        outcomes.append('written')\n"
        "    except OSError as exc:\n"
        "        outcomes.append(type(exc).__name__)\n"
        "try:\n"
        f"    c = sqlite3.connect({str(run_dir / 'states.sqlite')!r})\n"
        "    c.execute('create table planted (x)'); c.commit(); c.close()\n"
        "    outcomes.append('written')\n"
        "except sqlite3.Error as exc:\n"
        "    outcomes.append('sqlite3.Error')\n"
        "outcomes, sorted(os.listdir('..'))",
    )
    written, listing = eval(res.result or "None")
    assert "written" not in written
    assert listing == ["workdir"]
    assert (run_dir / "trajectory.jsonl").read_bytes() == before
    with sqlite3.connect(run_dir / "states.sqlite") as conn:
        assert conn.execute("select name from sqlite_master").fetchall() == []
    conn.close()


def test_task_file_and_gold_are_out_of_reach(session: KernelSession, task_tree: Path) -> None:
    require_confined(session)
    assert _visible(session, "data/../task.yaml") == "'missing'"
    assert _visible(session, task_tree / "task.yaml") == "'missing'"
    assert _visible(session, task_tree / "gold") == "'missing'"
    assert _visible(session, "../../gold") == "'missing'"
    # Only the mount points exist there (the run dir beside the data holds the workdir).
    res = run(session, "import os\nsorted(os.listdir('data/..'))")
    assert res.result == "['data', 'run']"


def test_writes_outside_the_workdir_fail_and_tmp_is_private(session: KernelSession) -> None:
    require_confined(session)
    marker = f"sg-private-{os.getpid()}"
    res = run(
        session,
        "outcomes = {}\n"
        f"for target in ['/usr/planted', '/etc/planted', '/planted', {str(PROJECT)!r} + '/x']:\n"
        "    try:\n"
        "        open(target, 'w').write('x')\n"
        "        outcomes[target] = 'written'\n"
        "    except OSError as exc:\n"
        "        outcomes[target] = type(exc).__name__\n"
        f"open('/tmp/{marker}', 'w').write('x')\n"
        "sorted(set(outcomes.values()))",
    )
    assert "written" not in (res.result or "")
    assert not Path(f"/tmp/{marker}").exists()
    assert not (PROJECT / "x").exists()


def test_data_is_read_only_even_without_the_guard(session: KernelSession, task_tree: Path) -> None:
    require_confined(session)
    csv = task_tree / "data" / "file.csv"
    before = csv.read_bytes()
    res = run(
        session,
        "import os, gc, subprocess\n"
        "outcomes = []\n"
        # 1. os.open relative to a directory descriptor.
        "fd = os.open('data', os.O_RDONLY)\n"
        "try:\n"
        "    os.close(os.open('file.csv', os.O_WRONLY | os.O_TRUNC, dir_fd=fd))\n"
        "    outcomes.append('dir_fd: written')\n"
        "except OSError as exc:\n"
        "    outcomes.append(f'dir_fd: {exc.errno}')\n"
        # 2. Switch the audit hook off through its closure's re-entrancy flag.
        "for obj in gc.get_objects():\n"
        "    if getattr(obj, '__name__', '') == 'hook' and getattr(obj, '__closure__', None):\n"
        "        for cell in obj.__closure__:\n"
        "            if type(cell.cell_contents).__name__ == '_local':\n"
        "                cell.cell_contents.busy = True\n"
        "try:\n"
        "    open('data/file.csv', 'w').write('overwritten')\n"
        "    outcomes.append('closure: written')\n"
        "except OSError as exc:\n"
        "    outcomes.append(f'closure: {exc.errno}')\n"
        # 3. A shell.
        "proc = subprocess.run(['sh', '-c', 'echo x > data/file.csv; rm -f data/file.csv'],"
        " capture_output=True, text=True)\n"
        "outcomes.append(f'shell: {proc.returncode}')\n"
        "outcomes",
    )
    outcomes = eval(res.result or "[]")
    assert outcomes[0] == f"dir_fd: {errno.EROFS}"
    assert outcomes[1] in (f"closure: {errno.EROFS}", f"closure: {errno.EACCES}")
    assert outcomes[2] != "shell: 0"
    assert csv.read_bytes() == before
