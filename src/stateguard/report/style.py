"""The report's stylesheet, inlined in every page (the page loads nothing)."""

from __future__ import annotations

CSS = """
:root {
  --ink: #1e293b; --muted: #64748b; --line: #e2e8f0; --bg: #f8fafc; --card: #ffffff;
  --blue: #2563eb; --red: #dc2626; --green: #16a34a; --amber: #c2410c; --violet: #7c3aed;
  --teal: #0d9488; --slate: #475569;
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink);
  font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
main { max-width: 1180px; margin: 0 auto; padding: 0 24px 48px; }
header.page { background: #0f172a; color: #e2e8f0; padding: 20px 0 18px; margin-bottom: 24px; }
header.page .inner { max-width: 1180px; margin: 0 auto; padding: 0 24px; }
header.page h1 { margin: 0 0 4px; font-size: 21px; font-weight: 600; }
header.page h1 .run-name { color: #93c5fd; font-weight: 500; }
header.page .facts { margin: 0 0 6px; color: #94a3b8; font-size: 13px; }
header.page .facts b { color: #e2e8f0; font-weight: 500; }
header.page .run-error { margin: 4px 0 8px; padding: 6px 10px; border-radius: 6px;
  background: #7f1d1d; color: #fee2e2; white-space: pre-wrap; }
header.page nav a { color: #cbd5e1; margin-right: 16px; text-decoration: none; font-size: 13px; }
header.page nav a:hover { color: #fff; text-decoration: underline; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr));
  gap: 10px; margin-top: 14px; }
.card { background: #1e293b; border-radius: 8px; padding: 8px 12px; }
.card .label { color: #94a3b8; font-size: 11px; text-transform: uppercase; letter-spacing: .04em; }
.card .value { font-size: 20px; font-weight: 600; color: #f8fafc; }
.card .sub { color: #94a3b8; font-size: 12px; }
h2 { font-size: 18px; margin: 32px 0 12px; padding-bottom: 6px;
  border-bottom: 1px solid var(--line); }
h3 { font-size: 15px; margin: 0 0 6px; }
h4 { font-size: 12px; margin: 10px 0 4px; color: var(--muted); text-transform: uppercase;
  letter-spacing: .04em; }
pre, code { font-family: ui-monospace, "SFMono-Regular", Menlo, "DejaVu Sans Mono", monospace;
  font-size: 12.5px; }
pre { margin: 4px 0; padding: 8px 10px; background: #f1f5f9; border-radius: 6px;
  white-space: pre-wrap; word-break: break-word; overflow-x: auto; }
.empty { color: var(--muted); font-style: italic; }
.dash { color: var(--muted); }

/* state graph */
.graph-box { background: var(--card); border: 1px solid var(--line); border-radius: 10px;
  padding: 12px; }
.graph-scroll { overflow: auto; max-height: 80vh; }
svg.state-graph { display: block; margin: 0 auto; font-family: inherit; }
.state-node rect { fill: #eff6ff; stroke: #3b82f6; stroke-width: 1.5; }
.state-node a:hover rect { fill: #dbeafe; }
.state-node.stale rect { fill: #fef2f2; stroke: var(--red); stroke-dasharray: 5 3; }
.state-node text { font-size: 12px; fill: var(--ink); }
.state-node .node-id { font-weight: 700; font-size: 13px; }
.state-node .node-turn { font-weight: 400; fill: var(--muted); font-size: 11.5px; }
.state-node .node-vars { fill: var(--muted); font-size: 11px;
  font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
.state-node.stale .node-id { text-decoration: line-through; fill: #991b1b; }
.state-node .stale-tag { fill: var(--red); font-weight: 700; font-size: 10.5px;
  letter-spacing: .05em; }
.graph-start circle { fill: #cbd5e1; stroke: #64748b; }
.graph-start text { font-size: 11px; fill: var(--muted); }
.state-edge, .legend-list path { fill: none; stroke-width: 1.8; }
.edge-init { stroke: #94a3b8; stroke-dasharray: 1.5 4; stroke-linecap: round; }
.edge-progress { stroke: var(--slate); }
.edge-branch { stroke: var(--teal); stroke-dasharray: 8 4; }
.edge-combine { stroke: var(--violet); stroke-width: 2.8 !important; }
.edge-invalidate { stroke: var(--red); stroke-dasharray: 4 3; stroke-width: 2.2 !important; }
.arrow-init path { fill: #94a3b8; } .arrow-progress path { fill: var(--slate); }
.arrow-branch path { fill: var(--teal); } .arrow-combine path { fill: var(--violet); }
.arrow-invalidate path { fill: var(--red); }
.legend { margin: 0 0 10px; }
.legend-note { margin: 0 0 6px; color: var(--muted); font-size: 12.5px; }
.legend-list { list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap;
  gap: 4px 18px; font-size: 12.5px; }
.legend-list li { display: flex; align-items: center; gap: 6px; }
.legend-node { fill: #eff6ff; stroke: #3b82f6; stroke-width: 1.5; }
.legend-node.stale { fill: #fef2f2; stroke: var(--red); stroke-dasharray: 4 2; }
.graph-note { color: var(--muted); font-size: 12.5px; margin: 8px 0 0; }

/* timeline */
.turn-index { display: flex; flex-wrap: wrap; gap: 6px; margin-bottom: 12px; }
.turn-index a { text-decoration: none; color: var(--ink); background: var(--card);
  border: 1px solid var(--line); border-radius: 999px; padding: 1px 10px; font-size: 12.5px; }
.turn { background: var(--card); border: 1px solid var(--line); border-radius: 10px;
  padding: 14px 16px; margin-bottom: 14px; }
.turn > h3 { display: flex; gap: 10px; align-items: baseline; }
.turn .question { font-size: 14.5px; font-weight: 500; white-space: pre-wrap; margin: 0 0 8px; }
.turn .context { color: var(--muted); white-space: pre-wrap; margin: 0 0 8px; font-size: 13px; }
.events { border-left: 2px solid var(--line); margin-left: 4px; padding-left: 14px; }
.step { margin: 10px 0; }
.step-head { display: flex; gap: 8px; align-items: center; font-size: 12.5px; color: var(--muted); }
.step-no { font-weight: 600; color: var(--ink); }
.badge { display: inline-block; border-radius: 4px; padding: 0 6px; font-size: 11.5px;
  font-weight: 600; }
.status-ok { background: #dcfce7; color: #166534; }
.status-error, .status-timeout, .status-dead { background: #fee2e2; color: #991b1b; }
.status-none { background: #f1f5f9; color: var(--muted); }
.problem { background: #fef3c7; color: #92400e; }
.thought { white-space: pre-wrap; margin: 4px 0; max-height: 12em; overflow: auto; }
details > summary { cursor: pointer; color: var(--blue); font-size: 12.5px; }
details.code pre { background: #0f172a; color: #e2e8f0; }
.obs-label { font-size: 11.5px; color: var(--muted); text-transform: uppercase;
  letter-spacing: .04em; margin-top: 4px; }
.error-line { color: #991b1b; font-family: ui-monospace, monospace; font-size: 12.5px; }
.stale-read { color: #991b1b; font-size: 12.5px; }
.stale-read::before { content: "⚠ "; }
.step img { max-width: 100%; max-height: 360px; border: 1px solid var(--line);
  border-radius: 6px; margin: 4px 0; background: #fff; }
.proposed { font-size: 13px; } .proposed b { color: var(--muted); font-weight: 600; }
.hint { margin: 10px 0; border-radius: 8px; padding: 8px 12px; border-left: 4px solid; }
.hint pre { background: transparent; padding: 2px 0; margin: 2px 0; }
.hint-state { background: #eff6ff; border-color: var(--blue); }
.hint-repair { background: #fff7ed; border-color: var(--amber); }
.hint-head { font-size: 12px; font-weight: 700; text-transform: uppercase; letter-spacing: .04em; }
.hint-state .hint-head { color: var(--blue); }
.hint-repair .hint-head { color: var(--amber); }
.hint-repair .hint-head::before { content: "⚠ "; }
.hint-state .hint-head::before { content: "ℹ "; }
.refs { font-size: 12px; color: var(--muted); }
.refs ul { margin: 2px 0; padding-left: 18px; }
.mgr-group { font-size: 12.5px; margin: 4px 0; color: var(--muted); }
.mgr-group .mgr-type { display: inline-block; background: #ede9fe; color: #5b21b6;
  border-radius: 4px; padding: 0 6px; font-weight: 600; }
.mgr-list { margin: 2px 0 2px 18px; padding: 0; }
.mgr-list li { margin: 1px 0; }
.mgr details.raw { display: inline; margin-left: 6px; }
.mgr details.raw summary { display: inline; cursor: pointer; font-size: 11px; color: #7c3aed; }
.mgr details.raw pre { white-space: pre-wrap; word-break: break-word; font-size: 11px; }
.repeats { font-size: 12.5px; color: #92400e; background: #fffbeb; border-radius: 4px;
  padding: 2px 6px; margin-top: 4px; }
.no-answer { color: #991b1b; }
.answer { margin-top: 12px; border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; }
.answer.correct { border-color: #86efac; background: #f0fdf4; }
.answer.incorrect { border-color: #fca5a5; background: #fef2f2; }
.answer.missing { background: #f8fafc; }
.answer-head { display: flex; gap: 10px; align-items: center; font-weight: 600; }
.mark-correct { color: var(--green); } .mark-incorrect { color: var(--red); }
.mark-ungraded { color: var(--muted); font-weight: 400; }
.answer pre { background: rgba(255, 255, 255, .7); }
.meta { display: flex; flex-wrap: wrap; gap: 4px 18px; font-size: 12.5px; color: var(--muted);
  margin: 6px 0 0; }
.meta b { color: var(--ink); font-weight: 600; }

/* states */
.state-cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(340px, 1fr));
  gap: 12px; }
.state-card { background: var(--card); border: 1px solid var(--line); border-radius: 10px;
  padding: 12px 14px; scroll-margin-top: 12px; }
.state-card:target { outline: 3px solid #93c5fd; }
.state-card.stale { border-color: #fca5a5; background: #fffafa; }
.state-card h3 { display: flex; gap: 8px; align-items: baseline; flex-wrap: wrap; }
.state-card .turn-tag { color: var(--muted); font-weight: 400; font-size: 12.5px; }
.stale-badge { background: #fee2e2; color: #991b1b; }
.state-card ul { margin: 2px 0; padding-left: 18px; }
.state-card .issue { margin: 0 0 4px; white-space: pre-wrap; }
.vars li { font-size: 12.5px; } .vars code { color: #1d4ed8; }
.rel { display: inline-block; border-radius: 4px; padding: 0 5px; font-size: 11.5px;
  font-weight: 600; color: #fff; }
.rel-init { background: #94a3b8; } .rel-progress { background: var(--slate); }
.rel-branch { background: var(--teal); } .rel-combine { background: var(--violet); }
.rel-invalidate { background: var(--red); }
"""
