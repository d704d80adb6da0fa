"""Loader for DSEval percent-format sessions (``<suite>/*.py`` + ``_inputs/`` + ``_manifest.yaml``).

A session file is split on ``# %%`` lines; text before the first marker is ignored.
A cell that starts with a docstring holds YAML (``question``, optional ``validator``,
``data``, ``execution``) followed by the reference code; any other cell is context code.
As in DSEval, a docstring cell without a ``question`` (or without code after the
docstring) is context too: its code runs before the next question, unjudged.

Each question cell becomes a `BenchTurn`:

- ``reference_code``: the code after the docstring; gold is not computed here (the runner
  executes reference code in a kernel) and ``depends_on`` stays empty (the runner fills
  it from lineage).
- ``validator``: the cell's validator normalized by `judges.dseval_spec.normalize_validator`
  (DSEval's ``comparison`` template when the cell gives none); every DSEval validator
  and option is checked here, so an unknown one is a `TaskFormatError` naming the file,
  the cell and the key.
- ``context`` and ``meta["setup_code"]``: the code of the context cells since the previous
  question (the runner executes it before the turn; DSEval runs it without the agent).
- ``meta``: ``cell_index`` (0-based among cells), ``data`` and ``execution`` from the YAML
  (``execution`` keys are DSEval's: ``max_time``, ``max_memory``, ``forbid_names``).

Inputs convention (same as DSEval): code reads ``inputs/<file>``. The runner makes a
*copy* of ``BenchTask.data_dir`` available as ``inputs/`` in the kernel's working
directory (`stage_inputs` does exactly that); a copy, because some sessions write into
``inputs/``. ``data_dir`` is `resolve_inputs_dir`. A session referencing an input file
that is absent is returned with ``skipped_reason`` naming the file.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import unicodedata
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from stateguard.bench.judges.dseval_spec import normalize_validator
from stateguard.bench.tasks import BenchTask, BenchTurn, SuiteLoad, TaskRejection
from stateguard.errors import TaskFormatError
from stateguard.question import backticked, bare_paths

INPUTS_DIR = "_inputs"
MANIFEST = "_manifest.yaml"
INPUTS_PREFIX = "inputs"

_CELL_MARKER = re.compile(r"^# %%[ \t]*\n", re.MULTILINE)
_DOCSTRING_CELL = re.compile(r'^r?"""([\s\S]+?)"""[ \t]*(?:\n([\s\S]*))?$')
_YAML_KEYS = frozenset({"question", "validator", "data", "execution"})
_EXECUTION_KEYS = frozenset({"max_time", "max_memory", "forbid_names"})
# The pandas-exercises chapters DSEval's exercise sessions are named after.
_CHAPTERS = {
    "01": "getting-knowing-your-data",
    "02": "filtering-sorting",
    "03": "grouping",
    "04": "apply",
    "05": "merge",
    "06": "stats",
    "07": "visualization",
    "08": "creating-series-and-dataframes",
    "09": "time-series",
    "10": "deleting",
}


def resolve_inputs_dir(session_path: Path | str) -> Path:
    """``_inputs/<session stem>/`` beside the session when it exists, else ``_inputs/``."""
    session_path = Path(session_path)
    specific = session_path.parent / INPUTS_DIR / session_path.stem
    return specific if specific.is_dir() else session_path.parent / INPUTS_DIR


def split_cells(source: str) -> list[str]:
    """The stripped, non-empty ``# %%`` cells of a session (text before the first one dropped)."""
    pieces = _CELL_MARKER.split(source)[1:]
    return [p.strip() for p in pieces if p.strip()]


def referenced_inputs(
    code: str, question: str = "", data: dict[str, Any] | None = None
) -> list[str]:
    """File names the cell reads from ``inputs/`` (``data:`` keys and literal paths).

    Paths in the code are its Python string literals, read by `input_paths_in_code`, so a
    name keeps its spaces, parentheses, quotes and non-ASCII letters. In the question, a
    backticked path is taken whole; elsewhere a path ends at the first space.
    """
    names = list(data or {})
    names += input_paths_in_text(question)
    names += input_paths_in_code(code)
    return list(dict.fromkeys(n for n in names if n))


def required_inputs(code: str, question: str = "", data: dict[str, Any] | None = None) -> list[str]:
    """The `referenced_inputs` a session cannot run without: ``data:`` keys, the paths the
    code spells, and whole backticked paths of the question. A path the prose mentions
    without backticks is cut at the first space, so it may be a piece of a longer name:
    it is not required."""
    names = list(data or {})
    names += input_paths_in_text(question, whole_only=True)
    names += input_paths_in_code(code)
    return list(dict.fromkeys(n for n in names if n))


def _input_name(path: str) -> str | None:
    """``a b.csv`` for ``inputs/a b.csv`` or ``./inputs/a b.csv``; None for other paths."""
    path = path.strip()
    for prefix in ("./inputs/", "inputs/"):
        if path.startswith(prefix):
            name = path[len(prefix) :].strip("/")
            if name and not any(c in name for c in "*?[{"):  # a glob or a template
                return name
    return None


