"""The conversation stays within its character budget and keeps roles alternating."""

from __future__ import annotations

from itertools import pairwise

from stateguard.llm import ChatMessage
from stateguard.worker.history import Conversation, merge_roles


def _roles_alternate(messages: list[ChatMessage]) -> bool:
    roles = [m.role for m in messages]
    return roles[0] == "system" and all(a != b for a, b in pairwise(roles[1:]))


def _size(messages: list[ChatMessage]) -> int:
    return sum(len(m.content) for m in messages)


def _play_turn(conv: Conversation, index: int, steps: int, obs_chars: int) -> None:
    conv.start_turn(index, f"question {index}?", f"Question (turn {index}):\nquestion {index}?")
    for s in range(steps):
        ex = conv.add_reply(
            index * 100 + s,
            f"step {s}\n```python\nv{index}_{s} = {s}\n```",
            code=f"v{index}_{s} = {s}",
        )
        ex.outcome = "ok"
        conv.add_user(f"obs {index}.{s} " + "x" * obs_chars)
    conv.add_reply(index * 100 + steps, f"<answer>a{index}</answer>")
    conv.finish_turn(f"a{index}")


def test_small_history_is_sent_in_full() -> None:
    conv = Conversation("SYSTEM", budget_chars=100_000)
    _play_turn(conv, 1, 2, 10)
    conv.start_turn(2, "q2", "Question (turn 2):\nq2")
    msgs = conv.messages()
    assert _roles_alternate(msgs)
    text = "\n".join(m.content for m in msgs)
    assert "obs 1.0" in text and "obs 1.1" in text and "<answer>a1</answer>" in text
    assert msgs[-1].content.endswith("q2")


def test_older_turns_collapse_to_summaries_within_budget() -> None:
    conv = Conversation("S" * 1000, budget_chars=6000)
    for t in range(1, 9):
        _play_turn(conv, t, 3, 400)
    conv.start_turn(9, "q9", "Question (turn 9):\nq9")
    msgs = conv.messages()
    assert _size(msgs) <= 6000
    assert _roles_alternate(msgs)
    text = "\n".join(m.content for m in msgs)
    # The newest earlier turn is still present (in full or summarised) with its answer...
    assert "<answer>a8</answer>" in text
    # ...older ones as summaries: question, code first lines and answer, not observations.
    assert "[Earlier question, turn" in text
    assert "obs 1.0" not in text
    assert "v5_0 = 0" in text or "omitted" in text


def test_the_current_turn_collapses_its_oldest_steps() -> None:
    conv = Conversation("SYSTEM", budget_chars=3000)
    conv.start_turn(1, "q1", "Question (turn 1):\nq1")
    for s in range(20):
        conv.add_reply(s, f"step {s}\n```python\nx{s} = {s}\n```", code=f"x{s} = {s}")
        conv.add_user(f"obs {s} " + "y" * 300)
    msgs = conv.messages()
    assert _size(msgs) <= 3000
    assert _roles_alternate(msgs)
    text = "\n".join(m.content for m in msgs)
    assert "obs 19" in text  # the latest step is verbatim
    assert "obs 0 " not in text  # the oldest only as a summary line
    assert "- step 0: x0 = 0" in text
    assert msgs[1].content.startswith("Question (turn 1):\nq1")


def test_last_step_is_kept_even_if_huge() -> None:
    conv = Conversation("SYSTEM", budget_chars=500)
    conv.start_turn(1, "q1", "Question (turn 1):\nq1")
    conv.add_reply(0, "a", code="a = 1")
    conv.add_user("z" * 2000)
    conv.add_reply(1, "b", code="b = 1")
    conv.add_user("w" * 2000)
    text = "\n".join(m.content for m in conv.messages())
    assert "w" * 2000 in text and "z" * 2000 not in text


def test_merge_roles_joins_consecutive_messages() -> None:
    merged = merge_roles(
        [
            ChatMessage.user("a"),
            ChatMessage.user("b"),
            ChatMessage.assistant(""),
            ChatMessage.assistant("c"),
        ]
    )
    assert merged == [ChatMessage.user("a\n\nb"), ChatMessage.assistant("c")]


def test_collapsed_turns_are_notes_never_model_replies() -> None:
    """A small model imitates its own past replies: summaries must not be assistant turns."""
    conv = Conversation("SYSTEM", budget_chars=3_000)
    for i in range(1, 6):
        _play_turn(conv, i, 3, 400)
    conv.start_turn(6, "q6", "Question (turn 6):\nq6")
    msgs = conv.messages()
    assert _roles_alternate(msgs)
    notes = [m for m in msgs if "[Earlier question, turn" in m.content]
    assert notes, "older turns should be collapsed under this budget"
    assert all(m.role == "user" for m in notes)
    assert not any("cells run" in m.content for m in msgs if m.role == "assistant")
    assert "answer given: a" in "\n".join(m.content for m in notes)


