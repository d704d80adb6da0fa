"""AST fault kinds: flipped comparisons, scope changes, dropped constraints, join faults.

Each site is found with `ast` and applied as a splice of the original source (see
`stateguard.bench.inject` for the kinds and the eligibility of turns). Join faults
are the mutations of `stateguard.audit.joinfaults`, one merge call at a time.
"""

from __future__ import annotations

import ast
import io
import tokenize

from stateguard.audit.joinfaults import fault_sites
from stateguard.bench.faults import Candidate, TurnFacts, _node_info, _parse, _Source

_NEGATE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
_OP_SYMBOL = {
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
}
_MASK_METHODS = frozenset(
    {
        "isin",
        "between",
        "contains",
        "startswith",
        "endswith",
        "notna",
        "isna",
        "notnull",
        "isnull",
        "duplicated",
        "str",
    }
)
_ROUND_FUNCS = frozenset({"round", "around"})


# -- AST mutation sites ------------------------------------------------------------


def _op_edit(src: _Source, left: ast.AST, right: ast.AST, new: str) -> tuple[int, int, str] | None:
    """Replace the single comparison operator between two operands."""
    _, a = src.span(left)
    b, _ = src.span(right)
    between = src.data[a:b].decode("utf-8")
    tokens = tokenize.generate_tokens(io.StringIO(between).readline)
    try:
        for tok in tokens:
            if tok.type == tokenize.OP and tok.string in _NEGATE:
                start = a + len(between[: _offset(between, tok.start)].encode("utf-8"))
                return start, start + len(tok.string), new
    except (tokenize.TokenError, SyntaxError):
        return None
    return None


def _offset(text: str, pos: tuple[int, int]) -> int:
    lines = text.split("\n")
    return sum(len(line) + 1 for line in lines[: pos[0] - 1]) + pos[1]


def _is_str(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _is_mask(node: ast.AST) -> bool:
    if isinstance(node, ast.Compare):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd | ast.BitOr):
        return _is_mask(node.left) or _is_mask(node.right)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
        return _is_mask(node.operand)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr in _MASK_METHODS
    return False


def _flip_sites(
    src: _Source, tree: ast.AST, strings_only: bool
) -> list[tuple[ast.AST, str, tuple]]:
    sites = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
            continue
        sym = _OP_SYMBOL.get(type(node.ops[0]))
        if sym is None:
            continue
        if strings_only and not (
            sym in ("==", "!=") and (_is_str(node.left) or _is_str(node.comparators[0]))
        ):
            continue
        edit = _op_edit(src, node.left, node.comparators[0], _NEGATE[sym])
        if edit is not None:
            sites.append((node, f"{sym} -> {_NEGATE[sym]}", edit))
    return sites


def _drop_element_sites(src: _Source, tree: ast.AST) -> list[tuple[ast.AST, str, tuple]]:
    sites = []
    for node in ast.walk(tree):
        seq = None
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "isin"
            and node.args
        ):
            seq = node.args[0]
        elif (
            isinstance(node, ast.Compare)
            and len(node.ops) == 1
            and isinstance(node.ops[0], ast.In | ast.NotIn)
        ):
            seq = node.comparators[0]
        if not isinstance(seq, ast.List | ast.Tuple | ast.Set) or len(seq.elts) < 2:
            continue
        last = seq.elts[-1]
        kept = [src.text(e) for e in seq.elts[:-1]]
        opener, closer = {ast.List: "[]", ast.Tuple: "()", ast.Set: "{}"}[type(seq)]
        body = ", ".join(kept) + ("," if isinstance(seq, ast.Tuple) and len(kept) == 1 else "")
        a, b = src.span(seq)
        sites.append(
            (seq, f"drop {src.text(last)} from the category list", (a, b, opener + body + closer))
        )
    return sites


