"""The compact state hint: only the states relevant to the new question, stale ones marked."""

from __future__ import annotations

from stateguard.hints import HintRenderer, compact_state_hint
from stateguard.hints.compact import relevant_states, state_line, words
from stateguard.llm.messages import estimate_tokens
from stateguard.manager import Hint
from stateguard.manager.notes import StateNote, StateNotice

NOTES = (
    StateNote(
        id="S1",
        issue="How many orders are there, and what is the total net revenue?",
        variables=("orders@v2", "orders['net_revenue']@v1"),
        conclusions=("orders: 1200, net_revenue: 209637.41",),
    ),
    StateNote(
        id="S2",
        issue="What is the total contribution margin of 2024?",
        variables=("orders['cogs']@v1", "orders['contribution']@v1"),
        conclusions=("109691.06",),
        relations=("progress S1",),
        invalidated_by=("S5",),
    ),
    StateNote(
        id="S3",
        issue="Which region has the highest total contribution margin?",
        variables=("by_region@v1",),
        conclusions=("region: North, contribution: 35685.77",),
        relations=("progress S2",),
        invalidated_by=("S5",),
    ),
    StateNote(
        id="S4",
        issue="Which month of 2024 had the highest total net revenue?",
        variables=("monthly@v1",),
        conclusions=("2024-06",),
    ),
    StateNote(
        id="S5",
        issue="What is the total contribution margin under the revised rate?",
        variables=("orders['cogs']@v2", "orders['contribution']@v2"),
        conclusions=("99209.19",),
        relations=("invalidate S2",),
    ),
)
HINT = HintRenderer().render(Hint(kind="state", notice=StateNotice(states=NOTES)))


def test_words_split_names_and_drop_stop_words() -> None:
    assert words("What is the net_revenue by regions?") == {"net", "revenue", "region"}


def test_only_states_sharing_words_with_the_question_are_named() -> None:
    picked = relevant_states(HINT.notice, "Summarize the contribution margin by channel.")  # type: ignore[arg-type]
    assert [n.id for n in picked] == ["S2", "S3", "S5"]
    picked = relevant_states(HINT.notice, "Average discount of Enterprise orders?")  # type: ignore[arg-type]
    assert [n.id for n in picked] == ["S1"]


def test_stale_states_are_marked_and_fresh_ones_are_not() -> None:
    hint = compact_state_hint(HINT, "Contribution margin per unit of the Premium product?")
    assert hint is not None
    lines = [ln for ln in hint.text.splitlines() if ln.startswith("S")]
    assert [ln.split(" ", 1)[0] for ln in lines] == ["S2", "S3", "S5"]
    assert "STALE: inputs revised by S5" in lines[0] and "STALE" in lines[1]
    assert "STALE" not in lines[2]
    assert hint.state_ids == ("S2", "S3", "S5")
    assert "<analytical_state_hint>" in hint.text


def test_no_relevant_state_no_hint_and_repairs_untouched() -> None:
    assert compact_state_hint(HINT, "How many distinct customers bought twice?") is None
    repair = Hint(kind="repair", text="<error_hint>x</error_hint>")
    assert compact_state_hint(repair, "anything") is repair


def test_the_compact_hint_is_much_smaller_than_the_full_one() -> None:
    hint = compact_state_hint(HINT, "Summarize the total contribution margin by channel.")
    assert hint is not None
    assert estimate_tokens(hint.text) < estimate_tokens(HINT.text)
    assert len(state_line(NOTES[2])) < 200


def test_a_conclusion_without_a_value_is_not_shown_as_one() -> None:
    failed = StateNote(id="S6", issue="How many orders lost money?", conclusions=("None",))
    line = state_line(failed, values=True)
    assert line.endswith(": no value") and "None" not in line
    mixed = StateNote(id="S7", issue="Totals?", conclusions=("nan", "42.5"))
    assert state_line(mixed, values=True).endswith(": 42.5")


def test_states_are_named_by_reference_unless_values_are_asked_for() -> None:
    hint = compact_state_hint(HINT, "Summarize the total contribution margin by channel.")
    assert hint is not None
    assert "109691.06" not in hint.text and "35685.77" not in hint.text
    assert "uses orders['cogs'], orders['contribution']" in hint.text
    valued = compact_state_hint(HINT, "Summarize the contribution margin.", values=True)
    assert valued is not None and "109691.06" in valued.text


def test_the_compact_line_takes_its_words_from_the_templates(tmp_path) -> None:
    from stateguard.hints import HintTemplates
    from stateguard.manager.notes import StateNote

    own = tmp_path / "own.toml"
    own.write_text('[compact]\nstale = " [veraltet: $reason$more]"\nuses = " liest $names$more"\n')
    templates = HintTemplates.load(own)
    note = StateNote(
        id="S2", issue="Total?", variables=("orders['cogs']@v1",), stale=("COGS revised",)
    )
    line = state_line(note, templates=templates)
    assert line == "S2 (Total?) liest orders['cogs'] [veraltet: COGS revised]"
    assert state_line(note) == "S2 (Total?); uses orders['cogs'] — STALE: COGS revised; recompute"
    assert templates.compact["no_issue"] == HintTemplates.default().compact["no_issue"]
