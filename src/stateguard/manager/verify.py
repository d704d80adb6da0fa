"""The one verification of a state: the commit gate and the deterministic policy use it.

A stale input is an alarm on lineage; a failing executable constraint is an alarm on the
data (the constraint's code ran on a copy of the namespace and did not hold).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from stateguard.finding import Finding
from stateguard.kernel import ProbeResult
from stateguard.lineage import LineageGraph
from stateguard.manager.notes import EvidenceFacts
from stateguard.state import Constraint, VariableRef

Probe = Callable[[str], ProbeResult]


def is_current(graph: LineageGraph, ref: VariableRef) -> bool:
    """The bound version is still what a read of its name (or part) resolves to."""
    current = graph.current(ref.name)
    return current is not None and current.key == ref.key


def constraint_failures(constraints: Iterable[Constraint], probe: Probe) -> list[Finding]:
    """Executable constraints that do not hold (run on a copy of the namespace)."""
    out: list[Finding] = []
    for c in constraints:
        if not c.code:
            continue
        res = probe(c.code)
        if not res.ok or res.value is False or (res.result or "").strip() == "False":
            detail = f" ({res.error.ename}: {res.error.evalue})" if res.error else ""
            out.append(
                Finding(
                    check="constraint_failed",
                    severity="alarm",
                    message=f"constraint '{c.text}' does not hold{detail}",
                    basis=("data",),
                    facts=EvidenceFacts(
                        template="constraint",
                        constraint=c.text,
                        detail=f"{res.error.ename}: {res.error.evalue}" if res.error else "",
                    ).as_facts(),
                )
            )
    return out


def stale_inputs(
    graph: LineageGraph, used: Sequence[VariableRef], inputs: Iterable[str]
) -> list[Finding]:
    """Current bound versions the state read from before its span that are stale."""
    inputs = set(inputs)
    out: list[Finding] = []
    for ref in used:
        if ref.key not in inputs:
            continue  # versions the span created itself (e.g. a backup copy) are its output
        try:
            why = graph.why_stale(ref.key)
        except KeyError:
            continue
        if why is not None and is_current(graph, ref):
            out.append(
                Finding(
                    check="stale_use",
                    severity="alarm",
                    message=why.describe(),
                    basis=("lineage",),
                    variables=(ref.key,),
                    facts=EvidenceFacts(
                        template="stale_input",
                        outdated=why.outdated,
                        superseding=(why.superseded_by,),
                        superseding_cell=why.superseding_cell,
                    ).as_facts(),
                )
            )
    return out


def verify_state(
    graph: LineageGraph,
    used: Sequence[VariableRef],
    inputs: Iterable[str],
    constraints: Iterable[Constraint],
    probe: Probe,
) -> list[Finding]:
    """Everything that must hold before a state is committed."""
    return stale_inputs(graph, used, inputs) + constraint_failures(constraints, probe)
