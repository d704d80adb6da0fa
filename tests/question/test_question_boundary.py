"""The question's English is read in `stateguard.question` only.

A scan of the source, outside `stateguard.question`, for the ways of reading the
question's words:

- a regular-expression call (``search``, ``match``, ``finditer``, ``findall``, ``sub``,
  ``split``…) whose argument is question text;
- a module-level word list or pattern (a ``frozenset``/``set``/``tuple``/``list``/``dict`` of
  strings, a ``re.compile``, or a tuple of them) tested against question text:
  ``word in _FILLER``, ``found -= _NOT_A_THING``, ``set(words) & _IDENTIFIER``,
  ``_NUMBERS[word]``, ``any(w in question for w in _WORDS)``;
- a word or phrase written in the code (a string literal with a letter) looked for in
  question text: ``"YYYY-MM" in text``, ``question.startswith("Which")``.

Question text is a name or attribute called so (``question``, ``task.question``,
``the_question``, ``question_text``), and, within a function, what is computed from it
(``between = question[a:b].lower()``, ``text = " ".join(question.split())``,
``for m in _PAT.finditer(question)``, ``m.group()``) or passed from it to a parameter of
a function of the same module (``_helper(question)``, whose result is question text too
when it returns some) or of another module of the package that the module imports by name
(``revisions_in(f"{context}\\n{question}")``: its ``text`` is question text there; that
function's result is not question text here). The question's text may be passed to
`stateguard.question`, and to `stateguard.numbers`, which that layer reads numbers with:
reading it there is what they are for. So what a function of those returns from it is not
question text (``QuestionSpec.parse(question).thresholds``, ``speaks_of_ids(question)``).
Neither is what a condition on it selects (``[u for u in uses if asked]``), nor what a
method of a class is given (``AnswerSpec.from_question(question)``: methods are not
followed).

The modules in `STILL_READING` still do it: the debt left, each with its count (none now).
The test fails when a module not listed starts reading the question itself, or a listed one
reads it in more places; lower a count (or remove the module) when its reading moves to
`stateguard.question`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "stateguard"
METHODS = frozenset({"search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split"})
_JOINING = frozenset({"join", "format", "format_map"})
"""String methods whose result holds what they are given: ``" ".join(question.split())``."""
_LOOKING = frozenset({"startswith", "endswith", "find", "rfind", "index", "rindex", "count"})
"""String methods that look for a word in the text they are called on."""
_LAYER = "stateguard.question"
_READERS = (_LAYER, "stateguard.numbers")
"""The modules question text may be passed to (see the module docstring)."""
_QUESTION = re.compile(r"(?:^|_)questions?(?:_?(?:text|str|string))?$", re.I)
"""The name of question text: ``question``, ``task.question``, ``question_text``; not
``QuestionSpec`` or ``question_id``."""
_PASSING = frozenset(
    {"str", "list", "set", "frozenset", "tuple", "sorted", "reversed", "enumerate", "zip", "iter"}
)
"""Builtins whose result holds what they are given."""
_SET_METHODS = frozenset({"intersection", "isdisjoint", "issubset", "issuperset", "difference"})
_SET_OPS = (ast.BitAnd, ast.Sub)
_SIZE_OPS = (ast.In, ast.NotIn, ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_Function = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
_Comprehension = ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp
_Scope = _Function | _Comprehension

STILL_READING: dict[str, int] = {}
"""None left. The last two, found once the scan followed joined text and text passed to
other modules, read in `stateguard.question` now: the first sentence a long question is cut
at for a state's issue line (`first_sentence`, for `issue_line`) and the revision
statements ("revised … from 42% to 47%") of a turn's context and question
(`revision_statements`, for `revisions_in`; a reading of its own, which differs from
`QuestionSpec.revisions` in its verbs and its numbers). So do the worker's answer form
(`answer_form`), the LongDS judge's requested fields (`named_fields`), the DSEval loader's
``inputs/`` paths (`backticked`, `bare_paths`) and the compact hints' content words
(`content_words`). The chat prompt's line is ``typed``, not ``question``: tested against
``:q`` before it is asked, it is a command, not English. A module that has to read the
question itself is listed here, with its count and what it reads."""


def _is_vocabulary(value: ast.expr | None) -> bool:
    """A word list (a collection of string literals), a compiled pattern, or a collection
    of them."""
    if isinstance(value, ast.Call):
        f = value.func
        if isinstance(f, ast.Attribute) and f.attr == "compile":
            return isinstance(f.value, ast.Name) and f.value.id == "re"
        if isinstance(f, ast.Name) and f.id in ("frozenset", "set", "tuple", "list"):
            return len(value.args) == 1 and _is_vocabulary(value.args[0])
        return False
    if isinstance(value, ast.Dict):
        items: list[ast.expr | None] = list(value.keys)
    elif isinstance(value, ast.Set | ast.List | ast.Tuple):
        items = list(value.elts)
    else:
        return False
    return bool(items) and all(
        (isinstance(i, ast.Constant) and isinstance(i.value, str)) or _is_vocabulary(i)
        for i in items
        if i is not None
    )


def _module_vocabulary(tree: ast.Module) -> set[str]:
    """Names the module binds, at its top level, to a word list or a compiled pattern."""
    out: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and _is_vocabulary(stmt.value):
            out |= {t.id for t in stmt.targets if isinstance(t, ast.Name)}
        elif (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and _is_vocabulary(stmt.value)
        ):
            out.add(stmt.target.id)
    return out


def _params(func: _Function) -> list[str]:
    a = func.args
    return [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]


def _given(call: ast.Call, callee: _Function) -> list[tuple[str, ast.expr]]:
    """``(parameter, argument)`` of each argument ``call`` gives ``callee``."""
    params = _params(callee)
    given = [(params[i], a) for i, a in enumerate(call.args) if i < len(params)]
    return given + [(k.arg, k.value) for k in call.keywords if k.arg in params]


def _is_word(node: ast.AST | None) -> bool:
    """A string literal with a letter (a word or phrase, not ``"?"`` or ``"\\n"``), or a
    tuple of them."""
    if isinstance(node, ast.Tuple):
        return bool(node.elts) and all(_is_word(e) for e in node.elts)
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and any(c.isalpha() for c in node.value)
    )


def _target_names(target: ast.expr) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


class _Names:
    """The names of one scope (a function or a comprehension) that hold question text, a
    word list, or an item of a word list."""

    def __init__(self) -> None:
        self.text: set[str] = set()
        self.words: set[str] = set()
        self.items: set[str] = set()


class _Scan:
    """The question reads of one module (see the module docstring)."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.vocabulary = _module_vocabulary(tree)
        self.functions = {
            f.name: f for f in tree.body if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
        }
        self.scopes: list[_Scope] = [s for s in ast.walk(tree) if isinstance(s, _Scope)]
        self.owner: dict[int, _Scope] = {}  # node -> the innermost scope it is in
        self.parent: dict[int, _Scope | None] = {}
        for scope in self.scopes:  # outer scopes come first: inner ones overwrite
            self.parent[id(scope)] = self.owner.get(id(scope))
            for n in ast.walk(scope):
                self.owner[id(n)] = scope
        self.names = {id(s): _Names() for s in self.scopes}
        self.returning: set[str] = set()  # the module's functions that return question text
        self._spread()

    def _get(self, node: ast.AST) -> tuple[set[str], set[str], set[str]]:
        """The text, word-list and item names seen where ``node`` is."""
        scope = self.owner.get(id(node))
        text, words, items = set(), set(self.vocabulary), set()
        while scope is not None:
            own = self.names[id(scope)]
            text |= own.text
            words |= own.words
            items |= own.items
            # a comprehension sees the names of its function; a function only its own
            scope = self.parent[id(scope)] if isinstance(scope, _Comprehension) else None
        return text, words, items

    def is_text(self, node: ast.AST | None) -> bool:
        """Whether the value of ``node`` holds question text."""
        if node is None:
            return False
        if isinstance(node, ast.Name):
            return bool(_QUESTION.search(node.id)) or node.id in self._get(node)[0]
        if isinstance(node, ast.Attribute):
            return bool(_QUESTION.search(node.attr)) or self.is_text(node.value)
        if isinstance(node, ast.Subscript | ast.Starred | ast.NamedExpr | ast.FormattedValue):
            return self.is_text(node.value)
        if isinstance(node, ast.Call):
            f = node.func
            args = [*node.args, *(k.value for k in node.keywords)]
            if isinstance(f, ast.Attribute):
                return self.is_text(f.value) or (
                    (f.attr in METHODS or f.attr in _JOINING) and any(self.is_text(a) for a in args)
                )
            if isinstance(f, ast.Name) and (f.id in _PASSING or f.id in self.returning):
                return any(self.is_text(a) for a in args)
            return False
        if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp):
            return self.is_text(node.elt)
        if isinstance(node, ast.DictComp):
            return self.is_text(node.key) or self.is_text(node.value)
        if isinstance(node, ast.BinOp):
            return self.is_text(node.left) or self.is_text(node.right)
        if isinstance(node, ast.IfExp):
            return self.is_text(node.body) or self.is_text(node.orelse)
        if isinstance(node, ast.BoolOp):
            return any(self.is_text(v) for v in node.values)
        if isinstance(node, ast.JoinedStr):
            return any(self.is_text(v) for v in node.values)
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return any(self.is_text(v) for v in node.elts)
        return False

    def is_words(self, node: ast.AST | None) -> bool:
        """Whether the value of ``node`` is a word list or pattern (or made of them)."""
        if isinstance(node, ast.Name):
            return node.id in self._get(node)[1]
        if isinstance(node, ast.BinOp):
            return self.is_words(node.left) or self.is_words(node.right)
        if isinstance(node, ast.IfExp):
            return self.is_words(node.body) or self.is_words(node.orelse)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("set", "frozenset", "tuple", "list", "sorted")
        ):
            return any(self.is_words(a) for a in node.args)
        return False

    def _bindings(self, scope: _Scope) -> Iterator[tuple[set[str], ast.expr, bool]]:
        """``(names bound, value, a loop)`` of each assignment and loop of a scope."""
        for n in ast.walk(scope):
            if self.owner.get(id(n)) is not scope:
                continue
            if isinstance(n, ast.Assign):
                yield {t for tg in n.targets for t in _target_names(tg)}, n.value, False
            elif isinstance(n, ast.AugAssign | ast.AnnAssign | ast.NamedExpr):
                if n.value is not None:
                    yield _target_names(n.target), n.value, False
            elif isinstance(n, ast.For | ast.AsyncFor | ast.comprehension):
                yield _target_names(n.target), n.iter, True

    def _spread(self) -> None:
        """Mark, to a fixed point, what each scope computes from question text or word
        lists, and the parameters the module's functions are given question text in."""
        for scope in self.scopes:
            if isinstance(scope, _Function):
                self.names[id(scope)].text |= {p for p in _params(scope) if _QUESTION.search(p)}
        changed = True
        while changed:
            changed = False
            for scope in self.scopes:
                own = self.names[id(scope)]
                for bound, value, loop in self._bindings(scope):
                    if self.is_text(value) and not bound <= own.text:
                        own.text |= bound
                        changed = True
                    into = own.items if loop else own.words
                    if self.is_words(value) and not bound <= into:
                        into |= bound
                        changed = True
            for name, f in self.functions.items():
                if name not in self.returning and any(
                    isinstance(r, ast.Return) and self.owner[id(r)] is f and self.is_text(r.value)
                    for r in ast.walk(f)
                ):
                    self.returning.add(name)
                    changed = True
            for call in ast.walk(self.tree):
                if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
                    continue
                callee = self.functions.get(call.func.id)
                if callee is not None and self.pass_text(call, self, callee):
                    changed = True

    def pass_text(self, call: ast.Call, caller: _Scan, callee: _Function) -> bool:
        """Mark the parameters of ``callee`` (a function of this module) that ``call`` (in
        ``caller``'s module) gives question text; whether any was new."""
        seeded = self.names[id(callee)].text
        new = {name for name, arg in _given(call, callee) if caller.is_text(arg)} - seeded
        seeded |= new
        return bool(new)

    def is_read(self, node: ast.AST) -> bool:
        """Whether ``node`` runs a pattern over question text or tests it against a word
        list (see the module docstring)."""

        def pair(a: ast.AST | None, b: ast.AST | None) -> bool:
            return (self.is_text(a) and self.is_words(b)) or (self.is_words(a) and self.is_text(b))

        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            f = node.func
            if f.attr in METHODS and any(self.is_text(a) for a in node.args):
                return True
            if f.attr in _LOOKING and self.is_text(f.value):
                return any(_is_word(a) or self.is_words(a) for a in node.args)
            if f.attr in _SET_METHODS or (f.attr == "get" and self.is_words(f.value)):
                return any(pair(f.value, a) for a in node.args)
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            return any(
                isinstance(op, _SIZE_OPS)
                and (
                    pair(a, b)
                    or (isinstance(a, ast.Name) and a.id in self._get(a)[2] and self.is_text(b))
                    or (isinstance(op, ast.In | ast.NotIn) and _is_word(a) and self.is_text(b))
                )
                for op, a, b in zip(node.ops, sides[:-1], sides[1:], strict=True)
            )
        if isinstance(node, ast.BinOp) and isinstance(node.op, _SET_OPS):
            return pair(node.left, node.right)
        if isinstance(node, ast.AugAssign) and isinstance(node.op, _SET_OPS):
            return self.is_text(node.target) and self.is_words(node.value)
        if isinstance(node, ast.Subscript):
            return self.is_words(node.value) and self.is_text(node.slice)
        return False


