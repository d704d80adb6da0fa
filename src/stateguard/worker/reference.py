"""Run a task's reference solution: its gold answers, computed cell by cell with pandas.

A shipped multi-turn example keeps, in ``reference.py``, one cell of code per turn
(``TURN_CODE``), written as an analyst in one persistent session would: later cells reuse
earlier variables. Each cell ends with an expression whose value is the turn's answer.
This module runs those cells in one namespace (`run_cells`), compares the answers with the
task file's gold (`mismatches`), and gives each ``reference.py`` its command line
(`reference_main`: print the answers, or ``--check`` them against the task file).

The cells are the example's own code, run in this process: a reference is code shipped
with the repository, not model code.
"""

from __future__ import annotations

import argparse
import ast
import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from stateguard.worker.tasks import load_task


def run_cell(code: str, namespace: dict[str, Any]) -> Any:
    """Execute a cell and return the value of its last expression (as IPython would)."""
    tree = ast.parse(code)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, "<cell>", "exec"), namespace)
    if last is None:
        return None
    return eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace)


def run_cells(cells: Sequence[str], base: Path) -> list[Any]:
    """Run every cell in one namespace, from ``base`` (the folder that holds ``data/``)."""
    previous = Path.cwd()
    os.chdir(base)
    try:
        namespace: dict[str, Any] = {}
        return [run_cell(code, namespace) for code in cells]
    finally:
        os.chdir(previous)


def same(a: Any, b: Any) -> bool:
    """Equal answers: mappings field by field, numbers within 1e-9."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(float(a), float(b), rel_tol=0, abs_tol=1e-9)
    return a == b


def mismatches(task_file: Path, answers: Sequence[Any]) -> list[str]:
    """Where ``answers`` differ from the gold answers of ``task_file`` (or its folder)."""
    turns = load_task(task_file).turns
    problems = []
    if len(turns) != len(answers):
        problems.append(f"the task has {len(turns)} turns, the reference {len(answers)}")
    for i, (turn, answer) in enumerate(zip(turns, answers, strict=False), 1):
        if not same(turn.answer, answer):
            problems.append(f"turn {i}: the task says {turn.answer!r}, the reference {answer!r}")
    return problems


def reference_main(
    description: str,
    compute: Callable[[], list[Any]],
    check: Callable[[], list[str]],
    argv: Sequence[str] | None = None,
) -> int:
    """A reference script's command line: print the answers, or with ``--check`` compare
    them with the task file (exit status 1 on a mismatch)."""
    parser = argparse.ArgumentParser(description=description.strip().splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with task.yaml")
    if parser.parse_args(argv).check:
        problems = check()
        for p in problems:
            print(p)
        print("task.yaml matches the reference" if not problems else "MISMATCH")
        return 1 if problems else 0
    for i, answer in enumerate(compute(), 1):
        print(f"turn {i}: {answer!r}")
    return 0
