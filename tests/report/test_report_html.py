"""The report page's markup: graph, legend, escaping, timeline, states, summary."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from report_fixture import (
    EDGE_COUNT,
    EVIL,
    EXPECTED_STALE,
    STATES,
    TOTAL_TOKENS,
    TOTAL_WALL,
    Elements,
    parse,
)

from stateguard.report import REPORT_FILE, load_run, write_report
from stateguard.report.graph_svg import RELATION_TYPES
from stateguard.report.style import CSS


@pytest.fixture
def page(run_dir: Path) -> str:
    """The written report of the fixture run."""
    return write_report(run_dir).read_text(encoding="utf-8")


@pytest.fixture
def dom(page: str) -> Elements:
    """The parsed report."""
    return parse(page)


def _text(dom: Elements) -> str:
    return " ".join(" ".join(dom.text).split())


def test_report_is_written_in_the_run_directory(run_dir: Path) -> None:
    path = write_report(run_dir)
    assert path == run_dir / REPORT_FILE
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert not list(run_dir.glob(".*.tmp"))


def test_out_path_is_honoured(run_dir: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere" / "page.html"
    assert write_report(run_dir, target) == target
    assert target.is_file()
    assert not (run_dir / REPORT_FILE).exists()


def test_one_node_per_committed_state_and_stale_ones_marked(dom: Elements) -> None:
    nodes = dom.with_class("state-node")
    assert [n["data-state-id"] for n in nodes] == [s.id for s in STATES]
    stale_by_class = {n["data-state-id"] for n in nodes if "stale" in n["class"].split()}
    stale_by_attr = {n["data-state-id"] for n in nodes if n["data-stale"] == "true"}
    assert stale_by_class == stale_by_attr == EXPECTED_STALE


def test_one_edge_per_relation_with_its_type(dom: Elements) -> None:
    edges = dom.with_class("state-edge")
    assert len(edges) == EDGE_COUNT
    drawn = Counter((e["data-state"], e["data-relation"], e["data-related"]) for e in edges)
    expected = Counter(
        (s.id, r.type, r.related_state_id or "") for s in STATES for r in s.relations
    )
    assert drawn == expected
    for edge in edges:
        assert f"edge-{edge['data-relation']}" in edge["class"].split()
        assert edge["marker-end"] == f"url(#arrow-{edge['data-relation']})"


def test_legend_covers_every_relation_type_with_distinct_styles(dom: Elements) -> None:
    legend = {a["data-relation"] for a in dom.tags("li") if "data-relation" in a}
    assert legend == set(RELATION_TYPES)
    styles = {}
    for rel in RELATION_TYPES:
        match = re.search(r"\.edge-" + rel + r" \{([^}]*)\}", CSS)
        assert match, f"no style for edge-{rel}"
        styles[rel] = match.group(1).strip()
    assert len(set(styles.values())) == len(RELATION_TYPES)
    assert any(m for m in dom.with_class("legend-node") if "stale" in m["class"].split())


def test_hostile_text_is_escaped_everywhere(page: str, dom: Elements) -> None:
    assert "<script" not in page.lower()
    assert not dom.tags("script")
    for _, attrs in dom.elements:
        assert not [k for k in attrs if k.lower().startswith("on")], attrs
    text = _text(dom)
    # question, thought, code, answer, gold, hint, manager data, state issue, variable value
    assert text.count(EVIL) >= 12
    assert page.count("&lt;script&gt;") >= 12
    assert "line 0 &lt;b&gt;x&lt;/b&gt;" in page


def test_page_is_self_contained(page: str, dom: Elements) -> None:
    urls = re.findall(r"https?://[^\s\"'<>]+", page)
    assert set(urls) <= {"http://www.w3.org/2000/svg"}
    assert not dom.tags("link")
    assert not dom.tags("iframe")
    images = dom.tags("img")
    assert images, "the figure of step 0 should be inlined"
    assert all(i["src"].startswith("data:image/png;base64,") for i in images)
    csp = [m for m in dom.tags("meta") if m.get("http-equiv") == "Content-Security-Policy"]
    assert csp and "default-src 'none'" in csp[0]["content"]


def test_timeline_shows_turns_steps_hints_and_answers(dom: Elements) -> None:
    turns = dom.with_class("turn")
    assert [t["data-turn"] for t in turns] == [str(i) for i in range(6)]
    assert len(dom.with_class("step")) == 7
    assert len(dom.tags("details")) >= 7  # code of every step is collapsed
    state_hints = dom.with_class("hint-state")
    repair_hints = dom.with_class("hint-repair")
    assert len(state_hints) == 1 and len(repair_hints) == 1
    assert state_hints[0]["data-hint-kind"] == "state"
    assert repair_hints[0]["data-hint-kind"] == "repair"
    assert len(dom.with_class("mgr")) == 7
    answers = dom.with_class("answer")
    assert len(answers) == 6
    assert [a["data-correct"] for a in answers] == ["True", "False", "True"] + ["None"] * 3
    assert len(dom.with_class("stale-read")) == 1
    text = _text(dom)
    assert "ZeroDivisionError: division by zero" in text
    assert "The cost rate is actually 0.12. What is the total cost now?" in text


def test_long_observations_show_their_head(dom: Elements) -> None:
    text = _text(dom)
    assert "line 7 <b>x</b>" in text
    assert "full observation" in text


def test_state_cards_list_versioned_variables_and_relations(dom: Elements) -> None:
    cards = {c["id"]: c for c in dom.with_class("state-card")}
    assert set(cards) == {f"state-{s.id}" for s in STATES}
    assert {k.removeprefix("state-") for k, c in cards.items() if "stale" in c["class"]} == (
        EXPECTED_STALE
    )
    text = _text(dom)
    assert "cost_rate@v2 = 0.12" in text
    assert "cost_rate@v1 = 0.1" in text
    assert "exclude refunded orders orders.refunded.any()" in text
    assert "Overall margin is 37.9%" in text
    assert re.search(r"stale — invalidated by S5 ?, S6", text)
    assert "S5 via invalidate" in text


def test_summary_header(dom: Elements) -> None:
    text = _text(dom)
    assert "turns 6 6 answered" in text
    assert "accuracy 67% 2 of 3 graded" in text
    assert "state hints 1" in text
    assert "repairs 1" in text
    assert "manager LLM calls 6" in text
    assert f"total tokens {TOTAL_TOKENS:,}" in text
    assert f"wall time {TOTAL_WALL:.1f} s" in text
    assert "states 6 2 stale" in text


def test_run_data_merges_answers_with_trajectory(run_dir: Path) -> None:
    run = load_run(run_dir)
    assert run.summary.tokens == TOTAL_TOKENS
    assert run.summary.wall_time == pytest.approx(TOTAL_WALL)
    assert run.summary.accuracy == pytest.approx(2 / 3)
    assert run.stale == EXPECTED_STALE
    assert run.drafts == 1
    assert run.notebook is not None and run.notebook.code_cells == 1
