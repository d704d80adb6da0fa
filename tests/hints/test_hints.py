"""The default hint structure, a wording of one's own, and the size budget."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from stateguard.finding import Finding
from stateguard.hints import (
    HintRenderer,
    HintTemplateError,
    HintTemplates,
    RepairNotice,
    StateNote,
    StateNotice,
)
from stateguard.manager import Hint
from stateguard.manager.notes import EvidenceFacts

STATES = StateNotice(
    states=(
        StateNote(id="S1", issue="load orders", variables=("orders@v1",), invalidated_by=("S2",)),
        StateNote(
            id="S2",
            issue="revise the rate",
            variables=("rate@v2", "cost@v2"),
            conclusions=("cost is 24.0",),
            relations=("invalidate S1",),
        ),
    )
)
STALE = Finding(
    check="stale_use",
    severity="alarm",
    message="(the manager's own log line)",
    basis=("lineage",),
    variables=("cost@v1",),
    facts=EvidenceFacts(
        template="stale_read",
        step=3,
        outdated="rate@v1",
        superseding=("rate@v2",),
        superseding_cell=2,
    ).as_facts(),
)
REPAIR = RepairNotice(error_variables=("cost@v1",), evidence=(STALE,), checks=("stale_use",))


def block(text: str, tag: str) -> tuple[str, str]:
    """The inside of ``<tag>…</tag>`` and what follows it."""
    match = re.fullmatch(rf"<{tag}>\n(.*)\n</{tag}>\n?(.*)", text, flags=re.S)
    assert match, text
    return match.group(1), match.group(2)


def test_state_notes_are_a_json_list_then_one_fixed_line() -> None:
    text = HintRenderer().render(Hint(kind="state", notice=STATES)).text
    inside, after = block(text, "analytical_state_hint")
    states = json.loads(inside)
    assert [set(s) for s in states] == [
        {"id", "issue", "variables", "conclusions", "relations"}
    ] * 2
    assert states[0]["relations"] == [HintTemplates.default().fill("invalidated", states="S2")]
    assert states[1]["variables"] == ["rate@v2", "cost@v2"]
    assert after == HintTemplates.default().fill("state", states="").split("\n")[-1]
    assert "\n" not in after  # exactly one line after the block


def test_repair_notes_are_an_error_hint_block() -> None:
    text = HintRenderer().render(Hint(kind="repair", notice=REPAIR)).text
    inside, after = block(text, "error_hint")
    lines = inside.splitlines()
    assert lines[1] == "error_variable: cost@v1"
    assert lines[2] == (
        "faulty_reasoning: step 3 read cost@v1, derived from rate@v1; rate was since "
        f"rewritten as rate@v2 (cell 2); {HintTemplates.default().reasons['stale_use']}"
    )
    assert "log line" not in text  # the agent reads the rendered facts, not the manager's log
    assert after == ""  # a light repair adds no action line
    heavy = REPAIR.model_copy(update={"mode": "heavy", "removed": ("cost",)})
    _, action = block(HintRenderer().render(Hint(kind="repair", notice=heavy)).text, "error_hint")
    assert action == HintTemplates.default().fill("heavy", removed="cost")


def test_free_form_hints_are_left_alone() -> None:
    hint = Hint(kind="state", text="as written by an LLM observer")
    assert HintRenderer().render(hint) == hint


def test_a_template_file_of_ones_own(tmp_path: Path) -> None:
    path = tmp_path / "paper.toml"
    path.write_text('error = "ERROR in $error_variable because $faulty_reasoning"\n')
    text = HintRenderer(HintTemplates.load(path)).render(Hint(kind="repair", notice=REPAIR)).text
    assert text.startswith("ERROR in cost@v1 because step 3 read cost@v1")
    # untouched fields keep the default wording
    state = HintRenderer(HintTemplates.load(path)).render(Hint(kind="state", notice=STATES)).text
    assert state.startswith("<analytical_state_hint>")
    path.write_text("nonsense = [")
    with pytest.raises(HintTemplateError, match=r"paper\.toml"):
        HintTemplates.load(path)
    with pytest.raises(HintTemplateError, match=r"missing\.toml"):
        HintTemplates.load(tmp_path / "missing.toml")


def test_the_state_list_stays_within_its_budget() -> None:
    many = StateNotice(
        states=tuple(
            StateNote(
                id=f"S{i}",
                issue="x" * 150,
                variables=tuple(f"v{j}@v1" for j in range(20)),
                conclusions=("y" * 300,),
            )
            for i in range(12)
        )
    )
    renderer = HintRenderer(max_chars=1500)
    states = json.loads(renderer.states_json(many))
    assert len(renderer.states_json(many)) <= 1500
    assert states and states[-1]["id"] == "S11"  # the newest states are kept
    assert len(states[-1]["variables"]) <= 7


def test_free_text_evidence_and_details() -> None:
    written = Finding(
        check="policy", severity="doubt", message="the margin ignores refunds", basis=("answer",)
    )
    judged = Finding(
        check="unsupported_claim",
        severity="alarm",
        message="x",
        basis=("answer", "execution"),
        facts=EvidenceFacts(
            template="not_printed", numbers=("42",), detail="never printed"
        ).as_facts(),
    )
    notice = RepairNotice(evidence=(written, judged), reasoning="an LLM's own account")
    hint = HintRenderer().render(Hint(kind="repair", notice=notice))
    assert hint.evidence == (
        "the margin ignores refunds",
        "the answer states 42, which no successful execution in this turn printed (never printed)",
    )
    assert "an LLM's own account" in hint.text


def test_a_stale_state_note_names_the_superseded_version() -> None:
    note = StateNote(
        id="S2",
        issue="cost at the old rate",
        variables=("rate@v1", "cost@v1"),
        invalidated_by=("S5",),
        stale=("rate@v1 superseded by rate@v2", "cost@v1 ← rate@v1 superseded by rate@v2"),
    )
    text = HintRenderer().render(Hint(kind="state", notice=StateNotice(states=(note,)))).text
    (entry,) = json.loads(block(text, "analytical_state_hint")[0])
    states = "S5 (rate@v1 superseded by rate@v2, +1 more)"
    assert entry["relations"] == [HintTemplates.default().fill("invalidated", states=states)]
    single = note.model_copy(update={"stale": note.stale[:1]})
    text = HintRenderer().render(Hint(kind="state", notice=StateNotice(states=(single,)))).text
    (entry,) = json.loads(block(text, "analytical_state_hint")[0])
    assert entry["relations"] == ["invalidated by S5 (rate@v1 superseded by rate@v2)"]