def input_paths_in_text(text: str, *, whole_only: bool = False) -> list[str]:
    """``inputs/`` paths of prose (`stateguard.question.paths`): whole backticked spans,
    then (unless ``whole_only``) space-free mentions."""
    names = [n for span in backticked(text) if (n := _input_name(span))]
    if whole_only:
        return names
    return names + bare_paths(text, INPUTS_PREFIX)


def _constant_path(node: ast.AST) -> str | None:
    """The string a constant path expression spells: a literal, ``os.path.join`` or
    ``Path(...)`` of literals, ``Path("inputs") / "x.csv"``, ``"inputs/" + "x.csv"``; None
    when it is not constant."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div | ast.Add):
        left, right = _constant_path(node.left), _constant_path(node.right)
        if left is None or right is None:
            return None
        return left + right if isinstance(node.op, ast.Add) else f"{left.rstrip('/')}/{right}"
    if isinstance(node, ast.Call) and node.args and not node.keywords:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name in ("join", "Path", "PurePath", "PosixPath"):
            parts = [_constant_path(a) for a in node.args]
            if all(p is not None for p in parts):
                return "/".join(p.rstrip("/") for p in parts)  # type: ignore[union-attr]
    return None


def input_paths_in_code(code: str) -> list[str]:
    """``inputs/`` file names the code spells as constant path expressions.

    Code that does not parse is read for quoted literals instead.
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        literals = re.findall(r"""(['"])((?:\./)?inputs/.*?)\1""", code)
        return [n for _, lit in literals if (n := _input_name(lit))]
    names: list[str] = []
    inner: set[int] = set()
    for node in ast.walk(tree):
        if id(node) in inner:
            continue
        path = _constant_path(node)
        if path is None:
            continue
        if not isinstance(node, ast.Constant):  # its pieces are not paths of their own
            inner.update(id(n) for n in ast.walk(node))
        name = _input_name(path)
        if name is not None:
            names.append(name)
    return names


def find_input(data_dir: Path, name: str) -> Path | None:
    """The file ``name`` (a relative path) under ``data_dir``, exact first, then with its
    Unicode normalized (a name written NFC against a file stored NFD, or the reverse)."""
    exact = data_dir / name
    if exact.exists():
        return exact
    folder = data_dir
    for part in Path(name).parts:
        if not folder.is_dir():
            return None
        wanted = unicodedata.normalize("NFC", part)
        match = next(
            (c for c in folder.iterdir() if unicodedata.normalize("NFC", c.name) == wanted),
            None,
        )
        if match is None:
            return None
        folder = match
    return folder


def _parse_header(header: str, path: Path, cell: int) -> dict[str, Any]:
    try:
        setup = yaml.safe_load(header)
    except yaml.YAMLError as exc:
        raise TaskFormatError(f"{path}: cell {cell}: invalid YAML in docstring: {exc}") from exc
    if not isinstance(setup, dict):
        raise TaskFormatError(f"{path}: cell {cell}: docstring YAML must be a mapping")
    unknown = set(setup) - _YAML_KEYS
    if unknown:
        raise TaskFormatError(
            f"{path}: cell {cell}: unknown docstring keys {sorted(unknown)} "
            f"(DSEval reads {sorted(_YAML_KEYS)})"
        )
    question = setup.get("question")
    if question is not None and (not isinstance(question, str) or not question.strip()):
        raise TaskFormatError(f"{path}: cell {cell}: field 'question' must be a non-empty string")
    for key in ("data", "execution"):
        if setup.get(key) is not None and not isinstance(setup[key], dict):
            raise TaskFormatError(f"{path}: cell {cell}: field {key!r} must be a mapping")
    unknown = set(setup.get("execution") or {}) - _EXECUTION_KEYS
    if unknown:
        raise TaskFormatError(
            f"{path}: cell {cell}: unknown execution keys {sorted(unknown)} "
            f"(DSEval reads {sorted(_EXECUTION_KEYS)})"
        )
    return setup


