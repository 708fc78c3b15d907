"""The ``forensic`` command line: one typer app, one module per command group.

Exit codes: 0 when an investigation ran to a verdict of any status, 2 for unusable input (one
line on stderr saying why), 1 for an internal error.

Each command lives in its own module and registers itself on :data:`app` (or a sub-app) when
imported; :func:`main` imports them all. A new surface adds a module here and one line to
``_COMMANDS``; the command module imports its surface lazily, inside the command, so that
``forensic --help`` stays fast.
"""

from __future__ import annotations

import importlib
import sys

from ._common import app, err

#: Command modules, imported for their registrations.
_COMMANDS = (
    "investigate",
    "approve",
    "evaluate",
    "inventory",
    "bench",
    "agent",
    "collect",
    "audit",
    "list",
    "show",
    "plot",
    "serve",
    "bench_intake",
    "execute",
    "mcp",
    "chat",
    "worker",
    "evidence",
    "db",
    "watch",
)


def _register() -> None:
    for name in _COMMANDS:
        importlib.import_module(f"{__name__}.{name}")


def main() -> None:
    _register()
    try:
        app()
    except KeyboardInterrupt:
        err.print("forensic: interrupted")
        sys.exit(130)


__all__ = ["app", "main"]
