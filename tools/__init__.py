"""Read-only, typed tools over the sandbox. Importing this package registers every tool."""

from forensic.tools.base import (
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
from forensic.tools import fabric, gpu_health, host_load, job_logs, job_steps, kernel_log, metrics, nic_counters, pcie_link  # noqa: F401  (registers)
from forensic.tools import host_events, nic_fec  # noqa: F401  (registers; issue 11)
from forensic.tools import input_pipeline  # noqa: F401  (registers; issue 11m)
from forensic.tools import gpu_work  # noqa: F401  (registers; issue 11h)

__all__ = ["HostScope", "Signal", "Tool", "ToolContext", "ToolInput", "ToolResult", "all_tools", "get_tool", "register"]
