"""Assemble the self-contained ``report.html`` of a run directory.

The page loads nothing: CSS is inlined, the graph is inline SVG computed in
Python, figures are data URIs, and there is no script at all. A
Content-Security-Policy forbids every fetch and every script, so even a
rendering bug cannot make a question or an observation execute.
"""

from __future__ import annotations

import os
from pathlib import Path

from stateguard.errors import StateguardError
from stateguard.report.fmt import DASH, count, esc, seconds, state_link
from stateguard.report.graph_svg import render_legend, render_state_graph
from stateguard.report.run import RunData, RunTotals, load_run
from stateguard.report.style import CSS
from stateguard.report.timeline import render_timeline
from stateguard.state import AnalyticalState

REPORT_FILE = "report.html"
"""Default file name of the report, written inside the run directory."""

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'"


def _card(label: str, value: str, sub: str = "") -> str:
    sub_html = f'<div class="sub">{sub}</div>' if sub else ""
    return (
        f'<div class="card"><div class="label">{esc(label)}</div>'
        f'<div class="value">{value}</div>{sub_html}</div>'
    )


def _stale_text(run: RunData) -> str:
    """What is stale, in the words of the graph and the timeline: stale committed states and
    the reads of stale versions the timeline marks ("none stale" only when neither)."""
    parts = []
    if run.stale:
        parts.append(f"{len(run.stale)} stale state{'s' if len(run.stale) != 1 else ''}")
    reads = run.stale_reads
    if reads:
        parts.append(f"{reads} stale read{'s' if reads != 1 else ''} in the timeline")
    if parts:
        return ", ".join(parts)
    return "none stale" if run.states_recorded else ""


def _summary_cards(run: RunData) -> str:
    s: RunTotals = run.summary
    if s.accuracy is None:
        accuracy = _card("accuracy", DASH, "no gold answers")
    else:
        accuracy = _card("accuracy", f"{s.accuracy:.0%}", f"{s.correct} of {s.graded} graded")
    if run.states_recorded:
        states = _card("states", count(len(run.states)), esc(_stale_text(run)))
    else:
        states = _card("states", DASH, esc(_stale_text(run) or "no states recorded"))
    cards = [
        _card("turns", count(s.turns), f"{s.answered} answered"),
        accuracy,
        _card("state hints", count(s.hints)),
        _card("repairs", count(s.repairs)),
        _card("manager LLM calls", count(s.manager_llm_calls)),
        _card("total tokens", count(s.tokens)),
        _card("wall time", seconds(s.wall_time)),
        states,
    ]
    if run.notebook is not None:
        nb = run.notebook
        text = esc(nb.error) if nb.error else f"{nb.code_cells} code cells"
        cards.append(_card("notebook", "analysis.ipynb", text))
    return f'<div class="cards" id="summary">{"".join(cards)}</div>'


def _run_facts(run: RunData) -> str:
    meta = run.meta
    facts = [
        f"{label} <b>{esc(v)}</b>"
        for label, v in (("task", meta.task), ("manager", meta.manager), ("model", meta.model))
        if v
    ]
    out = f'<p class="facts">{" · ".join(facts)}</p>' if facts else ""
    if meta.error:
        out += f'<p class="run-error">run stopped early: {esc(meta.error)}</p>'
    return out


def _graph_section(run: RunData) -> str:
    if not run.states:
        why = "no states recorded" if not run.states_recorded else "no states committed"
        return f'<p class="empty" id="no-states">{why}</p>'
    notes = []
    if run.stale:
        notes.append(f"{len(run.stale)} of {len(run.states)} committed states are stale.")
    if run.stale_reads:
        notes.append(f"{run.stale_reads} read(s) of stale versions are marked ⚠ in the timeline.")
    if run.drafts:
        notes.append(f"{run.drafts} draft state(s) were never committed and are not drawn.")
    note = f'<p class="graph-note">{esc(" ".join(notes))}</p>' if notes else ""
    svg = render_state_graph(run.states, run.invalidators, run.stale_marks)
    return (
        f'<div class="graph-box">{render_legend()}<div class="graph-scroll">{svg}</div>{note}</div>'
    )


