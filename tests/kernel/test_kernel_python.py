"""The kernel's interpreter: another Python (``--kernel-python``), its checks and its errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from stateguard.bench.records import RunConfig
from stateguard.bench.runner import run_benchmark
from stateguard.cli.main import app
from stateguard.kernel import KernelSession, SandboxPolicy
from stateguard.kernel.interpreter import (
    KERNEL_PYTHON_ENV,
    KERNEL_SIDE_MODULES,
    OPTIONAL_KERNEL_MODULES,
    KernelPythonError,
    inspect_interpreter,
    resolve_kernel_python,
)
from stateguard.kernel.limits import ResourceLimits, kernel_command
from stateguard.kernel.transfer import load_value
from stateguard.lineage import TrackedSession

SRC = Path(__file__).resolve().parents[2] / "src" / "stateguard"


def _script(path: Path, body: str) -> Path:
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def _reason(path: str | Path) -> tuple[str, str]:
    with pytest.raises(KernelPythonError) as info:
        inspect_interpreter(path, option="--kernel-python")
    return info.value.reason, str(info.value)


# ------------------------------------------------------------------ typed errors
def test_missing_interpreter_is_not_found(tmp_path: Path) -> None:
    reason, message = _reason(tmp_path / "nope" / "python")
    assert reason == "not_found"
    assert message.startswith(f"--kernel-python {tmp_path / 'nope' / 'python'}")


def test_file_without_exec_bit_and_directory_are_not_executable(tmp_path: Path) -> None:
    plain = tmp_path / "python"
    plain.write_text("", encoding="utf-8")
    assert _reason(plain)[0] == "not_executable"
    reason, message = _reason(tmp_path)
    assert reason == "not_executable"
    assert "directory" in message


def test_program_that_is_not_python(tmp_path: Path) -> None:
    reason, message = _reason(_script(tmp_path / "python", "echo hello; exit 3"))
    assert reason == "not_python"
    assert "hello" in message


def test_too_old_python_reports_its_version(tmp_path: Path) -> None:
    line = 'STATEGUARD-PROBE {"version": [3, 9, 18], "prefixes": [], "failed": {}}'
    reason, message = _reason(_script(tmp_path / "python", f"echo '{line}'"))
    assert reason == "too_old"
    assert "3.9.18" in message and ">= 3.11" in message


def _bare_venv(root: Path, pth: str | None = None) -> Path:
    """A second interpreter (a virtualenv, made offline), optionally with a .pth file."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    if pth is not None:
        site = next(root.glob("lib/python3*/site-packages"))
        (site / "host.pth").write_text(pth + "\n", encoding="utf-8")
    return root / "bin" / "python"


def test_python_without_ipykernel(tmp_path: Path) -> None:
    reason, message = _reason(_bare_venv(tmp_path / "venv"))
    assert reason == "no_ipykernel"
    assert "pip install ipykernel" in message


def test_python_missing_a_kernel_side_dependency(tmp_path: Path) -> None:
    # A real interpreter whose pydantic cannot be imported: the probe names it.
    block = tmp_path / "block"
    block.mkdir()
    (block / "pydantic.py").write_text("raise ImportError('pydantic blocked')\n")
    wrapper = _script(
        tmp_path / "python", f'PYTHONPATH="$PYTHONPATH:{block}" exec {sys.executable} "$@"'
    )
    # PYTHONPATH puts the package first and the blocker before site-packages.
    reason, message = _reason(wrapper)
    assert reason == "missing_modules"
    assert "pydantic blocked" in message
    assert "stateguard.lineage.runtime" in message


def test_environment_variable_names_itself_in_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KERNEL_PYTHON_ENV, str(tmp_path / "gone"))
    with pytest.raises(KernelPythonError) as info:
        resolve_kernel_python(None)
    assert str(info.value).startswith(KERNEL_PYTHON_ENV)
    monkeypatch.delenv(KERNEL_PYTHON_ENV)
    assert resolve_kernel_python(None).host


# ------------------------------------------------------------------ plumbing
def test_this_interpreter_passes_and_is_not_the_host_default() -> None:
    interp = inspect_interpreter(sys.executable, option="--kernel-python")
    assert not interp.host
    assert interp.executable == sys.executable
    assert interp.version == tuple(sys.version_info[:3])
    assert str(Path(sys.prefix).resolve()) in interp.prefixes


def test_kernel_command_starts_the_chosen_interpreter() -> None:
    argv = kernel_command(ResourceLimits(), python="/opt/py/bin/python")
    assert argv[:3] == ["/opt/py/bin/python", "-m", "stateguard.kernel._launch"]
    assert kernel_command(ResourceLimits())[0] == sys.executable


def test_every_module_sent_to_the_kernel_is_checked() -> None:
    sent = set()
    for path in SRC.rglob("*.py"):
        sent |= set(re.findall(r"__import__\(\s*'(stateguard\.[\w.]+)'", path.read_text()))
    sent |= {"stateguard.kernel._launch", "stateguard.kernel.namespace"}
    assert sent
    assert sent <= set(KERNEL_SIDE_MODULES) | set(OPTIONAL_KERNEL_MODULES)


