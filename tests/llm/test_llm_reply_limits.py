"""Bounds on one reply: overlong lines and imitated system markers end it, as it arrives."""

from __future__ import annotations

import pytest

from stateguard.llm.limits import SYSTEM_MARKERS, ReplyCut, ReplyWatch, cut_reply

F = "```"


def test_an_overlong_thought_line_cuts_the_reply_before_it() -> None:
    text, reason = cut_reply("Short.\n" + "x" * 201 + "\nmore", ReplyCut(thought_chars=200))
    assert reason == "line" and text == "Short.\n"


def test_code_lines_have_their_own_bound() -> None:
    cut = ReplyCut(thought_chars=20, code_chars=60)
    ok = f"Go.\n{F}python\nx = '{'c' * 40}'\n{F}"
    assert cut_reply(ok, cut) == (ok, None)
    long_code = f"Go.\n{F}python\nx = '{'c' * 80}'\n{F}"
    text, reason = cut_reply(long_code, cut)
    assert reason == "line" and text == f"Go.\n{F}python\n"


@pytest.mark.parametrize("marker", SYSTEM_MARKERS)
def test_a_reply_imitating_a_system_marker_is_cut_where_it_starts(marker: str) -> None:
    reply = f"bookings: 640, cancelled: 100 {marker}: the session has loaded …"
    text, reason = cut_reply(reply)
    assert reason == "marker" and text == "bookings: 640, cancelled: 100 "


def test_the_watch_stops_a_streamed_reply_at_the_first_bound() -> None:
    """Fed token by token, as the embedded backend streams: a marker split across pieces
    is found, and nothing after the stop is read."""
    watch = ReplyWatch()
    pieces = ["Count", " rows.", "\nMan", "ager", " note", ": the number", " is 640"]
    reasons = [watch.feed(p) for p in pieces]
    assert reasons[:4] == [None, None, None, None]
    assert reasons[4] == "marker" and watch.text == "Count rows.\n"
    assert watch.feed("more") == "marker" and watch.text == "Count rows.\n"


def test_a_runaway_line_is_stopped_once_it_passes_the_bound() -> None:
    watch = ReplyWatch(ReplyCut(thought_chars=50))
    fed = 0
    for _ in range(1000):  # an endless line, fed as the model writes it
        fed += 1
        if watch.feed("bookings: 640, ") is not None:
            break
    assert watch.reason == "line" and fed * len("bookings: 640, ") <= 50 + 15
    assert watch.text == ""


def test_a_well_formed_reply_passes_untouched() -> None:
    reply = f"Sum a.\n{F}python\nprint(t['a'].sum())\n{F}"
    assert cut_reply(reply) == (reply, None)
    assert cut_reply("<answer>6</answer>") == ("<answer>6</answer>", None)


def test_a_long_structured_answer_is_not_cut_but_an_endless_one_is() -> None:
    answer = '{"ranking": [' + ", ".join(f'{{"rank": {i}, "region": "R{i}"}}' for i in range(12))
    text = f"Done.\n<answer>{answer}]}}</answer>"
    assert len(text.splitlines()[1]) > 300
    assert cut_reply(text) == (text, None)
    endless = "Done.\n<answer>" + "bookings: 640, " * 200 + "</answer>"
    kept, reason = cut_reply(endless)
    assert reason == "line" and kept == "Done.\n"


def test_a_thought_line_opening_as_a_heading_cuts_the_reply_before_it() -> None:
    """A small model that writes a heading sets itself a new question and answers it."""
    spiral = (
        "answer: base_charge: 1020.00\n\n## 2. What is the average weight? Answer as …\n"
        f"{F}python\nshipments['weight_kg'].mean()\n{F}"
    )
    text, reason = cut_reply(spiral)
    assert reason == "marker" and text == "answer: base_charge: 1020.00\n\n"
    # streamed: the heading is found as soon as its second character arrives
    watch = ReplyWatch()
    assert [watch.feed(p) for p in ["Go.\n", "#", "#", " 2."]] == [None, None, "marker", "marker"]
    assert watch.text == "Go.\n"
    # a comment inside a code block, a hashtag in a thought: no heading
    fine = f"Sum it. #1 first\n{F}python\n# the total\nx = 1\n{F}"
    assert cut_reply(fine) == (fine, None)
    assert cut_reply(spiral, ReplyCut(headings=False)) == (spiral, None)
