"""`stateguard mcp` driven by the MCP SDK's own stdio client against a real kernel."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

pytestmark = pytest.mark.kernel

TOOLS = {
    "begin_turn",
    "run_cell",
    "stale_values",
    "why_stale",
    "lineage_of",
    "states",
    "load_state",
    "propose_answer",
}


async def _session(
    workdir: Path,
    calls: list[tuple[str, dict[str, Any]]],
    args: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> list[Any]:
    # the server runs the same stateguard as the test (the client passes a minimal env)
    env = dict(env or {})
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "stateguard.cli.main", "mcp", "--workdir", str(workdir), *args],
        env=env or None,
    )
    out: list[Any] = []
    async with stdio_client(params) as streams, ClientSession(*streams) as client:
        await client.initialize()
        tools = await client.list_tools()
        out.append({t.name: t for t in tools.tools})
        for name, args in calls:
            out.append(await client.call_tool(name, args))
    return out


def run(
    workdir: Path,
    calls: list[tuple[str, dict[str, Any]]],
    args: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> list[Any]:
    return anyio.run(_session, workdir, calls, args, env)


def test_tools_over_stdio_against_a_real_kernel(tmp_path: Path) -> None:
    tools, *results = run(
        tmp_path,
        [
            ("begin_turn", {"question": "What does the order cost?"}),
            ("run_cell", {"code": "rate = 0.10\ncost = 200 * rate"}),
            ("run_cell", {"code": "rate = 0.12  # revised"}),
            ("run_cell", {"code": "print(cost)"}),
            ("stale_values", {}),
            ("why_stale", {"name": "cost"}),
            ("lineage_of", {"name": "cost"}),
            ("propose_answer", {"answer": "The order costs 20.0"}),
            ("run_cell", {"code": "cost = 200 * rate\nprint(cost)"}),
            ("propose_answer", {"answer": "The order costs 24.0"}),
            ("states", {}),
            ("load_state", {"state_id": "S1"}),
            ("why_stale", {"name": "nope"}),
        ],
    )
    assert set(tools) >= TOOLS
    assert all(tools[name].output_schema for name in TOOLS)  # every tool is structured
    results = [r.structured_content for r in results[:-1]] + [results[-1]]
    turn, first, revise, read, stale, why, lineage, refused, redo, accepted, states, state, bad = (
        results
    )

    assert turn == {"turn": 1, "notes": []}
    assert first["status"] == "ok" and first["created"] == ["rate@v1", "cost@v1"]
    assert first["stale_reads"] == [] and revise["created"] == ["rate@v2"]
    assert read["stdout"] == "20.0\n"
    (reason,) = read["stale_reads"]
    assert (reason["value"], reason["derived_from"], reason["superseded_by"]) == (
        "cost@v1",
        "rate@v1",
        "rate@v2",
    )
    assert reason["superseding_cell"] == 1 and "stale" in reason["explanation"]
    assert [v["value"] for v in stale["values"]] == ["cost@v1"]
    assert why["stale"] is True and why["reason"]["chain"] == ["rate@v1", "cost@v1"]
    assert lineage["version"] == "cost@v1" and lineage["parents"] == ["rate@v1"]
    assert lineage["stale"] is True

    assert refused["accepted"] is False
    (note,) = refused["notes"]
    assert note["kind"] == "repair" and "cost@v1" in note["variables"]
    assert redo["stale_reads"] == [] and redo["stdout"] == "24.0\n"
    assert accepted == {"accepted": True, "notes": []}
    assert [s["id"] for s in states["states"]] == ["S1"]
    assert "cost@v2" in states["states"][0]["variables"]
    assert state["id"] == "S1" and state["status"] == "committed"
    assert bad.is_error and "nope" in bad.content[0].text
