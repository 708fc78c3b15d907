"""Read-only, typed tools over the sandbox. Importing this package registers every tool."""

from forensic.tools import (  # noqa: F401  (imported to register each tool)
    error_counters,
    fabric,
    fleet_activity,
    gpu_health,
    gpu_work,
    host_events,
    host_load,
    input_pipeline,
    job_logs,
    job_steps,
    kernel_log,
    metrics,
    nic_counters,
    nic_fec,
    pcie_link,
)
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

__all__ = [
    "HostScope",
    "Signal",
    "Tool",
    "ToolContext",
    "ToolInput",
    "ToolResult",
    "all_tools",
    "get_tool",
    "register",
]
