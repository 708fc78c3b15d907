"""Read-only, typed tools over the sandbox. Importing this package registers every tool."""

from forensic.tools import (  # noqa: F401  (registers)  # noqa: F401  (registers; issue 11)
    error_counters,
    fabric,
    gpu_health,
    gpu_work,  # noqa: F401  (registers; issue 11h)
    host_events,
    host_load,
    input_pipeline,  # noqa: F401  (registers; issue 11m)
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
