"""Per-turn timeline markup: question, steps, hints, manager events, answer."""

from __future__ import annotations

import json
from collections.abc import Sequence

from stateguard.report.fmt import (
    DASH,
    clip,
    count,
    esc,
    head,
    png_data_uri,
    seconds,
    state_link,
    value,
)
from stateguard.report.run import TimelineItem, TurnAnswer, TurnView
from stateguard.worker.events import HintDelivered, ManagerLogged, StepRecord

_MGR_DATA_CHARS = 240


def _code(code: str) -> str:
    lines = code.count("\n") + 1
    return (
        f'<details class="code"><summary>code · {lines} line{"s" if lines != 1 else ""}'
        f"</summary><pre><code>{esc(code)}</code></pre></details>"
    )


def _observation(text: str) -> str:
    if not text.strip():
        return ""
    shown, truncated = head(text)
    out = f'<div class="obs-label">observation</div><pre class="obs">{esc(shown)}</pre>'
    if truncated:
        out += (
            f'<details class="obs-full"><summary>full observation ({len(text):,} chars)'
            f"</summary><pre>{esc(text)}</pre></details>"
        )
    return out


def _execution(step: StepRecord) -> str:
    """Error line, stale reads and images of the step's execution."""
    parts = []
    execution = step.execution
    if execution is not None and execution.error is not None:
        err = execution.error
        parts.append(
            f'<div class="error-line">{esc(err.ename)}: {esc(clip(err.evalue, 300))}</div>'
        )
    if step.cell is not None and step.cell.unverified is not None:
        parts.append(
            f'<div class="stale-read">lineage unverified: {esc(step.cell.unverified)}</div>'
        )
    if step.cell is not None:
        for read in step.cell.stale_reads:
            why = read.stale.describe() if read.stale is not None else read.version
            parts.append(
                f'<div class="stale-read">read stale {esc(read.version)}: {esc(why)}</div>'
            )
    if execution is not None:
        for display in execution.displays:
            uri = png_data_uri(display.data.get("image/png"))
            if uri is not None:
                parts.append(f'<img alt="figure of step {step.step}" src="{uri}">')
    return "".join(parts)


def _step(step: StepRecord) -> str:
    execution = step.execution
    status = execution.status if execution is not None else "none"
    label = status if execution is not None else "no code run"
    head_parts = [
        f'<span class="step-no">step {step.step}</span>',
        f'<span class="badge status-{esc(status)}">{esc(label)}</span>',
    ]
    if execution is not None:
        head_parts.append(f"<span>{seconds(execution.wall_time)}</span>")
    if step.problem:
        head_parts.append(f'<span class="badge problem">{esc(step.problem)}</span>')
    body = [f'<div class="step-head">{"".join(head_parts)}</div>']
    if step.thought.strip():
        body.append(f'<div class="thought">{esc(step.thought.strip())}</div>')
    if step.code:
        body.append(_code(step.code))
    body.append(_observation(step.observation))
    body.append(_execution(step))
    if step.answer is not None:
        body.append(f'<div class="proposed"><b>proposed answer:</b> {esc(step.answer)}</div>')
    return f'<div class="step" id="step-{step.step}">{"".join(body)}</div>'


def _hint(event: HintDelivered) -> str:
    hint = event.hint
    title = "state hint" if hint.kind == "state" else "repair hint"
    when = "" if event.step is None else f" · step {event.step}"
    refs = []
    if hint.state_ids:
        refs.append("states: " + ", ".join(state_link(s) for s in hint.state_ids))
    if hint.variables:
        refs.append("variables: " + ", ".join(f"<code>{esc(v)}</code>" for v in hint.variables))
    evidence = ""
    if hint.evidence:
        items = "".join(f"<li>{esc(e)}</li>" for e in hint.evidence)
        evidence = f"<div>evidence:<ul>{items}</ul></div>"
    refs_html = f'<div class="refs">{" · ".join(refs)}{evidence}</div>' if refs or evidence else ""
    return (
        f'<div class="hint hint-{esc(hint.kind)}" data-hint-kind="{esc(hint.kind)}">'
        f'<div class="hint-head">{title}{esc(when)}</div>'
        f'<pre class="hint-text">{esc(hint.text)}</pre>{refs_html}</div>'
    )


