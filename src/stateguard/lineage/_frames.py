"""What an everyday pandas expression reads of the frames it starts from (pure `ast`).

The static pass sees ``df.groupby('k')['v'].sum()`` as a chain of links from the
name ``df``. `read_model` walks that chain with a small model of the pandas API
and says which parts of ``df`` the value depends on:

* the **rows** (``["rows"]``: which rows exist, in which order), read by every
  operation but a plain column selection;
* the **columns** it uses (``["cols", [labels]]``): groupby keys and the selected or
  aggregated columns, ``query`` names, ``sort_values``/``nlargest`` keys,
  ``pivot_table`` fields, ``agg`` dicts, merge keys;
* the columns a frame-valued result **carries** through (``["carry", target,
  [computed labels], suffix]``): ``df.assign(z=..)``, a filtered or sorted copy, a
  merge. The runtime turns it into the source columns that reach the bound frame,
  so each column of the new frame keeps its own lineage.

Anything the model does not know (an unknown method, a column label that is not a
constant, a lambda over the whole frame) makes the chain a read of the whole frame,
as before: conservative, never a wrong "fresh". The runtime checks that the root
really is a DataFrame; on any other value these steps read the whole value.
"""

from __future__ import annotations

import ast
import io
import tokenize
from typing import Any, NamedTuple

from stateguard.lineage._paths import _constant

#: Frame methods that keep every column and only select, order or copy rows.
_ROW_METHODS = frozenset(
    {"head", "tail", "copy", "sort_index", "reset_index", "sample", "drop", "truncate"}
)  # fmt: skip
#: Methods that give a value computed from every carried column (no columns of their own).
_WHOLE_METHODS = frozenset(
    {"sum", "mean", "median", "min", "max", "count", "std", "var", "sem", "nunique",
     "describe", "isna", "isnull", "notna", "notnull", "any", "all", "prod", "product",
     "quantile", "cumsum", "cumprod", "cummax", "cummin", "abs", "round", "fillna",
     "astype", "value_counts", "corr", "cov", "to_dict", "to_numpy", "to_list", "tolist",
     "to_string", "to_csv", "to_json", "to_markdown", "to_records", "info", "mode",
     "idxmax", "idxmin", "unique", "diff", "pct_change", "rank", "clip", "replace",
     "where", "mask", "shift", "interpolate", "ffill", "bfill", "memory_usage",
     "items", "iterrows", "itertuples", "equals", "transpose", "stack", "unstack",
     "melt", "explode", "squeeze", "apply", "map", "applymap", "transform", "pipe", "eval",
     "select_dtypes", "dropna", "drop_duplicates", "duplicated", "first", "last", "filter",
     "plot", "hist", "boxplot", "between", "isin", "join", "keys"}
)  # fmt: skip
#: Frame attributes that are the rows alone.
_ROWS_ATTRS = frozenset({"index", "empty"})
#: groupby methods that read only the keys.
_KEY_ONLY = frozenset({"size", "ngroups", "groups", "indices", "ngroup", "cumcount"})

#: Words of a ``query`` string that are not column names.
_WORDS = frozenset({"and", "or", "not", "in", "is", "True", "False", "None"})
#: ``merge`` keywords the model reads (any other, such as ``suffixes``: the whole frames).
_MERGE_KEYWORDS = frozenset(
    {"right", "on", "left_on", "right_on", "left_index", "right_index", "how", "validate",
     "indicator", "sort"}
)  # fmt: skip

#: groupby methods whose result's columns each come from the same column of the groups.
_PER_COLUMN = frozenset(
    {"sum", "mean", "median", "min", "max", "first", "last", "count", "nunique", "std",
     "var", "sem", "prod", "head", "tail", "nth", "sample", "cumsum", "cummax", "cummin",
     "cumprod", "rank", "shift", "diff", "pct_change", "quantile", "ffill", "bfill"}
)  # fmt: skip

ALL = None  # carry: every column of the frame


