"""The only code that touches the outside world: confined, read-only hosts over bundles."""

from sandbox._fs import MAX_READ_BYTES, ConfinedFS
from sandbox.bundle import (
    SCHEMA,
    Bundle,
    GpuInfo,
    HostInfo,
    Incident,
    NicInfo,
    RankPlacement,
    SwitchInfo,
    Topology,
    parse_time,
)
from sandbox.errors import (
    BudgetExceeded,
    BundleError,
    CorruptInputError,
    ForensicError,
    ModelError,
    NotABundleError,
    NotAllowedError,
    NotFoundError,
    ParseError,
    PathEscapeError,
    PlannerError,
    PlaybookError,
    SandboxError,
    ToolArgumentError,
    ToolError,
)
from sandbox.host import HOST_COMMANDS, SWITCH_COMMANDS, Host, ReplayHost, ReplaySwitch, command_file

__all__ = [name for name in dir() if not name.startswith("_")]