def _dropped_constraint_sites(src: _Source, tree: ast.AST) -> list[tuple[ast.AST, str, tuple]]:
    sites = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name in _ROUND_FUNCS and isinstance(func, ast.Name | ast.Attribute) and node.args:
                if isinstance(func, ast.Attribute) and not (
                    isinstance(func.value, ast.Name) and func.value.id in ("np", "numpy")
                ):
                    target = func.value  # x.round(n)
                else:
                    target = node.args[0]  # round(x, n) / np.round(x, n)
                a, b = src.span(node)
                sites.append((node, "drop rounding", (a, b, f"({src.text(target)})")))
            elif isinstance(func, ast.Attribute) and func.attr == "query":
                a, b = src.span(node)
                sites.append((node, "drop .query filter", (a, b, f"({src.text(func.value)})")))
        elif isinstance(node, ast.Subscript) and _is_mask(node.slice):
            value = node.value
            if isinstance(value, ast.Attribute) and value.attr in ("loc", "iloc"):
                a, b = src.span(node.slice)
                sites.append((node, "drop boolean-mask filter", (a, b, ":")))
            elif isinstance(node.ctx, ast.Load):
                a, b = src.span(node)
                sites.append((node, "drop boolean-mask filter", (a, b, f"({src.text(value)})")))
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple):
            first = node.slice.elts[0] if node.slice.elts else None
            if first is not None and _is_mask(first):
                a, b = src.span(first)
                sites.append((node, "drop boolean-mask filter", (a, b, ":")))
        if (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.BitAnd)
            and _is_mask(node.left)
            and _is_mask(node.right)
        ):
            a, b = src.span(node)
            sites.append((node, "drop one condition of a conjunction", (a, b, src.text(node.left))))
    return sites


_JOIN_FAULTS = {
    "key_dropped": "merge key dropped (how='cross')",
    "how_inner": "how= dropped (pandas' default inner join)",
    "how_inner_written": "how='inner' written in place of a left/right/outer join",
    "key_format": "right key rewritten as padded text (dtype/format change)",
    "duplicate_key": "a right row inserted twice (duplicated key)",
}


def _join_fault_sites(src: _Source, code: str) -> list[tuple[ast.AST, str, tuple]]:
    sites = []
    for kind, call, faulted in fault_sites(code):
        a, b = src.span(call)
        sites.append((call, f"{kind}: {_JOIN_FAULTS[kind]}", (a, b, ast.unparse(faulted))))
    return sites


def ast_candidates(kind: str, turn: TurnFacts) -> list[Candidate]:
    """Candidates of an AST kind in one turn's reference code (in source order)."""
    tree = _parse(turn.code)
    # a join fault is planted in a turn that is not rerunnable too: the replay restores
    # what the turn rebinds before the redo (`Candidate.restore`)
    restorable = kind == "join-fault" and bool(turn.rebinds)
    if tree is None or not (turn.ok and (turn.rerunnable or restorable)):
        return []
    src = _Source(turn.code)
    if kind == "flipped-comparison":
        sites = _flip_sites(src, tree, strings_only=False)
    elif kind == "scope-change":
        sites = _flip_sites(src, tree, strings_only=True) + _drop_element_sites(src, tree)
    elif kind == "dropped-constraint":
        sites = _dropped_constraint_sites(src, tree)
    elif kind == "join-fault":
        sites = _join_fault_sites(src, turn.code)
    else:
        raise ValueError(f"not an AST injection kind: {kind!r}")
    out: list[Candidate] = []
    seen: set[str] = set()
    for node, what, (a, b, new) in sorted(sites, key=lambda s: s[2][:2]):
        faulty = src.splice([(a, b, new)])
        if faulty in seen or faulty == turn.code or _parse(faulty) is None:
            continue
        seen.add(faulty)
        out.append(
            Candidate(
                kind=kind,
                turn_id=turn.turn_id,
                faulty_code=faulty,
                description=what,
                node=_node_info(src, node, new),
                after_revision=turn.after_revision,
                restore=() if turn.rerunnable else turn.rebinds,
            )
        )
    return out
