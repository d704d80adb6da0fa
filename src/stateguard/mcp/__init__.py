"""An MCP server (official ``mcp`` SDK, stdio) over one `GuardedSession`."""

from stateguard.mcp.server import MANAGERS, build_server, serve

__all__ = ["MANAGERS", "build_server", "serve"]
