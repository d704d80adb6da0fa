"""The report rendered by a real headless Chromium (skipped where Chromium is absent)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from report_fixture import EDGE_COUNT, EXPECTED_STALE, STATES, parse

from stateguard.report import write_report

pytestmark = pytest.mark.chromium

_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)

# Loads the report in an iframe and writes what Chromium laid out into <pre id="probe">.
_PROBE = """<!DOCTYPE html><html><body>
<iframe id="f" src="REPORT" width="1280" height="900"></iframe><pre id="probe">pending</pre>
<script>
window.addEventListener("load", () => {
  const out = document.getElementById("probe");
  try {
    const doc = document.getElementById("f").contentDocument;
    const nodes = [...doc.querySelectorAll("g.state-node")].map(g => {
      const b = g.getBBox(), rect = getComputedStyle(g.querySelector("rect"));
      return {id: g.dataset.stateId, x: b.x, y: b.y, w: b.width, h: b.height,
              stroke: rect.stroke, dash: rect.strokeDasharray};
    });
    const edges = [...doc.querySelectorAll("path.state-edge")].map(p => {
      const s = getComputedStyle(p);
      return {rel: p.dataset.relation, len: p.getTotalLength(),
              stroke: s.stroke, dash: s.strokeDasharray, width: s.strokeWidth};
    });
    const scripts = doc.querySelectorAll("script").length;
    out.textContent = JSON.stringify({nodes, edges, scripts});
  } catch (e) { out.textContent = "error: " + e; }
});
</script></body></html>
"""


def _chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None and Path("/usr/bin/chromium").exists():
        path = "/usr/bin/chromium"
    if path is None:
        pytest.skip("chromium not installed: apt-get install chromium")
    return path


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / "chromium-profile"
    cmd = [_chromium(), *_FLAGS, f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)


def test_graph_renders_in_chromium(run_dir: Path, tmp_path: Path) -> None:
    page = write_report(run_dir)
    proc = _run(tmp_path, "--dump-dom", page.resolve().as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = parse(proc.stdout)
    nodes = dom.with_class("state-node")
    assert len(nodes) == len(STATES)
    assert {n["data-state-id"] for n in nodes if "stale" in n["class"].split()} == EXPECTED_STALE
    assert len(dom.with_class("state-edge")) == EDGE_COUNT
    assert not dom.tags("script")


def test_chromium_lays_out_nodes_and_styles_edges(run_dir: Path, tmp_path: Path) -> None:
    page = write_report(run_dir)
    probe = run_dir / "probe.html"
    probe.write_text(_PROBE.replace("REPORT", page.name), encoding="utf-8")
    proc = _run(
        tmp_path,
        "--allow-file-access-from-files",
        "--virtual-time-budget=5000",
        "--dump-dom",
        probe.resolve().as_uri(),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    pre = [d for d in parse(proc.stdout).text if d.startswith(("{", "error", "pending"))]
    assert pre and pre[0].startswith("{"), pre
    laid_out = json.loads(pre[0])
    assert laid_out["scripts"] == 0

    nodes = laid_out["nodes"]
    assert [n["id"] for n in nodes] == [s.id for s in STATES]
    for i, a in enumerate(nodes):
        assert a["w"] > 100 and a["h"] > 40, a
        for b in nodes[i + 1 :]:
            apart = (
                a["x"] + a["w"] <= b["x"]
                or b["x"] + b["w"] <= a["x"]
                or a["y"] + a["h"] <= b["y"]
                or b["y"] + b["h"] <= a["y"]
            )
            assert apart, f"{a['id']} overlaps {b['id']}"
    stale = [n for n in nodes if n["id"] in EXPECTED_STALE]
    fresh = [n for n in nodes if n["id"] not in EXPECTED_STALE]
    assert all(n["dash"] != "none" for n in stale) and all(n["dash"] == "none" for n in fresh)
    assert {n["stroke"] for n in stale}.isdisjoint({n["stroke"] for n in fresh})

    edges = laid_out["edges"]
    assert len(edges) == EDGE_COUNT and all(e["len"] > 10 for e in edges)
    style = {}
    for edge in edges:
        style.setdefault(edge["rel"], set()).add((edge["stroke"], edge["dash"], edge["width"]))
    assert all(len(s) == 1 for s in style.values()), style
    assert len({next(iter(s)) for s in style.values()}) == len(style) == 5


def test_screenshot(run_dir: Path, tmp_path: Path) -> None:
    page = write_report(run_dir)
    shot = tmp_path / "report.png"
    proc = _run(
        tmp_path, "--window-size=1280,1600", f"--screenshot={shot}", page.resolve().as_uri()
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 20_000