_SHOW = "import sys, stateguard, pandas; print(sys.prefix, stateguard.__file__)"


@pytest.mark.parametrize("mode", ["auto", "off"])
def test_kernel_runs_on_a_second_virtualenv(tmp_path: Path, mode: str) -> None:
    # A second, offline-made virtualenv that reaches this one's packages through a
    # .pth file: a different installation (prefix, executable, PATH), same libraries.
    site = next(p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir())
    python = _bare_venv(tmp_path / "venv2", pth=site)
    kernel = KernelSession(python=str(python), sandbox=SandboxPolicy(mode=mode))
    assert kernel.interpreter.executable == str(python)
    with TrackedSession(kernel) as session:
        result = session.execute(_SHOW)
        assert result.execution.ok, result.execution.error
        prefix, package = result.execution.stdout.split()
        assert Path(prefix).resolve() == (tmp_path / "venv2").resolve()
        # stateguard is not installed there: the host put its package on the path
        assert "venv2" not in package
        tracked = session.execute("x = 1\ny = x + 1")
        assert tracked.cell is not None and tracked.cell.reads and tracked.cell.unverified is None


def test_session_takes_the_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KERNEL_PYTHON_ENV, sys.executable)
    kernel = KernelSession()
    assert not kernel.interpreter.host
    with kernel:
        assert kernel.execute("import sys; print(sys.executable)").stdout.strip()


# ------------------------------------------------------------------ command line
def test_bench_run_rejects_a_bad_kernel_python(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "bench", "run", "--suite", "dseval", "--path", str(tmp_path),
            "--out", str(tmp_path / "run"), "--kernel-python", str(tmp_path / "nope"),
        ],
    )  # fmt: skip
    assert result.exit_code == 2
    said = " ".join(result.output.split())  # rich wraps long lines
    assert "--kernel-python" in said and "not found" in said
    assert not (tmp_path / "run").exists()


def test_lineage_check_rejects_a_bad_kernel_python(tmp_path: Path) -> None:
    cases = tmp_path / "cases.json"
    cases.write_text("[]", encoding="utf-8")
    result = CliRunner().invoke(
        app, ["lineage", "check", str(cases), "--kernel-python", str(tmp_path)]
    )
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert "--kernel-python" in said and "directory" in said


def test_bench_run_sets_the_kernel_python_for_its_jobs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KERNEL_PYTHON_ENV, raising=False)
    CliRunner().invoke(
        app,
        [
            "bench", "run", "--suite", "dseval", "--path", str(tmp_path),
            "--out", str(tmp_path / "run"), "--kernel-python", sys.executable,
        ],
    )  # fmt: skip
    assert os.environ.get(KERNEL_PYTHON_ENV) == sys.executable
    monkeypatch.delenv(KERNEL_PYTHON_ENV)


def test_values_pickled_by_a_pandas_2_kernel_are_read() -> None:
    # data/pandas2_values.pkl was written by pandas 2.3.3 (data/make_pandas2_values.py).
    values = load_value(Path(__file__).parent / "data" / "pandas2_values.pkl")
    assert values["version"].startswith("2.")
    frame = values["frame"]
    assert frame.shape == (3, 10)
    assert frame["i"].tolist() == [1, 2, 3]
    assert frame["d"].isna().tolist() == [False, True, False]
    assert str(frame["tz"].dt.tz) == "UTC"
    assert frame["I"].isna().tolist() == [False, True, False]
    assert str(frame["p"].dtype) == "period[M]"
    assert values["multi"].index.names == ["s", "i"]
    assert values["grouped"].to_dict() == {"x": 4, "y": 2}
    assert values["nat"] is pd.NaT


@pytest.mark.parametrize("command", ["run", "chat"])
def test_run_and_chat_reject_a_bad_kernel_python(tmp_path: Path, command: str) -> None:
    result = CliRunner().invoke(
        app, [command, str(tmp_path), "--kernel-python", str(tmp_path / "python3.99")]
    )
    assert result.exit_code == 2
    said = " ".join(result.output.split())  # rich wraps long lines
    assert "--kernel-python" in said and "not found" in said


def test_bench_run_records_the_kernel_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KERNEL_PYTHON_ENV, raising=False)
    example = Path(__file__).resolve().parents[2] / "examples" / "kramabench_mini"
    out = tmp_path / "run"
    args = ["bench", "run", "--suite", "kramabench", "--path", str(example / "workload.json")]
    # replay: KramaBench has no reference code, so every turn is skipped and no kernel starts
    result = CliRunner().invoke(app, [*args, "--out", str(out), "--kernel-python", sys.executable])
    assert result.exit_code == 0, result.output
    assert json.loads((out / "run.json").read_text())["kernel_python"] == sys.executable
    bad = RunConfig(suite="kramabench", path=str(example / "workload.json"), kernel_python="/no")
    with pytest.raises(KernelPythonError):
        run_benchmark(bad, tmp_path / "run2")
    assert not (tmp_path / "run2").exists()
