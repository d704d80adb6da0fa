"""``stateguard mcp``: a guarded kernel as an MCP server over stdio.

Any MCP client (a coding agent) runs its analysis code through `run_cell` and can ask
what is stale and why. Every tool returns a structured result (`stateguard.mcp.results`).
The server is one `GuardedSession`; tools run one at a time on the event loop.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from stateguard.errors import PolicyError, StateguardError
from stateguard.guard import GuardedSession, Lineage
from stateguard.kernel import KernelSession
from stateguard.llm import ChatModel
from stateguard.mcp.results import (
    AnswerReview,
    CellResult,
    Note,
    StaleValues,
    States,
    StateSummary,
    TurnNotes,
    WhyStale,
)
from stateguard.state import AnalyticalState

INSTRUCTIONS = (
    "A persistent Python kernel with exact lineage. Run analysis code with run_cell; "
    "each result lists the stale values the cell read. stale_values, why_stale and "
    "lineage_of explain versions (name@vN). Notes from the manager are observations "
    "for reference only; verify them before use."
)
MANAGERS = ("none", "deterministic", "hybrid", "llm")
MODEL_MANAGERS = frozenset({"hybrid", "llm"})
"""Managers that call a chat model (configured like ``stateguard run``'s)."""


@contextmanager
def _tool_errors() -> Iterator[None]:
    """A stateguard error (unknown variable, unknown state…) is the tool's error message."""
    try:
        yield
    except StateguardError as exc:
        raise ToolError(str(exc)) from exc


def build_server(guard: GuardedSession) -> MCPServer:
    """An MCP server whose tools act on ``guard``."""
    server = MCPServer("stateguard", instructions=INSTRUCTIONS)

    @server.tool()
    async def begin_turn(question: str) -> TurnNotes:
        """Start a new question; returns the manager's notes on earlier analytical states."""
        with _tool_errors():
            notes = guard.begin_turn(question)
        return TurnNotes(turn=guard.turn, notes=[Note.of(n) for n in notes])

    @server.tool()
    async def run_cell(code: str, timeout: float | None = None) -> CellResult:
        """Execute Python code in the persistent kernel; output, lineage and stale reads."""
        with _tool_errors():
            return CellResult.of(guard.run_cell(code, timeout=timeout))

    @server.tool()
    async def stale_values() -> StaleValues:
        """Every live variable whose value is stale, with what superseded its inputs."""
        return StaleValues.of(guard.stale_values())

    @server.tool()
    async def why_stale(name: str) -> WhyStale:
        """Whether a variable (``name`` or ``name@vN``) is stale, and why."""
        with _tool_errors():
            lineage = guard.lineage_of(name)
            value = guard.why_stale(lineage.version)
        return WhyStale(
            name=lineage.name,
            version=lineage.version,
            stale=value is not None,
            reason=None if value is None else StaleValues.of([value]).values[0],
        )

    @server.tool()
    async def lineage_of(name: str) -> Lineage:
        """The version of a variable, the cell that wrote it, its parents and ancestors."""
        with _tool_errors():
            return guard.lineage_of(name)

    @server.tool()
    async def states() -> States:
        """Committed analytical states (what earlier questions established), oldest first."""
        return States(states=[StateSummary.of(s) for s in guard.states()])

    @server.tool()
    async def load_state(state_id: str) -> AnalyticalState:
        """One analytical state in full: constraints, versioned variables, relations."""
        with _tool_errors():
            return guard.load_state(state_id)

    @server.tool()
    async def propose_answer(answer: str) -> AnswerReview:
        """Submit the answer to the current question; a refusal carries repair notes."""
        with _tool_errors():
            return AnswerReview.of(guard.propose_answer(answer))

    return server


def serve(
    *,
    manager: str = "deterministic",
    model: ChatModel | None = None,
    workdir: Path | None = None,
    data_dir: Path | None = None,
    run_dir: Path | None = None,
    cell_timeout: float = 120.0,
) -> None:
    """Serve over stdio until the client disconnects; the kernel stops with the server.

    ``model`` is the manager's chat model (``hybrid`` and ``llm`` need one).
    """
    if manager in MODEL_MANAGERS and model is None:
        raise PolicyError(f"manager {manager!r} needs a chat model")
    kernel = KernelSession(workdir=workdir, data_dir=data_dir, default_timeout=cell_timeout)
    with GuardedSession(kernel, manager=manager, model=model, run_dir=run_dir) as guard:
        build_server(guard).run("stdio")
