"""`GuardedSession` is the only place that assembles an executor, lineage and a manager."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "stateguard"

# who may call each constructor or factory, besides its own package
ASSEMBLY = {
    "build_supervisor": {"guard/session.py"},
    "StateHarness": {"manager/factory.py"},
    "KernelWorkspace": {"manager/factory.py"},
    # a tracked session without a manager: lineage-only runs (gold replays and fault plans)
    "TrackedSession": {"guard/session.py", "bench/observe.py"},
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
        if rel.startswith("lineage/"):
            continue  # TrackedSession's own package
        for name in sorted(calls(path) & set(ASSEMBLY)):
            if rel not in ASSEMBLY[name]:
                offenders.append(f"{rel} calls {name}")
    assert not offenders, offenders
