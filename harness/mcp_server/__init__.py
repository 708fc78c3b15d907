"""forensic's tools and investigations over the Model Context Protocol (``forensic mcp``).

:func:`build_server` makes the server for one bundle; :func:`serve_stdio` and :func:`serve_http`
run it. Every guarantee stays on forensic's side: tools are the same read-only, validated,
sandboxed tools; each MCP session has its own budget; approvals are never offered.
"""

from .server import build_server
from .session import MAX_ARGUMENT_BYTES, BudgetExhausted, McpSession
from .transport import serve_http, serve_stdio

__all__ = ["MAX_ARGUMENT_BYTES", "BudgetExhausted", "McpSession", "build_server", "serve_http", "serve_stdio"]
