"""Read-only, typed tools over the sandbox. Importing this package registers every tool."""

from tools.base import (
    HostScope,
    Signal,
    Tool,
    ToolContext,
    ToolInput,
    ToolResult,
    all_tools,
    get_tool,
    register,
)
from tools import gpu_health, kernel_log, metrics, pcie_link  # noqa: F401  (registers)

__all__ = ["HostScope", "Signal", "Tool", "ToolContext", "ToolInput", "ToolResult", "all_tools", "get_tool", "register"]
