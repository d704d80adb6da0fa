"""`GuardedSession` is the only place that puts a manager beside an executor and lineage."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "stateguard"

# who may build a manager (a tracked session alone, for lineage-only runs such as gold
# replays, fault plans or a verifier's fresh kernel, is not an assembly of the parts)
ASSEMBLY = {
    "build_supervisor": {"guard/session.py"},
    "StateHarness": {"manager/factory.py"},
    "KernelWorkspace": {"manager/factory.py"},
}


def calls(path: Path) -> set[str]:
    """Names called in a module (``f(...)`` and ``mod.f(...)``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                found.add(func.id)
            elif isinstance(func, ast.Attribute):
                found.add(func.attr)
    return found


def test_only_the_guarded_session_assembles_the_parts() -> None:
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        for name in sorted(calls(path) & set(ASSEMBLY)):
            if rel not in ASSEMBLY[name]:
                offenders.append(f"{rel} calls {name}")
    assert not offenders, offenders
