"""forensic: an autonomous investigator for GPU training fleets.

One import root for the whole project. The top-level folders of the checkout are mapped under it
by ``pyproject.toml`` (``package-dir``), so the layout stays as users know it while nothing is
installed as a bare ``harness``, ``tools``, ``sandbox`` or ``evals`` module:

- ``forensic.sandbox``: read-only access to evidence (the only code that touches the outside).
- ``forensic.tools``: typed tools and parsers over the sandbox.
- ``forensic.harness``: investigations and the surfaces that drive them (CLI, service, chat, MCP).
- ``forensic.playbooks``: the failure graph as data files.
- ``forensic.evals``: generators, runner and baselines; never imported by the runtime.

The public API is what this module exports (``__all__``): what a tool author, a playbook author
and a program that runs an investigation need. Everything else may change between versions.
The names are loaded on first use, so ``import forensic`` stays free: the step recorder
(:mod:`forensic.record`) runs inside training jobs and imports only the standard library.

Writing a tool (docs/playbooks.md; ``forensic tools --json`` lists the registered ones)::

    from forensic import HostScope, Tool, ToolContext, ToolResult, Signal, register

    @register
    class FanSpeed(Tool):
        name = "fan_speed"
        emits = frozenset({"fan_rpm_low"})
        description = "Fan speed of each GPU vs its peers. Scope: one host or all."

        def run(self, ctx: ToolContext, args: HostScope) -> ToolResult:
            ...  # read through ctx (never the file system), return findings as Signals

Loading playbooks and running an investigation::

    from forensic import Investigator, Limits, load_failure_graph

    graph = load_failure_graph("my-playbooks")
    report = Investigator("incident/", graph=graph, limits=Limits(tool_calls=20)).run()
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"

#: Public name -> the module that defines it.
_EXPORTS: dict[str, str] = {
    # tools: the seam a new tool plugs into
    "Tool": "forensic.tools.base",
    "ToolInput": "forensic.tools.base",
    "HostScope": "forensic.tools.base",
    "ToolContext": "forensic.tools.base",
    "ToolResult": "forensic.tools.base",
    "Signal": "forensic.tools.base",
    "register": "forensic.tools.base",
    "all_tools": "forensic.tools",
    "get_tool": "forensic.tools",
    # evidence: what tools read through
    "Host": "forensic.sandbox.host",
    "EvidenceSource": "forensic.sandbox.sources",
    "MetricSource": "forensic.sandbox.sources",
    "Bundle": "forensic.sandbox.bundle",
    "open_source": "forensic.sandbox.sources",
    "parse_time": "forensic.times",
    # playbooks: the failure graph as data
    "FailureGraph": "forensic.harness.failure_graph",
    "RootCauseSpec": "forensic.harness.failure_graph",
    "load_failure_graph": "forensic.harness.failure_graph",
    "default_graph": "forensic.harness.failure_graph",
    # running an investigation
    "Investigator": "forensic.harness.graph",
    "Limits": "forensic.harness.budget",
    "Report": "forensic.harness.models",
    # the error tree (forensic.sandbox.errors draws it)
    "ForensicError": "forensic.sandbox.errors",
    "BundleError": "forensic.sandbox.errors",
    "SandboxError": "forensic.sandbox.errors",
    "ParseError": "forensic.sandbox.errors",
    "ToolError": "forensic.sandbox.errors",
    "ToolArgumentError": "forensic.sandbox.errors",
    "PlaybookError": "forensic.sandbox.errors",
}

__all__ = [
    "__version__",
    "Tool",
    "ToolInput",
    "HostScope",
    "ToolContext",
    "ToolResult",
    "Signal",
    "register",
    "all_tools",
    "get_tool",
    "Host",
    "EvidenceSource",
    "MetricSource",
    "Bundle",
    "open_source",
    "parse_time",
    "FailureGraph",
    "RootCauseSpec",
    "load_failure_graph",
    "default_graph",
    "Investigator",
    "Limits",
    "Report",
    "ForensicError",
    "BundleError",
    "SandboxError",
    "ParseError",
    "ToolError",
    "ToolArgumentError",
    "PlaybookError",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'forensic' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once loaded, a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:  # what type checkers and editors see; at run time __getattr__ loads on demand
    from forensic.harness.budget import Limits
    from forensic.harness.failure_graph import FailureGraph, RootCauseSpec, default_graph, load_failure_graph
    from forensic.harness.graph import Investigator
    from forensic.harness.models import Report
    from forensic.sandbox.bundle import Bundle
    from forensic.sandbox.errors import (
        BundleError,
        ForensicError,
        ParseError,
        PlaybookError,
        SandboxError,
        ToolArgumentError,
        ToolError,
    )
    from forensic.sandbox.host import Host
    from forensic.sandbox.sources import EvidenceSource, MetricSource, open_source
    from forensic.times import parse_time
    from forensic.tools import all_tools, get_tool
    from forensic.tools.base import HostScope, Signal, Tool, ToolContext, ToolInput, ToolResult, register