class FrameRead(NamedTuple):
    """The reads of one pandas chain: (root, path) pairs, plus sub-expressions the
    visitor reads as usual (masks, computed columns, arguments)."""

    reads: list[tuple[str, tuple[Any, ...]]]
    others: list[ast.AST]
    calls: list[ast.Call]
    computed: list[tuple[str, ast.AST]]
    """Columns a frame-valued chain computes (``assign`` keywords), with their values."""


class _Whole(Exception):
    """The chain reads its whole root (the model does not know this link)."""


def _links(node: ast.AST) -> tuple[ast.Name, list[ast.AST]] | None:
    """The root name and the links (Attribute, Subscript, Call) from it outward."""
    links: list[ast.AST] = []
    cur = node
    while isinstance(cur, (ast.Attribute, ast.Subscript, ast.Call)):
        links.append(cur)
        cur = cur.func if isinstance(cur, ast.Call) else cur.value
    if not isinstance(cur, ast.Name) or not links:
        return None
    links.reverse()
    return cur, links


def _label(node: ast.AST | None) -> tuple[bool, Any]:
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool)):
        return True, node.value
    return False, None


def _labels(node: ast.AST | None) -> list[Any] | None:
    """Constant label(s): ``'k'`` or ``['a', 'b']`` (a tuple too); None otherwise."""
    ok, v = _label(node)
    if ok:
        return [v]
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
        out = []
        for e in node.elts:
            ok, v = _label(e)
            if not ok:
                return None
            out.append(v)
        return out
    return None


def _arg(call: ast.Call, pos: int | None, name: str) -> ast.AST | None:
    for k in call.keywords:
        if k.arg == name:
            return k.value
    if pos is not None and len(call.args) > pos:
        a = call.args[pos]
        return None if isinstance(a, ast.Starred) else a
    return None


def _query_names(text: str) -> list[str] | None:
    """Column names a ``query`` string uses (backquoted ones included); None if it
    cannot be read."""
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    names: list[str] = []
    prev = ""
    quoted: list[str] | None = None
    for tok in toks:
        if tok.type == tokenize.ERRORTOKEN and tok.string == "`":
            if quoted is None:
                quoted = []
            else:
                names.append(" ".join(quoted))
                quoted = None
            prev = "`"
            continue
        if quoted is not None:
            quoted.append(tok.string)
            continue
        if tok.type == tokenize.NAME and prev not in ("@", ".") and tok.string not in _WORDS:
            names.append(tok.string)
        if tok.type == tokenize.OP or tok.type == tokenize.NAME:
            prev = tok.string
    if quoted is not None:
        return None
    return names


