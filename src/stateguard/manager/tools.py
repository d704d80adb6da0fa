"""Tool actions: evidence gathering, never a change to the worker's namespace."""

from __future__ import annotations

import json

from stateguard.lineage import analyze_cell
from stateguard.manager import actions as A
from stateguard.manager.policies.base import PolicyContext


def run_tool(action: A.ToolAction, ctx: PolicyContext) -> str:
    """Run one tool action; the result is compact text for the policy."""
    if isinstance(action, A.CheckExecution):
        step = next((s for s in ctx.steps if s.step == action.step_id), None)
        if step is None:
            return f"no step {action.step_id}"
        ex = step.execution
        if ex is None:
            return f"step {action.step_id} ran no code"
        err = f" {ex.error.ename}: {ex.error.evalue}" if ex.error else ""
        return json.dumps(
            {
                "status": ex.status,
                "stdout": ex.stdout[-1500:],
                "result": ex.result,
                "error": err.strip() or None,
                "created": list(step.cell.created) if step.cell else [],
            }
        )
    if isinstance(action, A.InspectPython):
        analysis = analyze_cell(action.code)
        if analysis.syntax_error:
            return f"syntax error: {analysis.syntax_error}"
        return json.dumps(
            {
                "reads": list(analysis.reads),
                "writes": list(analysis.writes),
                "mutates": list(analysis.mutates),
                "calls": list(analysis.calls),
                "statements": len(analysis.statements),
            }
        )
    if isinstance(action, A.CompilePython):
        try:
            compile(action.code, "<probe>", "exec")
        except SyntaxError as exc:
            return f"does not compile: {exc.msg} (line {exc.lineno})"
        return "compiles"
    if isinstance(action, A.RunProbe):
        res = ctx.probe(action.code)
        if res.error is not None:
            return f"{res.status}: {res.error.ename}: {res.error.evalue}"
        return json.dumps(
            {"status": res.status, "stdout": res.stdout[-1500:], "result": res.result}
        )
    if isinstance(action, A.LoadState):
        try:
            return ctx.load_state(action.state_id).model_dump_json()
        except Exception as exc:
            return f"error: {exc}"
    if isinstance(action, A.TraceLineage):
        versions = ctx.graph.versions(action.name)
        if not versions:
            return f"no versions of {action.name}"
        out = []
        for v in versions:
            why = ctx.graph.why_stale(v.key)
            out.append(
                {
                    "version": v.key,
                    "cell": v.cell,
                    "kind": v.kind,
                    "derived_from": list(v.parents),
                    "value": v.summary,
                    "stale": why.describe() if why else None,
                }
            )
        return json.dumps(out)
    return f"unknown tool {action!r}"
