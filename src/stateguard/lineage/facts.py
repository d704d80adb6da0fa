"""Def/use facts of a cell: what the static pass produces (pure data)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict

INPLACE_METHODS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "pop",
        "remove",
        "clear",
        "update",
        "sort",
        "reverse",
        "setdefault",
        "popitem",
        "add",
        "discard",
        "difference_update",
        "intersection_update",
        "symmetric_difference_update",
        "__setitem__",
        "__delitem__",
        "fill",
        "resize",
        "put",
        "itemset",
        "setflags",
    }
)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class FunctionInfo(_Frozen):
    """What calling a function (or instantiating a class) defined in a cell touches."""

    name: str
    global_reads: tuple[str, ...] = ()
    """Module-level names the body (and nested bodies) read when it runs."""
    global_writes: tuple[str, ...] = ()
    """Module-level names the body rebinds through ``global`` declarations."""
    return_reads: tuple[str, ...] | None = None
    """Module-level names whose values can flow into what the function returns (see
    `lineage._returns`); None when not known (every global it reads)."""
    return_items: tuple[tuple[str, ...], ...] | None = None
    """When every ``return`` gives a tuple of one length: `return_reads` per item."""
    init_attrs: tuple[tuple[str, tuple[str, ...], bool], ...] = ()
    """For a class whose ``__init__`` sets attributes plainly (``self.x = 10``, ``self.y =
    y``, ``self.n = n``): (attribute, globals its value read, whether it read a parameter)
    per attribute; empty when ``__init__`` does anything that could set others."""
    guarded_reads: tuple[tuple[str, int | None], ...] = ()
    """(name, guarded block key or None) for each global read of the body itself: the
    runtime counts a guarded read only when its block ran during the call."""


class Access(NamedTuple):
    """One read or write of a name or of a part of it, at a constant path.

    `path` holds the steps described in `lineage._paths`; `exact` is False when
    the path stopped at a step that is not constant (the access then stands for
    the whole prefix). `guard` is the innermost guarded block the access sits in.
    A named tuple, not a model: a cell of a few hundred statements makes many.
    """

    kind: str
    """"read", "bind" (the name is rebound), "store" (a part is written), "delete", or
    "flow" (a load of a name bound earlier in the same statement: ``bar`` in ``with make()
    as bar: x = bar + 7``)."""
    root: str
    path: tuple[Any, ...] = ()
    exact: bool = True
    guard: int | None = None
    deps: tuple[int, ...] | None = None
    """For bind/store: indexes (into the statement's accesses) of the reads the value
    is computed from; None means every read of the statement."""
    literal: bool = False
    """A part built by the literal of the bind just before it (``{'p': p}``)."""


class StatementInfo(_Frozen):
    """Def/use facts of one top-level statement of a cell."""

    index: int
    lineno: int
    end_lineno: int
    reads: tuple[str, ...] = ()
    """Global names read from outside the statement, in first-use order."""
    writes: tuple[str, ...] = ()
    """Global names (re)bound by the statement, in order."""
    deletes: tuple[str, ...] = ()
    mutates: tuple[str, ...] = ()
    """Roots of subscript/attribute stores, ``del x[..]`` and augmented stores."""
    method_receivers: tuple[str, ...] = ()
    """Roots ``x`` of calls ``x.m(...)`` (possible in-place mutation)."""
    inplace_calls: tuple[str, ...] = ()
    """Roots of calls that are in-place by convention (``inplace=True``, ``list.append``…)."""
    store_keys: tuple[tuple[str, str | None], ...] = ()
    """(root, key) for each in-place store: ``df['cost'] = ..`` gives ("df", "['cost']");
    the key is None when not a constant (``df.loc[mask, 'x']``, ``x[i]``)."""
    calls: tuple[str, ...] = ()
    """Global names called directly, ``f(...)``."""
    method_calls: tuple[tuple[str, str], ...] = ()
    """(receiver, method) for calls ``x.m(...)`` on a global name."""
    functions: tuple[FunctionInfo, ...] = ()
    """Functions, lambdas bound to a name, and classes defined by this statement."""
    star_import: bool = False
    accesses: tuple[Access, ...] = ()
    """Reads and writes at part granularity, in evaluation order."""
    call_args: tuple[tuple[str, str], ...] = ()
    """(callee, root) for each global root passed to a call: ``f(df)`` gives ("f", "df"),
    ``np.sum(a)`` gives ("np.sum", "a"); the runtime decides whether the callee may
    change its arguments."""
    guards: tuple[int, ...] = ()
    """Keys of the guarded blocks inside the statement."""

    @classmethod
    def build(cls, values: dict[str, Any]) -> StatementInfo:
        """Construct from already typed values of every field (the dict is taken, not
        copied), without validation: the static pass builds hundreds per cell, and
        `model_construct`, or even passing the fields as keywords, costs more than the
        pass itself."""
        obj = cls.__new__(cls)
        _set = object.__setattr__
        _set(obj, "__dict__", values)
        _set(obj, "__pydantic_fields_set__", set(values))
        _set(obj, "__pydantic_extra__", None)
        _set(obj, "__pydantic_private__", None)
        return obj


class CellAnalysis(_Frozen):
    """Static def/use facts of a whole cell."""

    statements: tuple[StatementInfo, ...] = ()
    syntax_error: str | None = None
    plain: tuple[int, ...] = ()
    """Indexes of the statements that are ``name = <names, constants and operators>``:
    every name they read flows into the one name they bind, which their name-level
    facts (`StatementInfo.reads`, `writes`) already say. The runtime pass sends their
    statements without `accesses` (the graph then works from the name-level facts, with
    the same result), which halves the report of a cell of many small statements."""

    @property
    def reads(self) -> tuple[str, ...]:
        """Names the cell reads from the namespace it started with, in order."""
        bound: set[str] = set()
        out: dict[str, None] = {}
        for st in self.statements:
            for n in st.reads:
                if n not in bound:
                    out.setdefault(n)
            bound.update(st.writes)
        return tuple(out)

    @property
    def writes(self) -> tuple[str, ...]:
        """Names the cell binds, in order."""
        return _ordered(n for st in self.statements for n in st.writes)

    @property
    def mutates(self) -> tuple[str, ...]:
        """Names the cell syntactically mutates in place."""
        return _ordered(n for st in self.statements for n in st.mutates)

    @property
    def calls(self) -> tuple[str, ...]:
        """Global names the cell calls."""
        return _ordered(n for st in self.statements for n in st.calls)

    def function(self, name: str) -> FunctionInfo | None:
        """The last definition of `name` in this cell, if any."""
        found = None
        for st in self.statements:
            for f in st.functions:
                if f.name == name:
                    found = f
        return found


def _ordered(names: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))