def test_failed_steps_of_earlier_turns_are_not_resent() -> None:
    conv = Conversation("SYSTEM", budget_chars=100_000)
    conv.start_turn(1, "q1", "Question (turn 1):\nq1")
    bad = conv.add_reply(0, "```python\nrows: 74\nregion: North Partner\n```", code="rows: 74")
    bad.outcome = "error: SyntaxError"
    conv.add_user("Error: SyntaxError")
    good = conv.add_reply(1, "```python\nlen(t)\n```", code="len(t)")
    good.outcome = "ok"
    conv.add_user("Result:\n3")
    conv.add_reply(2, "<answer>3</answer>").outcome = "answer"
    conv.finish_turn("3")
    conv.start_turn(2, "q2", "Question (turn 2):\nq2")
    conv.add_reply(3, "```python\nregion: North Partner\n```", code="x").outcome = "error: E"
    conv.finish_turn(None, "no_progress")
    conv.start_turn(3, "q3", "Question (turn 3):\nq3")
    text = "\n".join(m.content for m in conv.messages())
    assert "len(t)" in text and "<answer>3</answer>" in text
    assert "rows: 74" not in text and "North Partner" not in text  # never shown again
    # the unanswered turn is a summary: no cell of it ran
    assert "[Earlier question, turn 2] q2\nno cell ran\nanswer given: none" in text


def test_the_prefix_before_the_current_turn_is_the_same_at_every_step() -> None:
    """Earlier turns are rendered once per turn, so a backend's prompt cache stays valid."""
    conv = Conversation("S" * 1000, budget_chars=6000)
    for t in range(1, 5):
        _play_turn(conv, t, 2, 300)
    conv.start_turn(5, "q5", "Question (turn 5):\nq5")
    prefixes = set()
    for s in range(14):
        text = "\n".join(m.content for m in conv.messages())
        prefixes.add(text[: text.index("Question (turn 5)")])
        assert len(text) <= 6000 + 100  # within budget (merge separators aside)
        conv.add_reply(500 + s, f"step {s}\n```python\nw{s} = {s}\n```", code=f"w{s} = {s}")
        conv.add_user(f"obs 5.{s} " + "z" * 300)
    assert len(prefixes) == 1
    assert "a4" in next(iter(prefixes))  # the newest earlier turn is there
    # the current turn collapsed its own oldest steps to stay within budget
    assert "- step 500: w0 = 0" in "\n".join(m.content for m in conv.messages())


def test_the_last_user_text_is_what_the_next_reply_answers() -> None:
    conv = Conversation("system")
    conv.start_turn(1, "Q?", "Question: Q?")
    conv.add_user("The session has loaded the data files.")
    assert conv.last_user_text() == "Question: Q?\n\nThe session has loaded the data files."
    conv.add_reply(1, "```python\nx = 1\n```", "x = 1")
    conv.add_user("Result:\n1")
    conv.add_user("Manager note: fine")
    assert conv.last_user_text() == "Result:\n1\n\nManager note: fine"


def _play_stated_turn(conv: Conversation, index: int, context: str, obs_chars: int) -> None:
    opener = f"Context:\n{context}\n\nQuestion (turn {index}):\nquestion {index}?"
    conv.start_turn(index, f"question {index}?", opener, context)
    ex = conv.add_reply(index * 100, "step\n```python\nx = 1\n```", code=f"x{index} = 1")
    ex.outcome = "ok"
    conv.add_user("obs " + "y" * obs_chars)
    conv.add_reply(index * 100 + 1, f"<answer>a{index}</answer>")
    conv.finish_turn(f"a{index}")


FEE = "The clinic keeps a practice fee of 10 % of each charge; a no-show is billed 4.50."
REVISION = "The practice fee is raised from 10 % to 13 % for the whole year."


def test_what_earlier_turns_stated_stays_in_the_prompt_when_their_cells_go() -> None:
    # Turn 2 states a fee model and turn 5 revises it; by turn 12 both turns are far too
    # old to be sent in full or even as summaries, and their statements are still sent,
    # in order, within the budget.
    conv = Conversation("S" * 1000, budget_chars=6000)
    for t in range(1, 12):
        context = {2: FEE, 5: REVISION}.get(t, "")
        _play_stated_turn(conv, t, context, 900)
    conv.start_turn(12, "q12", "Question (turn 12):\nq12")
    msgs = conv.messages()
    assert _size(msgs) <= 6000
    assert _roles_alternate(msgs)
    text = "\n".join(m.content for m in msgs)
    assert "earlier questions of this session are omitted" in text
    assert f"- turn 2: {FEE}" in text and f"- turn 5: {REVISION}" in text
    assert text.index(FEE) < text.index(REVISION)
    assert text.count(FEE) == 1 and "a11" in text


def test_a_summarised_turn_keeps_its_context() -> None:
    conv = Conversation("S" * 200, budget_chars=2600)
    _play_stated_turn(conv, 1, FEE, 1500)
    _play_stated_turn(conv, 2, "", 300)
    conv.start_turn(3, "q3", "Question (turn 3):\nq3")
    text = "\n".join(m.content for m in conv.messages())
    assert "obs " + "y" * 1500 not in text  # turn 1 is not sent in full...
    assert f"[Earlier question, turn 1] question 1?\ncontext: {FEE}" in text  # ...its context is


def test_a_context_is_sent_once_while_its_turn_is_in_full() -> None:
    conv = Conversation("SYSTEM", budget_chars=100_000)
    _play_stated_turn(conv, 1, FEE, 10)
    conv.start_turn(2, "q2", "Question (turn 2):\nq2")
    text = "\n".join(m.content for m in conv.messages())
    assert text.count(FEE) == 1 and "omitted" not in text
