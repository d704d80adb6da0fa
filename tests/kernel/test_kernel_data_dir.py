"""The data directory is exposed as workdir/data and refuses modification from the kernel."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from stateguard.errors import KernelError
from stateguard.kernel import KernelSession

pytestmark = pytest.mark.kernel

CSV = "city,temp\nOslo,3\nLima,19\n"


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("dataset")
    (data / "file.csv").write_text(CSV)
    (data / "sub").mkdir()
    (data / "sub" / "inner.txt").write_text("inner")
    return data


@pytest.fixture(scope="module")
def guarded(data_dir: Path) -> Iterator[KernelSession]:
    with KernelSession(data_dir=data_dir) as session:
        yield session


def test_data_is_readable_through_workdir_link(guarded: KernelSession, data_dir: Path) -> None:
    assert (guarded.workdir / "data").resolve() == data_dir.resolve()
    assert guarded.data_dir == data_dir.resolve()
    res = guarded.execute("import pandas as pd\nint(pd.read_csv('data/file.csv')['temp'].sum())")
    assert res.ok, res.error
    assert res.result == "22"
    env = guarded.execute("import os; os.environ['STATEGUARD_DATA_DIR']")
    assert env.result == repr(str(data_dir.resolve()))


@pytest.mark.parametrize(
    "statement",
    [
        "open('data/file.csv', 'w')",
        "open('data/file.csv', 'a')",
        "open('data/file.csv', 'r+')",
        "open('data/new.csv', 'x')",
        "open(ABS + '/file.csv', 'wb')",
        "os.open('data/file.csv', os.O_WRONLY | os.O_TRUNC)",
        "os.remove('data/file.csv')",
        "os.unlink(ABS + '/file.csv')",
        "os.rename('data/file.csv', 'moved.csv')",
        "os.replace('elsewhere.csv', ABS + '/file.csv')",
        "os.mkdir('data/newdir')",
        "os.rmdir(ABS + '/sub')",
        "shutil.rmtree('data/sub')",
        "shutil.rmtree('data')",
        "os.chmod('data/file.csv', 0o777)",
        "os.truncate(ABS + '/file.csv', 0)",
        "pd.DataFrame({'a': [1]}).to_csv('data/file.csv')",
        "pathlib.Path('data/file.csv').write_text('oops')",
        "pathlib.Path('data/file.csv').unlink()",
        "shutil.move('data/file.csv', 'stolen.csv')",
    ],
)
def test_modifications_raise_permission_error(
    guarded: KernelSession, data_dir: Path, statement: str
) -> None:
    setup = (
        "import os, shutil, pathlib\nimport pandas as pd\n"
        "ABS = os.environ['STATEGUARD_DATA_DIR']\n"
        "open('elsewhere.csv', 'w').write('x')\n"
    )
    assert guarded.execute(setup).ok
    res = guarded.execute(statement)
    assert res.status == "error", statement
    assert res.error is not None
    assert res.error.ename == "PermissionError", (statement, res.error)
    assert "read-only" in res.error.evalue
    assert (data_dir / "file.csv").read_text() == CSV
    assert (data_dir / "sub" / "inner.txt").read_text() == "inner"
    assert sorted(p.name for p in data_dir.iterdir()) == ["file.csv", "sub"]


def test_sqlite_in_data_dir_is_read_only(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    with sqlite3.connect(data / "db.sqlite") as conn:
        conn.execute("create table t (v int)")
        conn.execute("insert into t values (7)")
    conn.close()
    # (A sandbox of a root host shows a root-private data dir's entries as of start-up.)
    with KernelSession(data_dir=data) as guarded:
        refused = guarded.execute("import sqlite3\nsqlite3.connect('data/db.sqlite')")
        assert refused.error is not None and refused.error.ename == "PermissionError"
        assert "mode=ro" in refused.error.evalue
        res = guarded.execute(
            "ro = sqlite3.connect('file:data/db.sqlite?mode=ro', uri=True)\n"
            "value = ro.execute('select v from t').fetchone()[0]\n"
            "ro.close()\n"
            "value"
        )
        assert res.result == "7", res.error


def test_writing_in_workdir_still_works(guarded: KernelSession) -> None:
    res = guarded.execute(
        "import pandas as pd\n"
        "pd.read_csv('data/file.csv').to_csv('copy.csv', index=False)\n"
        "open('copy.csv').read()"
    )
    assert res.ok, res.error
    assert (guarded.workdir / "copy.csv").read_text() == CSV


def test_missing_data_dir_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(KernelError, match="does not exist"):
        KernelSession(data_dir=tmp_path / "nope")


def test_workdir_entry_named_data_is_not_overwritten(tmp_path: Path, data_dir: Path) -> None:
    workdir = tmp_path / "work"
    (workdir / "data").mkdir(parents=True)
    session = KernelSession(workdir=workdir, data_dir=data_dir)
    with pytest.raises(KernelError, match="already exists"):
        session.start()
    session.stop()
