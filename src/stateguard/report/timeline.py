"""Per-turn timeline markup: question, steps, hints, manager events, answer.

Steps are numbered within their turn, from 1, as the progress display numbers them;
hints and manager events name the step they followed the same way. Consecutive steps
that are the same reply with the same outcome (a model repeating itself) are drawn
once, with the numbers of the repeats. Consecutive manager events form one list of
sentences (`stateguard.report.describe`), each with its raw event behind a disclosure.
A turn without an answer says why (budget, time, no progress, interrupt).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from stateguard.report.describe import event_text, no_answer_text
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

StepNames = dict[int, int]
"""Run-wide step index -> its number within the turn (1-based)."""


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


def _step(step: StepRecord, names: StepNames, repeats: Sequence[StepRecord] = ()) -> str:
    execution = step.execution
    status = execution.status if execution is not None else "none"
    label = status if execution is not None else "no code run"
    head_parts = [
        f'<span class="step-no">step {names.get(step.step, step.step)}</span>',
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
    if repeats:
        numbers = ", ".join(str(names.get(r.step, r.step)) for r in repeats)
        body.append(
            f'<div class="repeats" data-repeats="{len(repeats)}">the same reply and outcome '
            f"{len(repeats)} more time{'s' if len(repeats) != 1 else ''}: steps {numbers}</div>"
        )
    return f'<div class="step" id="step-{step.step}">{"".join(body)}</div>'


def _after(step: int | None, names: StepNames) -> str:
    if step is None:
        return ""
    return f" · after step {names[step]}" if step in names else ""


def _hint(event: HintDelivered, names: StepNames) -> str:
    hint = event.hint
    title = "state hint" if hint.kind == "state" else "repair hint"
    when = _after(event.step, names)
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


_UNPLACED = frozenset({"activation", "abandon", "turn_end"})
"""Events whose step is the last one the manager saw, not the one they follow."""


def _manager(event: ManagerLogged, names: StepNames) -> str:
    ev = event.event
    where = "" if ev.payload.type in _UNPLACED else _after(ev.step, names)
    raw = json.dumps(ev.model_dump(mode="json"), ensure_ascii=False, default=str, sort_keys=True)
    return (
        f'<li class="mgr" data-type="{esc(ev.payload.type)}">{esc(event_text(ev))}'
        f"{esc(where)}"
        f'<details class="raw"><summary>event</summary><pre>{esc(raw)}</pre></details></li>'
    )


def _same(a: StepRecord, b: StepRecord) -> bool:
    key_a = (a.thought, a.code, a.answer, a.problem, a.observation, a.execution is None)
    key_b = (b.thought, b.code, b.answer, b.problem, b.observation, b.execution is None)
    return key_a == key_b


def _items(items: Sequence[TimelineItem], names: StepNames) -> str:
    """The turn's items: repeats collapsed, manager events grouped (module docstring)."""
    out: list[str] = []
    i = 0
    while i < len(items):
        item = items[i]
        j = i + 1
        if isinstance(item, StepRecord):
            repeats: list[StepRecord] = []
            while j < len(items):
                nxt = items[j]
                if not (isinstance(nxt, StepRecord) and _same(item, nxt)):
                    break
                repeats.append(nxt)
                j += 1
            out.append(_step(item, names, repeats))
        elif isinstance(item, HintDelivered):
            out.append(_hint(item, names))
        else:
            group = [_manager(item, names)]
            while j < len(items):
                nxt = items[j]
                if not isinstance(nxt, ManagerLogged):
                    break
                group.append(_manager(nxt, names))
                j += 1
            out.append(
                f'<div class="mgr-group"><div class="mgr-type">manager</div>'
                f'<ul class="mgr-list">{"".join(group)}</ul></div>'
            )
        i = j
    return "".join(out)


_CUT_WORDS = {
    "tokens": "the token cap",
    "seconds": "the call's wall-clock cap",
    "line": "the line cap",
    "marker": "an imitated system marker",
}


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
        why = esc(no_answer_text(outcome.ended, outcome.steps))
        ended = esc(outcome.ended or "unfinished")
        text = f'<p class="empty no-answer" data-ended="{ended}">no answer: {why}</p>'
    elif outcome.unconfirmed:
        why = esc(no_answer_text(outcome.ended, outcome.steps))
        text = (
            f'<pre class="answer-text unconfirmed">{esc(outcome.answer)}</pre>'
            f'<p class="empty unconfirmed-note">unconfirmed: no answer was accepted ({why}); '
            "this one was turned away on a doubt alone</p>"
        )
    else:
        text = f'<pre class="answer-text">{esc(outcome.answer)}</pre>'
    cuts = ", ".join(
        f"{n} at {_CUT_WORDS.get(k, esc(k))}" for k, n in sorted(outcome.cut_replies.items())
    )
    malformed = count(outcome.malformed) + (f"; replies cut: {cuts}" if cuts else "")
    meta = [
        ("gold", value(outcome.gold)),
        ("ended", esc(outcome.ended or "unfinished")),
        ("steps", count(outcome.steps)),
        ("malformed replies", malformed),
        ("generated tokens", count(outcome.completion_tokens)),
        ("hint tokens", count(outcome.hint_tokens)),
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
    hint = ""
    if outcome.state_hint is not None:
        shown = esc(outcome.state_hint) if outcome.state_hint else "(no state hint this turn)"
        hint = (
            '<details class="turn-hint"><summary>state hint this turn\'s prompt carried'
            f"</summary><pre>{shown}</pre></details>"
        )
    return (
        f'<div class="answer {css}" data-correct="{esc(outcome.correct)}">'
        f'<div class="answer-head">Answer {mark}</div>{text}'
        f'<div class="meta">{meta_html}</div>{hint}</div>'
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
        steps = [i for i in t.items if isinstance(i, StepRecord)]
        names = {s.step: n for n, s in enumerate(steps, 1)}
        items = _items(t.items, names)
        events = f'<div class="events">{items}</div>' if items else ""
        blocks.append(
            f'<section class="turn" id="turn-{t.turn}" data-turn="{t.turn}">'
            f"<h3>Turn {t.turn}</h3>{context}"
            f'<p class="question">{question}</p>{events}{_answer(t.outcome)}</section>'
        )
    return "".join(blocks)
