"""The one error hierarchy of forensic.

It sits below every layer (settings, parsers, the sandbox, the tools and the harness all raise
from it); :mod:`forensic.sandbox.errors` re-exports it where older code imports it from.

Every error forensic raises on purpose derives from :class:`ForensicError`, so a caller can
catch the whole family in one place and turn it into a clear message::

    ForensicError
    ├── BundleError             input that cannot be investigated (CLI exit code 2)
    │   ├── NotABundleError     a folder without incident.json
    │   ├── CorruptInputError   unreadable JSON, truncated gzip, wrong schema
    │   │   └── TruncatedStreamError  a compressed stream cut short; carries the part that was readable
    │   └── PlacementError      a job's hosts could not be read (scheduler down, job unknown; sandbox.placement)
    ├── SandboxError            a request the sandbox refuses
    │   ├── PathEscapeError     "..", absolute paths or symlinks that leave the root
    │   ├── NotFoundError       the file or recorded command output does not exist
    │   ├── NotAllowedError     a command off the allowlist, or a write
    │   └── RemoteHostError     a node agent that is down, too slow, refuses us, or answers garbage
    ├── ParseError              text that a parser cannot use at all
    ├── ToolError               a tool failed
    │   └── ToolArgumentError   arguments that do not validate (from a model or a person)
    ├── PlaybookError           a failure-graph file that does not validate
    ├── SettingsError           a FORENSIC_* setting that does not validate (CLI exit code 2)
    ├── WallTimeExceeded        the working-time budget ran out during a step
    └── PlannerError            a planner produced nothing usable
        └── ModelError          the model endpoint failed or returned garbage
"""

from __future__ import annotations


class ForensicError(Exception):
    """Root of every error forensic raises on purpose."""


class BundleError(ForensicError):
    """The input cannot be investigated at all."""


class NotABundleError(BundleError):
    """The folder is not an incident bundle."""


class CorruptInputError(BundleError):
    """A file that must be read is corrupt (bad JSON, truncated gzip, wrong schema)."""


class TruncatedStreamError(CorruptInputError):
    """A compressed file whose stream ends (or breaks) part way: what decompressed before the
    damage is kept in ``readable``, so a reader may use that part and say what was lost."""

    def __init__(self, message: str, readable: bytes = b"") -> None:
        super().__init__(message)
        #: The decompressed bytes before the stream broke (may be empty: nothing was readable).
        self.readable = readable


class SandboxError(ForensicError):
    """The sandbox refused a request."""


class PathEscapeError(SandboxError):
    """A path would leave the sandbox root."""


class NotFoundError(SandboxError):
    """No such file or recorded command output."""


class NotAllowedError(SandboxError):
    """The request is not permitted by the sandbox policy."""


class RemoteHostError(SandboxError):
    """A node agent could not answer: down, past its timeout, refused the token, or sent garbage."""


class ParseError(ForensicError):
    """Text that a parser cannot use at all."""


class ToolError(ForensicError):
    """A tool failed."""


class ToolArgumentError(ToolError):
    """Tool arguments that do not validate."""


class PlaybookError(ForensicError):
    """A failure-graph file does not validate."""


class SettingsError(ForensicError):
    """A setting from the environment (``FORENSIC_*``) does not validate."""


class WallTimeExceeded(ForensicError):
    """The working-time budget ran out in the middle of a step (a read, a parse, a model call)."""


class PlannerError(ForensicError):
    """A planner produced nothing usable."""


class ModelError(PlannerError):
    """The model endpoint failed or returned something unusable."""