def load_dseval_session(session_path: Path | str, domain: str | None = None) -> BenchTask:
    """Load one DSEval session file into a `BenchTask` (task_id ``dseval-<stem>``).

    ``domain`` defaults to the exercise chapter named by the file's number prefix.
    Raises `TaskFormatError` naming the file, the cell and the field on malformed input.
    """
    path = Path(session_path)
    try:
        source = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TaskFormatError(f"{path}: cannot read session: {exc}") from exc
    turns: list[BenchTurn] = []
    setup_code: list[str] = []
    referenced: list[str] = []
    for cell_index, cell in enumerate(split_cells(source)):
        match = _DOCSTRING_CELL.match(cell)
        if match is None:
            setup_code.append(cell)
            continue
        code = (match.group(2) or "").strip()
        if not code:  # DSEval runs a docstring-only cell as context code
            setup_code.append(cell)
            continue
        setup = _parse_header(match.group(1), path, cell_index)
        if setup.get("question") is None:  # an auxiliary cell: context, not judged
            setup_code.append(code)
            referenced += list(setup.get("data") or {})
            continue
        try:
            validator = normalize_validator(setup.get("validator"))
        except TaskFormatError as exc:
            raise TaskFormatError(f"{path}: cell {cell_index}: {exc}") from exc
        context = "\n\n".join(setup_code)
        referenced += required_inputs(context + "\n" + code, setup["question"], setup.get("data"))
        meta: dict[str, Any] = {"cell_index": cell_index}
        if context:
            meta["setup_code"] = context
        for key in ("data", "execution"):
            if setup.get(key):
                meta[key] = dict(setup[key])
        turns.append(
            BenchTurn(
                turn_id=len(turns) + 1,
                context=context,
                question=setup["question"].strip(),
                reference_code=code,
                validator=validator,
                meta=meta,
            )
        )
        setup_code = []
    if not turns:
        raise TaskFormatError(f"{path}: no question cells")

    inputs_dir = resolve_inputs_dir(path)
    data_dir = inputs_dir if inputs_dir.is_dir() else None
    missing: list[str] = []
    aliases: dict[str, str] = {}
    for name in dict.fromkeys(referenced):
        found = None if data_dir is None else find_input(data_dir, name)
        if found is None:
            missing.append(name)
        elif found != data_dir / name:  # same name up to Unicode normalization
            aliases[name] = found.relative_to(data_dir).as_posix()  # type: ignore[arg-type]
    skipped = None
    if missing:
        listed = ", ".join(repr(n) for n in missing)
        skipped = f"missing input file(s) {listed} (looked in {inputs_dir})"
    if domain is None:
        domain = _CHAPTERS.get(path.stem.split("-", 1)[0])
    try:
        return BenchTask(
            task_id=f"dseval-{path.stem}",
            suite="dseval",
            domain=domain,
            data_dir=data_dir,
            turns=tuple(turns),
            skipped_reason=skipped,
            input_aliases=aliases,
        )
    except ValidationError as exc:
        raise TaskFormatError(f"{path}: {exc.errors()[0]['msg']}") from exc


def load_dseval_suite(root: Path | str) -> list[BenchTask]:
    """Load every session ``<root>/*.py`` (names starting with ``_`` excluded), sorted by name.

    ``<root>/_manifest.yaml`` must exist (as in DSEval); its ``name`` goes into no task
    but a missing or malformed manifest is a `TaskFormatError`. The first malformed
    session raises; `scan_dseval_suite` loads the others and reports it instead.
    """
    loaded = scan_dseval_suite(root)
    if loaded.rejected:
        raise TaskFormatError(loaded.rejected[0].reason)
    return list(loaded.tasks)


def scan_dseval_suite(root: Path | str) -> SuiteLoad:
    """Like `load_dseval_suite`, but a malformed session is rejected, not fatal.

    ``root`` may also be one session file.
    """
    root = Path(root)
    if root.is_file():
        sessions = [root]
    else:
        _check_manifest(root)
        sessions = sorted(p for p in root.glob("*.py") if not p.name.startswith("_"))
    tasks: list[BenchTask] = []
    rejected: list[TaskRejection] = []
    for session in sessions:
        try:
            tasks.append(load_dseval_session(session))
        except TaskFormatError as exc:
            rejected.append(
                TaskRejection(
                    task_id=f"dseval-{session.stem}", source=str(session), reason=str(exc)
                )
            )
    return SuiteLoad(tasks=tuple(tasks), rejected=tuple(rejected))


def _check_manifest(root: Path) -> None:
    manifest = root / MANIFEST
    try:
        content = yaml.safe_load(manifest.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise TaskFormatError(f"{manifest}: manifest not found") from exc
    except yaml.YAMLError as exc:
        raise TaskFormatError(f"{manifest}: invalid YAML: {exc}") from exc
    if not isinstance(content, dict) or "name" not in content:
        raise TaskFormatError(f"{manifest}: field 'name' is required")


def stage_inputs(task: BenchTask, workdir: Path | str) -> Path | None:
    """Copy ``task.data_dir`` to ``<workdir>/inputs`` (replacing it), writable by the kernel.

    None when the task has no data_dir.
    """
    if task.data_dir is None:
        return None
    target = Path(workdir) / INPUTS_PREFIX
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(task.data_dir, target)
    for name, stored in task.input_aliases.items():  # the name the code spells, too
        alias = target / name
        if not alias.exists():
            alias.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(target / stored, alias)
    # The copy is the session's to change, and a sandboxed kernel runs as another user.
    for folder, _, files in os.walk(target):
        os.chmod(folder, 0o777)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o666)
    return target
