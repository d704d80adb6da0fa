"""The question's English is read in `stateguard.question` only.

A scan of the source, outside `stateguard.question`, for the ways of reading the
question's words:

- a regular-expression call (``search``, ``match``, ``finditer``, ``findall``, ``sub``,
  ``split``…) whose argument is question text;
- a module-level word list or pattern (a ``frozenset``/``set``/``tuple``/``list``/``dict`` of
  strings, a ``re.compile``, or a tuple of them) tested against question text:
  ``word in _FILLER``, ``found -= _NOT_A_THING``, ``set(words) & _IDENTIFIER``,
  ``_NUMBERS[word]``, ``any(w in question for w in _WORDS)``.

Question text is a name or attribute called so (``question``, ``task.question``,
``the_question``, ``question_text``), and, within a function, what is computed from it
(``between = question[a:b].lower()``, ``for m in _PAT.finditer(question)``, ``m.group()``)
or passed from it to a parameter of a function of the same module (``_helper(question)``,
whose result is question text too when it returns some). What a function of another
module returns from it is not question text (``QuestionSpec.parse(question).thresholds``,
``speaks_of_ids(question)``): reading it there is what `stateguard.question` is for.
Neither is what a condition on it selects (``[u for u in uses if asked]``).

The modules in `STILL_READING` still do it: the debt left, each with its count. The test
fails when a module not listed starts reading the question itself, or a listed one reads
it in more places; lower a count (or remove the module) when its reading moves to
`stateguard.question`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "stateguard"
METHODS = frozenset({"search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split"})
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
"""None left: the LongDS judge's requested fields (`named_fields`), the DSEval loader's
``inputs/`` paths (`backticked`, `bare_paths`) and the compact hints' content words
(`content_words`) are read in `stateguard.question` now. The chat prompt's line is
``typed``, not ``question``: tested against ``:q`` before it is asked, it is a command,
not English. A module that has to read the question itself again is listed here, with its
count and why the reading cannot move."""


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
                    f.attr in METHODS and any(self.is_text(a) for a in args)
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
                if callee is None:
                    continue
                seeded = self.names[id(callee)].text
                params = _params(callee)
                given = [(params[i], a) for i, a in enumerate(call.args) if i < len(params)]
                given += [(k.arg, k.value) for k in call.keywords if k.arg in params]
                for name, arg in given:
                    if name not in seeded and self.is_text(arg):
                        seeded.add(name)
                        changed = True

    def is_read(self, node: ast.AST) -> bool:
        """Whether ``node`` runs a pattern over question text or tests it against a word
        list (see the module docstring)."""

        def pair(a: ast.AST | None, b: ast.AST | None) -> bool:
            return (self.is_text(a) and self.is_words(b)) or (self.is_words(a) and self.is_text(b))

        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            f = node.func
            if f.attr in METHODS and any(self.is_text(a) for a in node.args):
                return True
            if f.attr in _SET_METHODS or (f.attr == "get" and self.is_words(f.value)):
                return any(pair(f.value, a) for a in node.args)
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            return any(
                isinstance(op, _SIZE_OPS)
                and (
                    pair(a, b)
                    or (isinstance(a, ast.Name) and a.id in self._get(a)[2] and self.is_text(b))
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


def _question_reads(path: Path) -> int:
    scan = _Scan(ast.parse(path.read_text(encoding="utf-8")))
    return sum(scan.is_read(n) for n in ast.walk(scan.tree))


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
