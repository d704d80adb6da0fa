"""The package's public names, the operators' prompt, and what the kernel side imports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import stateguard.audit as audit
from stateguard.audit.kernelops import NAMES, source_map_for


def test_every_exported_name_resolves() -> None:
    for name in audit.__all__:
        assert getattr(audit, name) is not None, name


def test_operators_prompt_documents_every_kernel_function() -> None:
    prompt = audit.operators_prompt()
    for name in NAMES:
        assert f"`{name}(" in prompt, name


def test_the_in_kernel_guard_does_not_import_the_source_map_dependencies() -> None:
    code = (
        "import sys, stateguard.audit.joinguard\n"
        "print(sorted(m for m in ('bm25s', 'duckdb', 'Stemmer', 'lxml') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_kernel_indexes_a_lake_once_while_its_files_stay_the_same(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("x\n1\n")
    first = source_map_for(tmp_path)
    assert source_map_for(tmp_path) is first
    (tmp_path / "b.csv").write_text("y\n2\n")
    second = source_map_for(tmp_path)
    assert second is not first and len(second.sources) == 2