def _manager(event: ManagerLogged) -> str:
    ev = event.event
    where = "" if ev.step is None else f" step {ev.step}"
    data = ""
    if ev.data:
        text = json.dumps(ev.data, ensure_ascii=False, default=str, sort_keys=True)
        if len(text) > _MGR_DATA_CHARS:
            data = (
                f" <code>{esc(clip(text, _MGR_DATA_CHARS))}</code>"
                f"<details><summary>all data</summary><pre>{esc(text)}</pre></details>"
            )
        else:
            data = f" <code>{esc(text)}</code>"
    return (
        f'<div class="mgr"><span class="mgr-type">manager · {esc(ev.type)}</span>'
        f"{esc(where)}{data}</div>"
    )


def _item(item: TimelineItem) -> str:
    if isinstance(item, StepRecord):
        return _step(item)
    if isinstance(item, HintDelivered):
        return _hint(item)
    return _manager(item)


def _answer(outcome: TurnAnswer) -> str:
    if outcome.correct is True:
        css, mark = "correct", '<span class="mark-correct">✓ correct</span>'
    elif outcome.correct is False:
        css, mark = "incorrect", '<span class="mark-incorrect">✗ incorrect</span>'
    else:
        css, mark = "ungraded", '<span class="mark-ungraded">not graded</span>'
    if not outcome.recorded:
        css = "missing"
    if outcome.answer is None:
        text = '<p class="empty">no answer (step budget exhausted or run interrupted)</p>'
    else:
        text = f'<pre class="answer-text">{esc(outcome.answer)}</pre>'
    meta = [
        ("gold", value(outcome.gold)),
        ("steps", count(outcome.steps)),
        ("state hints", count(outcome.hints)),
        ("repairs", count(outcome.repairs)),
        ("wall time", seconds(outcome.wall_time)),
        ("tokens", count(outcome.tokens)),
        ("manager LLM calls", count(outcome.manager_llm_calls)),
    ]
    if outcome.fields:
        marks = " · ".join(f"{esc(k)} {'✓' if ok else '✗'}" for k, ok in outcome.fields.items())
        meta.insert(1, ("fields", marks))
    meta_html = "".join(f"<span>{k}: <b>{v}</b></span>" for k, v in meta)
    return (
        f'<div class="answer {css}" data-correct="{esc(outcome.correct)}">'
        f'<div class="answer-head">Answer {mark}</div>{text}'
        f'<div class="meta">{meta_html}</div></div>'
    )


def _turn_mark(outcome: TurnAnswer) -> str:
    return {True: " ✓", False: " ✗"}.get(outcome.correct, "")


def render_timeline(turns: Sequence[TurnView]) -> str:
    """The timeline section body: an index of turns, then one block per turn."""
    if not turns:
        return '<p class="empty">no turns recorded</p>'
    index = "".join(
        f'<a href="#turn-{t.turn}">turn {t.turn}{_turn_mark(t.outcome)}</a>' for t in turns
    )
    blocks = [f'<nav class="turn-index">{index}</nav>']
    for t in turns:
        context = f'<p class="context">{esc(t.context)}</p>' if t.context.strip() else ""
        question = esc(t.question) if t.question else DASH
        items = "".join(_item(i) for i in t.items)
        events = f'<div class="events">{items}</div>' if items else ""
        blocks.append(
            f'<section class="turn" id="turn-{t.turn}" data-turn="{t.turn}">'
            f"<h3>Turn {t.turn}</h3>{context}"
            f'<p class="question">{question}</p>{events}{_answer(t.outcome)}</section>'
        )
    return "".join(blocks)
