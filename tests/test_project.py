"""Project-level checks: lint, import layering, and the README/CI contract."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _readme_test_command() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)\n```", text, flags=re.S)
    assert len(blocks) >= 2, "README must start with two bash commands"
    return blocks[1].strip()


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = _readme_test_command()
    assert "pytest" in command
    assert command in ci.splitlines(), f".ci/run must run the README's test command: {command}"


def test_ruff_clean() -> None:
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    proc = subprocess.run(
        [ruff, "check", "src", "tests", "benchmarks"], cwd=ROOT, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_formatted() -> None:
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    proc = subprocess.run(
        [ruff, "format", "--check", "src", "tests", "benchmarks", "examples"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_import_layers() -> None:
    tool = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    if not Path(tool).exists() and shutil.which("lint-imports") is None:
        pytest.fail("lint-imports is not installed; install the 'dev' extra")
    proc = subprocess.run([tool], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ci_builds_the_docs_strictly_and_the_readme_is_a_quick_start() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert any(line.startswith("mkdocs build --strict") for line in ci.splitlines())
    assert "pytest -m train" in ci, ".ci/run must still run the training tests"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200, "the README is the quick start; reference: docs/"
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = sorted(p.name for p in (ROOT / "docs").glob("*.md"))
    assert pages and all(page in nav for page in pages), "every docs/ page is in the nav"


def _root_conftest() -> object:
    import importlib.util

    spec = importlib.util.spec_from_file_location("root_conftest", ROOT / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Item:
    def __init__(self, marked: bool) -> None:
        self.marked, self.added = marked, []

    def get_closest_marker(self, name: str) -> object | None:
        return object() if self.marked and name == "train" else None

    def add_marker(self, marker: object) -> None:
        self.added.append(marker)


def test_train_tests_skip_naming_the_extra_when_a_library_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.util

    conftest = _root_conftest()
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a)
    )
    monkeypatch.delenv("STATEGUARD_TRAIN", raising=False)
    train, other = _Item(True), _Item(False)
    conftest.pytest_collection_modifyitems(None, [train, other])  # type: ignore[attr-defined]
    assert other.added == []
    (mark,) = train.added
    assert mark.kwargs["reason"].startswith("needs the train extra (torch")  # type: ignore[attr-defined]
    assert "pip install -e '.[train]'" in mark.kwargs["reason"]  # type: ignore[attr-defined]
    monkeypatch.setenv("STATEGUARD_TRAIN", "required")
    with pytest.raises(pytest.UsageError, match="torch"):
        conftest.pytest_collection_modifyitems(None, [_Item(True)])  # type: ignore[attr-defined]