def _within(module: str, packages: tuple[str, ...]) -> bool:
    """Whether ``module`` is one of ``packages`` or in one."""
    return any(module == p or module.startswith(p + ".") for p in packages)


class _Package:
    """The question reads of the modules of a package outside `stateguard.question`,
    following question text into the functions of its other modules (see the module
    docstring)."""

    def __init__(self, root: Path) -> None:
        self.scans: dict[str, _Scan] = {}
        self.paths: dict[str, str] = {}
        for path in sorted(root.rglob("*.py")):
            rel = path.relative_to(root)
            parts = (root.name, *rel.parent.parts, *([] if rel.stem == "__init__" else [rel.stem]))
            name = ".".join(parts)
            if _within(name, (_LAYER,)):
                continue
            self.scans[name] = _Scan(ast.parse(path.read_text(encoding="utf-8")))
            self.paths[name] = rel.as_posix()
        calls = [
            (caller, *found) for caller in self.scans.values() for found in self._calls(caller)
        ]
        changed = True
        while changed:
            changed = False
            for caller, call, (scan, callee) in calls:
                if scan.pass_text(call, caller, callee):
                    scan._spread()
                    changed = True

    def _function(self, module: str, name: str, depth: int = 0) -> tuple[_Scan, _Function] | None:
        """The function ``name`` names in ``module``, with the scan of the module that
        defines it (following the imports of a package's ``__init__``); None when that is no
        function of the package's, or one of `_READERS`."""
        scan = self.scans.get(module)
        if scan is None or _within(module, _READERS) or depth > 5:
            return None
        if name in scan.functions:
            return scan, scan.functions[name]
        for stmt in scan.tree.body:
            if isinstance(stmt, ast.ImportFrom) and stmt.module and stmt.level == 0:
                for alias in stmt.names:
                    if (alias.asname or alias.name) == name:
                        return self._function(stmt.module, alias.name, depth + 1)
        return None

    def _calls(self, caller: _Scan) -> Iterator[tuple[ast.Call, tuple[_Scan, _Function]]]:
        """The calls of ``caller``'s module to a function of another module it imports
        (``f(...)``, ``module.f(...)``), with that function."""
        functions: dict[str, tuple[str, str]] = {}
        modules: dict[str, str] = {}
        for node in ast.walk(caller.tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    whole = f"{node.module}.{alias.name}"
                    if whole in self.scans:
                        modules[alias.asname or alias.name] = whole
                    else:
                        functions[alias.asname or alias.name] = (node.module, alias.name)
            elif isinstance(node, ast.Import):
                modules |= {a.asname: a.name for a in node.names if a.asname}
        for call in ast.walk(caller.tree):
            if not isinstance(call, ast.Call):
                continue
            f, found = call.func, None
            if isinstance(f, ast.Name) and f.id in functions:
                found = self._function(*functions[f.id])
            elif (
                isinstance(f, ast.Attribute)
                and isinstance(f.value, ast.Name)
                and f.value.id in modules
            ):
                found = self._function(modules[f.value.id], f.attr)
            if found is not None:
                yield call, found

    def reads(self) -> dict[str, int]:
        """The number of question reads of each module that has some, by path."""
        counts = {
            self.paths[name]: sum(scan.is_read(n) for n in ast.walk(scan.tree))
            for name, scan in self.scans.items()
        }
        return {path: n for path, n in counts.items() if n}


def _question_reads(path: Path) -> int:
    scan = _Scan(ast.parse(path.read_text(encoding="utf-8")))
    return sum(scan.is_read(n) for n in ast.walk(scan.tree))


def test_no_new_module_reads_the_questions_english() -> None:
    found = _Package(SRC).reads()
    grown = {k: v for k, v in found.items() if v > STILL_READING.get(k, 0)}
    assert not grown, f"read the question through stateguard.question instead: {grown}"


def _probe(tmp_path: Path, source: str) -> int:
    path = tmp_path / "probe.py"
    path.write_text(source, encoding="utf-8")
    return _question_reads(path)


def test_the_scan_finds_a_question_read(tmp_path: Path) -> None:
    source = """
import re
def f(question, text):
    re.match('y', text)
    return re.search('x', question)
"""
    assert _probe(tmp_path, source) == 1


def test_the_scan_follows_what_is_computed_from_the_question(tmp_path: Path) -> None:
    source = """
import re
_WORD = re.compile(r"[a-z]+")
def f(question, text):
    between = question[3:9].lower()
    for m in _WORD.finditer(between):  # 1
        word = m.group()
        re.fullmatch("x", word)  # 2
    _WORD.findall(text)
    return [w for w in between.split() if _WORD.match(w)]  # 3
def g(task):
    return _helper(task.question, "y")
def _helper(asked, other):
    _WORD.search(other)
    return _WORD.search(asked)  # 4
def h(the_question):
    return {w for w in _words(the_question) if w in _STOP}  # 5
def _words(text):
    return _WORD.findall(text.lower())  # 6
_STOP = frozenset({"the", "a"})
"""
    assert _probe(tmp_path, source) == 6


def test_the_scan_finds_a_word_list_used_on_the_question(tmp_path: Path) -> None:
    source = """
_FILLER = frozenset({"is", "are"})
_NUMBERS = {"one": 1, "two": 2}
_IDS = ("id", "key")
_KINDS = ["a", "b"]
def f(question, columns):
    words = question.split()
    found = {w for w in words if w not in _FILLER}  # 1
    found -= _FILLER  # 2
    n = _NUMBERS[words[0]] + _NUMBERS.get(words[1], 0)  # 3, 4
    before = _KINDS
    shared = set(words) & set(_IDS)  # 5
    ok = words[0] in before  # 6
    said = any(k in question for k in _KINDS)  # 7
    return [c for c in columns if c in _FILLER], found, n, shared, ok, said
"""
    assert _probe(tmp_path, source) == 7


def test_the_scan_leaves_code_output_and_other_modules_readings_alone(tmp_path: Path) -> None:
    source = """
import re
from stateguard.question import QuestionSpec, speaks_of_ids
_SCALAR = re.compile(r"-?[0-9]+")
_CALLS = frozenset({"sum", "mean"})
_WORDS = {"up": "more than", "down": "less than"}
def f(question, code, shown, uses):
    names = {n for n in code.split() if n in _CALLS}
    m = _SCALAR.match(shown.strip())
    note = f"the question asks for {m}"
    asked = speaks_of_ids(question)
    kept = [u for u in uses if asked]
    words = [_WORDS[t.direction] for t in QuestionSpec.parse(question).thresholds]
    return names, re.sub("x", "y", note), [k in _CALLS for k in kept], words
"""
    assert _probe(tmp_path, source) == 0


def test_the_scan_follows_joined_text_and_finds_written_words(tmp_path: Path) -> None:
    source = """
import re
_TEMPLATE = re.compile(r"`([^`]*)`")
class Spec:
    @classmethod
    def from_question(cls, question, code):
        text = " ".join((question or "").split())
        both = "{}: {}".format("Q", question)
        m = _TEMPLATE.search(text)  # 1
        if m is not None:
            return [re.search(r"count", hole, re.I) for hole in m.group(1).split(",")]  # 2
        if "YYYY-MM" in text:  # 3
            return "month"
        if text.lower().startswith(("which", "who")) or both.count("how many"):  # 4, 5
            return None
        return "?" in text, text.endswith("\\n"), code.startswith("import")
"""
    assert _probe(tmp_path, source) == 5


def test_the_scan_follows_question_text_into_other_modules(tmp_path: Path) -> None:
    package = tmp_path / "stateguard"
    files = {
        "__init__.py": "",
        "numbers.py": "import re\ndef scan(text):\n    return re.findall(r'[0-9]+', text)\n",
        "question/__init__.py": "import re\ndef words(text):\n    return re.findall('x', text)\n",
        "manager/__init__.py": "from stateguard.manager.revisions import revisions_in\n",
        "manager/revisions.py": """
import re
_CHANGE = re.compile(r"from ([0-9]+) to ([0-9]+)")
def revisions_in(text, turn):
    return _CHANGE.findall(text or "")  # 1
def unused(text):
    return re.findall("y", text)
""",
        "manager/format.py": """
import re
def first_line(text):
    return re.split("\\n", text)[0]  # 1
""",
        "manager/harness.py": """
from stateguard import numbers
from stateguard.manager import revisions_in
from stateguard.manager import format as fmt
from stateguard.question import words
class Harness:
    def begin_turn(self, question, context, answer):
        found = revisions_in(f"{context}\\n{question}", 1)
        return found, numbers.scan(question), words(question), fmt.first_line(answer)
""",
        "worker/loop.py": """
from stateguard.manager import format as fmt
def run_turn(task):
    return fmt.first_line(task.question)
""",
    }
    for name, source in files.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(source, encoding="utf-8")
    # the harness passes its question to revisions_in (imported through the package's
    # __init__), the loop to first_line (of a module imported by name); the answer given to
    # first_line is not question text; stateguard.numbers and stateguard.question may read it
    assert _Package(package).reads() == {"manager/revisions.py": 1, "manager/format.py": 1}
