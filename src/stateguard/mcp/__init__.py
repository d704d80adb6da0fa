"""An MCP server (official ``mcp`` SDK, stdio) over one `GuardedSession`."""

from stateguard.mcp.server import MANAGERS, MODEL_MANAGERS, build_server, serve

__all__ = ["MANAGERS", "MODEL_MANAGERS", "build_server", "serve"]
