"""The error tree, re-exported: it lives in :mod:`forensic.errors`, below the sandbox, so that
settings and parsers raise from it without importing the sandbox."""

from forensic.errors import (
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
    RemoteHostError,
    SandboxError,
    SettingsError,
    ToolArgumentError,
    ToolError,
    TruncatedStreamError,
    WallTimeExceeded,
)

__all__ = [
    "ForensicError",
    "BundleError",
    "NotABundleError",
    "CorruptInputError",
    "TruncatedStreamError",
    "SandboxError",
    "PathEscapeError",
    "NotFoundError",
    "NotAllowedError",
    "RemoteHostError",
    "ParseError",
    "ToolError",
    "ToolArgumentError",
    "PlaybookError",
    "SettingsError",
    "WallTimeExceeded",
    "PlannerError",
    "ModelError",
]
