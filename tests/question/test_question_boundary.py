"""The question's English is read in `stateguard.question` only.

A scan of the source for regular-expression calls (``search``, ``match``, ``finditer``,
``findall``, ``sub``, ``split``) whose argument is question text (an expression naming
``question``). The modules below still do it: the debt left, each with its count. The
test fails when a module not listed starts reading the question itself, or a listed one
reads it in more places; lower a count (or remove the module) when its reading moves to
`QuestionSpec`.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "stateguard"
METHODS = frozenset({"search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split"})

STILL_READING: dict[str, int] = {
    "audit/joinintent.py": 2,
    "verify/arithmetic.py": 2,
    "verify/columns.py": 2,
    "verify/consistency.py": 26,
    "verify/degenerate.py": 1,
    "verify/entities.py": 1,
    "verify/indicators.py": 1,
    "verify/thresholds.py": 2,
}


def _question_reads(path: Path) -> int:
    count = 0
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in METHODS
            and any("question" in ast.unparse(a).lower() for a in node.args)
        ):
            count += 1
    return count


def test_no_new_module_reads_the_questions_english() -> None:
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith("question/"):
            continue
        n = _question_reads(path)
        if n:
            found[rel] = n
    grown = {k: v for k, v in found.items() if v > STILL_READING.get(k, 0)}
    assert not grown, f"read the question through stateguard.question instead: {grown}"


def test_the_scan_finds_a_question_read(tmp_path: Path) -> None:
    path = tmp_path / "probe.py"
    path.write_text(
        "import re\ndef f(question, text):\n    re.match('y', text)\n"
        "    return re.search('x', question)\n",
        encoding="utf-8",
    )
    assert _question_reads(path) == 1