class _Model:
    """Walks one chain; `kind` is "frame", "groupby", "series" or "value"."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.kind = "frame"
        self.carry: set[Any] | None = ALL  # columns the value is made of
        self.cols: dict[Any, None] = {}  # columns read besides (keys, masks, sort keys)
        self.mcols: dict[Any, None] = {}  # the same, after a merge
        self.rows = False
        self.extra: list[tuple[str, tuple[Any, ...]]] = []  # reads of other frames
        self.others: list[ast.AST] = []
        self.calls: list[ast.Call] = []
        self.computed: list[tuple[str, ast.AST]] = []
        self.right: list[tuple[str, set[Any] | None]] = []  # merged frames and their carry
        self.across = False  # a series that is one row across the carried columns

    def read_cols(self, labels: list[Any]) -> None:
        # after a merge, a column comes from one side or the other
        (self.mcols if self.right else self.cols).update(dict.fromkeys(labels))

    def select(self, labels: list[Any], one: bool) -> None:
        if self.carry is not ALL and not set(labels) <= self.carry:
            raise _Whole  # a column the value does not hold: the model lost track
        known = {c for c, _ in self.computed}
        if known & set(labels):
            # a computed column: its own reads (visited as others), and the rows
            self.computed = [(c, v) for c, v in self.computed if c in labels]
            self.carry = set(labels) - known
        else:
            self.carry = set(labels)
        self.kind = "series" if one else "frame"

    def value(self) -> None:
        """The value is now computed from what the chain carries: no further links
        read the frames."""
        self.kind = "value"

    # -- links -------------------------------------------------------------------

    def subscript(self, sl: ast.AST) -> None:
        if self.kind == "value":
            self.others.append(sl)
            return
        labels = _labels(sl)
        if labels is not None and self.kind in ("frame", "groupby"):
            self.select(labels, one=not isinstance(sl, (ast.List, ast.Tuple)))
            return
        if self.kind == "series" and self.across and labels is not None:
            # df.iloc[0]['k']: the label is a column of that row
            self.select(labels, one=not isinstance(sl, (ast.List, ast.Tuple)))
            self.value()
            return
        if self.kind == "series":
            self.rows = True
            self.others.append(sl)
            return
        if self.kind == "frame":
            # a mask, a slice of rows, or a label held in a variable: the value holds at
            # most the columns it held (a superset is read), selected by the expression's
            # own reads (visited as usual)
            self.rows = True
            self.others.append(sl)
            return
        raise _Whole

    def indexer(self, name: str, sl: ast.AST) -> None:
        if self.kind == "value":
            self.others.append(sl)
            return
        rows, cols = (
            (sl.elts[0], sl.elts[1])
            if isinstance(sl, ast.Tuple) and len(sl.elts) == 2
            else (sl, None)
        )
        if isinstance(sl, ast.Tuple) and len(sl.elts) != 2:
            raise _Whole
        if not (isinstance(rows, ast.Slice) and rows.lower is rows.upper is rows.step is None):
            self.rows = True
            self.others.append(rows)
        if cols is None or (isinstance(cols, ast.Slice) and cols.lower is cols.upper is None):
            if self.kind == "frame" and not isinstance(rows, ast.Slice):
                ok, _ = _label(rows)
                if ok and name in ("loc", "iloc"):
                    self.kind = "series"  # one row across the carried columns
                    self.across = True
            return
        if name in ("iloc", "iat"):
            raise _Whole  # positions of columns: labels unknown before the cell runs
        labels = _labels(cols)
        if labels is None or self.kind not in ("frame", "series"):
            raise _Whole
        if self.kind == "frame":
            self.select(labels, one=not isinstance(cols, (ast.List, ast.Tuple)))

    def attribute(self, name: str) -> None:
        if self.kind == "value":
            return
        if self.kind == "frame":
            if name in _ROWS_ATTRS:
                self.rows = True
                self.carry = set()
                self.kind = "value"
                return
            if name in ("shape", "size", "columns", "dtypes", "T", "values", "axes", "ndim"):
                raise _Whole
            if name.startswith("_"):
                raise _Whole
            # df.col: a column (the runtime checks it is one; otherwise the whole frame)
            self.select([name], one=True)
            return
        if self.kind == "groupby":
            if name in _KEY_ONLY:
                self.carry = set()
                self.value()
                return
            self.select([name], one=True)
            return
        if self.across and not name.startswith("_") and name not in ("index", "name"):
            self.select([name], one=True)  # df.iloc[0].k: a column of that row
            self.value()
            return
        # series: .str, .dt, .index, .values ... stay on the same column

    def method(self, name: str, call: ast.Call) -> None:
        self.calls.append(call)
        args = [*call.args, *(k.value for k in call.keywords)]
        if self.kind == "value":
            self.others.extend(args)
            return
        if any(isinstance(a, ast.Starred) for a in call.args) or any(
            k.arg is None for k in call.keywords
        ):
            raise _Whole
        if self.kind == "series":
            self.rows = True
            self.others.extend(args)
            if name in ("groupby",):
                self.kind = "groupby"
            return
        if self.kind == "groupby":
            self.rows = True
            if name in _PER_COLUMN:
                # each column of the result comes from the same column of each group
                self.others.extend(args)
                self.kind = "frame"
                return
            if name in _KEY_ONLY:
                self.carry = set()
            elif name in ("agg", "aggregate"):
                self._agg(call)
            else:
                self.others.extend(args)
            self.value()
            return
        self.rows = True
        if name in _ROW_METHODS:
            self.others.extend(args)
            return
        if name in ("sort_values", "nlargest", "nsmallest", "set_index"):
            pos = 1 if name != "sort_values" and name != "set_index" else 0
            key = _arg(
                call,
                pos,
                "by" if name == "sort_values" else ("keys" if name == "set_index" else "columns"),
            )
            labels = _labels(key)
            if labels is None:
                raise _Whole
            self.read_cols(labels)
            self.others.extend(a for a in args if a is not key)
            return
        if (
            name in ("dropna", "drop_duplicates", "duplicated")
            and (subset := _arg(call, None if name == "dropna" else 0, "subset")) is not None
        ):
            labels = _labels(subset)
            if labels is None:
                raise _Whole
            self.read_cols(labels)
            self.others.extend(a for a in args if a is not subset)
            if name == "duplicated":
                self.carry = set()
                self.kind = "series"
            return
        if name == "query":
            text = call.args[0] if call.args else None
            if not (isinstance(text, ast.Constant) and isinstance(text.value, str)):
                raise _Whole
            names = _query_names(text.value)
            if names is None:
                raise _Whole
            self.read_cols(names)
            self.others.extend(args[1:])
            return
        if name == "groupby":
            by = _arg(call, 0, "by")
            if by is None:
                raise _Whole
            labels = _labels(by)
            if labels is not None:
                self.read_cols(labels)
            elif isinstance(by, (ast.List, ast.Tuple)):
                for e in by.elts:
                    ok, v = _label(e)
                    if ok:
                        self.read_cols([v])
                    else:
                        self.others.append(e)
            elif _keys_from_frame(by, self.root):
                # df.groupby(df['k']), df.groupby(df['at'].dt.to_period('M')): an
                # expression of the frame's columns, read as usual
                self.others.append(by)
            else:
                raise _Whole
            self.others.extend(a for a in args if a is not by)
            self.kind = "groupby"
            return
        if name == "resample":
            # df.resample('MS', on='at'): groups by that column's periods; without
            # ``on``, by the index (the rows)
            if any(k.arg == "level" for k in call.keywords):
                raise _Whole
            on = _arg(call, None, "on")
            if on is not None:
                labels = _labels(on)
                if labels is None:
                    raise _Whole
                self.read_cols(labels)
            self.others.extend(a for a in args if a is not on)
            self.kind = "groupby"
            return
        if name == "assign":
            for k in call.keywords:
                if isinstance(k.value, ast.Lambda):
                    raise _Whole  # it sees the whole frame
                assert k.arg is not None
                self.computed.append((k.arg, k.value))
            self.others.extend(call.args)
            return
        if name in ("pivot_table", "pivot"):
            fields = [_arg(call, None, f) for f in ("index", "columns", "values")]
            if name == "pivot_table" and fields[2] is None and call.args:
                fields[2] = call.args[0]
            if fields[2] is None:
                raise _Whole  # every other column is aggregated
            for f in fields:
                if f is None:
                    continue
                labels = _labels(f)
                if labels is None:
                    raise _Whole
                self.read_cols(labels)
            self.others.extend(a for a in args if a not in fields)
            self.carry = set()
            self.value()
            return
        if name in ("agg", "aggregate"):
            self._agg(call)
            self.value()
            return
        if name == "merge":
            self._merge(call)
            return
        if name in _WHOLE_METHODS:
            self.others.extend(args)
            self.value()
            return
        raise _Whole

    def _agg(self, call: ast.Call) -> None:
        spec = call.args[0] if call.args else None
        if isinstance(spec, ast.Dict):
            labels = []
            for k in spec.keys:
                ok, v = _label(k)
                if not ok:
                    raise _Whole
                labels.append(v)
            self.select(labels, one=False)
            self.others.extend(spec.values)
            self.others.extend(k.value for k in call.keywords)
            return
        named = [k for k in call.keywords if isinstance(k.value, ast.Tuple)]
        if spec is None and named and len(named) == len(call.keywords):
            labels = []
            for k in named:
                t = k.value
                assert isinstance(t, ast.Tuple)
                ok, v = _label(t.elts[0]) if t.elts else (False, None)
                if not ok:
                    raise _Whole
                labels.append(v)
                self.others.extend(t.elts[1:])
            self.select(labels, one=False)
            return
        self.others.extend([*call.args, *(k.value for k in call.keywords)])

    def _merge(self, call: ast.Call) -> None:
        right = _arg(call, 0, "right")
        if not isinstance(right, ast.Name) or right.id == self.root:
            raise _Whole
        on = _arg(call, None, "on")
        left_on = _arg(call, None, "left_on")
        right_on = _arg(call, None, "right_on")
        by_index = any(
            k.arg in ("left_index", "right_index")
            and isinstance(k.value, ast.Constant)
            and k.value.value is True
            for k in call.keywords
        )
        if on is not None:
            keys = _labels(on)
            if keys is None:
                raise _Whole
            lkeys, rkeys = keys, keys
        elif left_on is not None or right_on is not None or by_index:
            lkeys = _labels(left_on) if left_on is not None else []
            rkeys = _labels(right_on) if right_on is not None else []
            if lkeys is None or rkeys is None:
                raise _Whole
        else:
            raise _Whole  # the columns both frames share: known only at run time
        if any(k.arg not in _MERGE_KEYWORDS for k in call.keywords):
            raise _Whole  # suffixes, copy ...: not modelled
        self.read_cols(lkeys)
        self.extra.append((right.id, (["fcols", rkeys],)))
        self.extra.append((right.id, (["rows", None],)))
        self.right.append((right.id, ALL))


def _keys_from_frame(by: ast.expr, root: str) -> bool:
    """Whether groupby keys ``by`` are an expression computed from the frame ``root``, so
    that reading it as usual reads what the grouping uses: ``df['k']``,
    ``df['at'].dt.to_period('M')``, ``pd.cut(df['x'], 4)``, ``df['a'] > 0``. Not a
    function of the index labels (a lambda), nor a ``pd.Grouper``, which names a
    column by a string no reading of the expression sees."""
    uses_root = False
    for node in ast.walk(by):
        if isinstance(node, ast.Lambda):
            return False
        if isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called == "Grouper":
                return False
        if isinstance(node, ast.Name) and node.id == root:
            uses_root = True
    return uses_root and not isinstance(by, ast.Name)


def _selects_first(links: list[ast.AST]) -> bool:
    """``df['a'].sum()``, ``arr[0].sum()``, ``df.a.mean()``: one part, then what is done
    with it; the plain access path already reads exactly that part."""
    first = links[0]
    if isinstance(first, ast.Subscript):
        return _constant(first.slice)[0]
    if isinstance(first, ast.Attribute) and len(links) > 1:
        nxt = links[1]
        return not (isinstance(nxt, ast.Call) and nxt.func is first) and first.attr not in (
            "loc",
            "iloc",
            "at",
            "iat",
            "shape",
            *_ROWS_ATTRS,
        )
    return False


def _interesting(links: list[ast.AST]) -> bool:
    """Whether the chain has a link the plain access path does not already read exactly."""
    for i, link in enumerate(links):
        if isinstance(link, ast.Call):
            return True
        if isinstance(link, ast.Attribute) and link.attr in _ROWS_ATTRS | {"shape"}:
            return True
        if (
            isinstance(link, ast.Subscript)
            and _labels(link.slice) is None
            and not _constant(link.slice)[0]
        ):
            prev = links[i - 1] if i else None
            if not (isinstance(prev, ast.Attribute) and prev.attr in ("loc", "at")):
                return True
    return False


def read_model(node: ast.AST, target: str | None = None) -> FrameRead | None:
    """The reads of a pandas chain rooted at a name, or None when the chain is not one
    the model covers better than a plain access path (the caller then reads as usual).

    `target` is the name the value is bound to (``df2 = df.assign(..)``): a frame-valued
    result then carries its columns to it, each with its own lineage.
    """
    found = _links(node)
    if found is None:
        return None
    name, links = found
    if (
        len(links) >= 2
        and isinstance(links[0], ast.Attribute)
        and links[0].attr == "merge"
        and isinstance(links[1], ast.Call)
        and len(links[1].args) >= 2
        and isinstance(links[1].args[0], ast.Name)
    ):
        # pd.merge(left, right, ..): left.merge(right, ..)
        call = links[1]
        left = call.args[0]
        assert isinstance(left, ast.Name)
        method = ast.Attribute(value=left, attr="merge", ctx=ast.Load())
        links = [method, ast.Call(func=method, args=call.args[1:], keywords=call.keywords)]
        links += found[1][2:]
        name = left
    elif (
        len(links) >= 2
        and isinstance(links[0], ast.Attribute)
        and links[0].attr == "pivot_table"
        and isinstance(links[1], ast.Call)
        and links[1].args
        and isinstance(links[1].args[0], ast.Name)
        and not any(k.arg == "data" for k in links[1].keywords)
    ):
        # pd.pivot_table(df, ..): df.pivot_table(..)
        call = links[1]
        left = call.args[0]
        assert isinstance(left, ast.Name)
        method = ast.Attribute(value=left, attr="pivot_table", ctx=ast.Load())
        links = [method, ast.Call(func=method, args=call.args[1:], keywords=call.keywords)]
        links += found[1][2:]
        name = left
    if not _interesting(links) or _selects_first(links):
        return None
    m = _Model(name.id)
    try:
        i = 0
        while i < len(links):
            link = links[i]
            nxt = links[i + 1] if i + 1 < len(links) else None
            if isinstance(link, ast.Attribute):
                if link.attr in ("loc", "iloc", "at", "iat") and isinstance(nxt, ast.Subscript):
                    m.indexer(link.attr, nxt.slice)
                    i += 2
                    continue
                if isinstance(nxt, ast.Call) and nxt.func is link:
                    m.method(link.attr, nxt)
                    i += 2
                    continue
                if link.attr == "shape" and m.kind == "frame" and isinstance(nxt, ast.Subscript):
                    ok, v = _label(nxt.slice)
                    if not (ok and v == 0):
                        raise _Whole
                    m.rows = True
                    m.carry = set()
                    m.value()
                    i += 2
                    continue
                m.attribute(link.attr)
            elif isinstance(link, ast.Subscript):
                m.subscript(link.slice)
            else:
                assert isinstance(link, ast.Call)
                m.calls.append(link)
                m.others.extend([*link.args, *(k.value for k in link.keywords)])
                if m.kind != "value":
                    raise _Whole  # calling the frame itself
            i += 1
    except _Whole:
        return None
    return _emit(m, target)


def rows_model(node: ast.AST) -> FrameRead | None:
    """``len(<chain>)``: the rows (and what selected them), not the columns."""
    if isinstance(node, ast.Name):
        return FrameRead([(node.id, (["rows", None],))], [], [], [])
    found = read_model(node)
    if found is None:
        return None
    # the columns a frame-valued chain carries do not decide how many rows it has
    reads = [(root, path) for root, path in found.reads if not (path and path[0][0] == "carry")]
    return FrameRead(reads, found.others, found.calls, [])


def _emit(m: _Model, target: str | None) -> FrameRead:
    reads: list[tuple[str, tuple[Any, ...]]] = []
    if m.rows:
        reads.append((m.root, (["rows", None],)))
    cols = dict(m.cols)
    computed = list(m.computed)
    if m.carry is ALL:
        if m.kind == "frame":
            explicit = [c for c, _ in computed]
            reads.append((m.root, (["carry", [target, explicit, "_x" if m.right else ""]],)))
            for right, _ in m.right:
                reads.append((right, (["carry", [target, explicit, "_y"]],)))
        else:
            reads.append((m.root, ()))
            for right, _ in m.right:
                reads.append((right, ()))
            computed = []
    else:
        cols.update(dict.fromkeys(m.carry))
        if m.right:
            # after a merge, a selected column comes from one side or the other
            reads.append((m.root, (["mcols", [list(m.carry), "_x"]],)))
            for right, _ in m.right:
                reads.append((right, (["mcols", [list(m.carry), "_y"]],)))
            cols = {c: None for c in cols if c not in m.carry}
        if m.kind != "frame":
            computed = []
    if cols:
        reads.append((m.root, (["fcols", list(cols)],)))
    if m.mcols:
        reads.append((m.root, (["mcols", [list(m.mcols), "_x"]],)))
        for right, _ in m.right:
            reads.append((right, (["mcols", [list(m.mcols), "_y"]],)))
    reads.extend(m.extra)
    others = [*m.others, *(v for _, v in m.computed)]
    return FrameRead(reads, others, m.calls, computed)
