"""The one verification of a state: the commit gate and the deterministic policy use it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from stateguard.kernel import ProbeResult
from stateguard.lineage import LineageGraph
from stateguard.manager.notes import Evidence
from stateguard.state import Constraint, VariableRef

Probe = Callable[[str], ProbeResult]


def is_current(graph: LineageGraph, ref: VariableRef) -> bool:
    """The bound version is still what a read of its name (or part) resolves to."""
    current = graph.current(ref.name)
    return current is not None and current.key == ref.key


def constraint_failures(constraints: Iterable[Constraint], probe: Probe) -> list[Evidence]:
    """Executable constraints that do not hold (run on a copy of the namespace)."""
    out: list[Evidence] = []
    for c in constraints:
        if not c.code:
            continue
        res = probe(c.code)
        if not res.ok or res.value is False or (res.result or "").strip() == "False":
            detail = f" ({res.error.ename}: {res.error.evalue})" if res.error else ""
            out.append(
                Evidence(
                    check="constraint_failed",
                    message=f"constraint '{c.text}' does not hold{detail}",
                    finding="constraint",
                    constraint=c.text,
                    detail=f"{res.error.ename}: {res.error.evalue}" if res.error else "",
                )
            )
    return out


def stale_inputs(
    graph: LineageGraph, used: Sequence[VariableRef], inputs: Iterable[str]
) -> list[Evidence]:
    """Current bound versions the state read from before its span that are stale."""
    inputs = set(inputs)
    out: list[Evidence] = []
    for ref in used:
        if ref.key not in inputs:
            continue  # versions the span created itself (e.g. a backup copy) are its output
        try:
            why = graph.why_stale(ref.key)
        except KeyError:
            continue
        if why is not None and is_current(graph, ref):
            out.append(
                Evidence(
                    check="stale_use",
                    message=why.describe(),
                    variables=(ref.key,),
                    superseding=(why.superseded_by,),
                    finding="stale_input",
                    outdated=why.outdated,
                    superseding_cell=why.superseding_cell,
                )
            )
    return out


def verify_state(
    graph: LineageGraph,
    used: Sequence[VariableRef],
    inputs: Iterable[str],
    constraints: Iterable[Constraint],
    probe: Probe,
) -> list[Evidence]:
    """Everything that must hold before a state is committed."""
    return stale_inputs(graph, used, inputs) + constraint_failures(constraints, probe)