def _state_card(state: AnalyticalState, run: RunData, used_by: list[tuple[str, str]]) -> str:
    invalidators = run.invalidators.get(state.id, ())
    stale = bool(invalidators)
    head = [f"<span>{esc(state.id)}</span>"]
    if state.turn is not None:
        head.append(f'<span class="turn-tag">turn {state.turn}</span>')
    if state.source_step_start is not None:
        end = state.source_step_end
        steps = f"{state.source_step_start}" + (
            f"–{end}" if end is not None and end != state.source_step_start else ""
        )
        head.append(f'<span class="turn-tag">steps {steps}</span>')
    if stale:
        by = ", ".join(state_link(i) for i in invalidators)
        head.append(f'<span class="badge stale-badge">stale — invalidated by {by}</span>')
    marks = run.stale_marks.get(state.id, ())
    if state.unverified_steps:
        steps = ", ".join(map(str, state.unverified_steps))
        head.append(
            f'<span class="badge stale-badge">committed on unverified lineage (steps {steps})'
            "</span>"
        )
    body = [f"<h3>{''.join(head)}</h3>", f'<p class="issue">{esc(state.issue)}</p>']
    if marks:
        items = "".join(f"<li><code>{esc(m.summary)}</code></li>" for m in marks)
        body.append(f'<h4>Stale because</h4><ul class="stale-why">{items}</ul>')

    body.append("<h4>Variables</h4>")
    if state.used_variables:
        items = "".join(
            f"<li><code>{esc(v.key)}</code> = {esc(v.value_summary) if v.value_summary else DASH}"
            + (f' <span class="role">{esc(v.role)}</span>' if v.role else "")
            + "</li>"
            for v in state.used_variables
        )
        body.append(f'<ul class="vars">{items}</ul>')
    else:
        body.append('<p class="empty">none</p>')
    if state.constraints:
        items = "".join(
            f"<li>{esc(c.text)}" + (f" <code>{esc(c.code)}</code>" if c.code else "") + "</li>"
            for c in state.constraints
        )
        body.append(f"<h4>Constraints</h4><ul>{items}</ul>")
    if state.conclusions:
        items = "".join(f"<li>{esc(c)}</li>" for c in state.conclusions)
        body.append(f"<h4>Conclusions</h4><ul>{items}</ul>")
    relations = []
    for rel in state.relations:
        target = "" if rel.related_state_id is None else " → " + state_link(rel.related_state_id)
        relations.append(
            f'<li><span class="rel rel-{esc(rel.type)}">{esc(rel.type)}</span>{target}</li>'
        )
    if relations:
        body.append(f"<h4>Relations</h4><ul>{''.join(relations)}</ul>")
    if used_by:
        items = "".join(
            f'<li>{state_link(other)} via <span class="rel rel-{esc(t)}">{esc(t)}</span></li>'
            for other, t in used_by
        )
        body.append(f'<h4>Referenced by</h4><ul class="used-by">{items}</ul>')
    css = "state-card stale" if stale else "state-card"
    return f'<article class="{css}" id="state-{esc(state.id)}">{"".join(body)}</article>'


def _states_section(run: RunData) -> str:
    if not run.states:
        return '<p class="empty">no states recorded</p>'
    used_by: dict[str, list[tuple[str, str]]] = {}
    for state in run.states:
        for rel in state.relations:
            if rel.related_state_id is not None:
                used_by.setdefault(rel.related_state_id, []).append((state.id, rel.type))
    cards = "".join(_state_card(s, run, used_by.get(s.id, [])) for s in run.states)
    return f'<div class="state-cards">{cards}</div>'


def render_page(run: RunData) -> str:
    """The complete HTML document for ``run``."""
    title = f"stateguard report — {run.name}"
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
        '<header class="page"><div class="inner">'
        f'<h1>stateguard report <span class="run-name">{esc(run.name)}</span></h1>'
        f"{_run_facts(run)}"
        '<nav><a href="#graph">State graph</a><a href="#timeline">Timeline</a>'
        '<a href="#states">States</a></nav>'
        f"{_summary_cards(run)}</div></header><main>"
        f'<section id="graph"><h2>State graph</h2>{_graph_section(run)}</section>'
        f'<section id="timeline"><h2>Timeline</h2>{render_timeline(run.turns)}</section>'
        f'<section id="states"><h2>States</h2>{_states_section(run)}</section>'
        "</main></body></html>\n"
    )


def write_report(run_dir: Path, out: Path | None = None) -> Path:
    """Write the report of ``run_dir`` to ``out`` (default ``run_dir/report.html``).

    Returns the written path. Raises StateguardError naming the file when
    ``trajectory.jsonl`` or ``answers.json`` is missing or unreadable;
    ``states.sqlite`` and ``analysis.ipynb`` are optional.
    """
    run = load_run(Path(run_dir))
    target = Path(out) if out is not None else Path(run_dir) / REPORT_FILE
    html = render_page(run)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        # Written whole then renamed, so a reader never sees a half-written page.
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        tmp.write_text(html, encoding="utf-8")
        os.replace(tmp, target)
    except OSError as exc:
        raise StateguardError(f"report: cannot write {target}: {exc}") from exc
    return target
