"""forensic over the Model Context Protocol, with the official ``mcp`` SDK's low-level server.

The low-level server (rather than the decorator API) lets each forensic tool keep its own pydantic
input model: the schema an MCP client sees is the tool's ``model_json_schema()``, and the same
model validates the call. Every tool is annotated read-only, idempotent and closed-world.

Tools: each forensic tool, plus ``investigate`` (a whole investigation, returning the report with
its citations). Resources: ``forensic://incident``, ``forensic://failure-graph``,
``forensic://budget``, ``forensic://evidence/ev-N`` (this session's tool calls) and
``forensic://investigations/inv-N`` (reports, with their proposals: readable, never approvable).

Errors come back as MCP errors with a message, never as a crash: an unknown tool or bad arguments
are ``INVALID_PARAMS``; a spent budget, an unknown resource or a tool that failed are
``INVALID_REQUEST`` / ``INTERNAL_ERROR`` with the reason.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from forensic.harness.budget import Limits
from forensic.harness.render import verdict_text
from forensic.sandbox import ForensicError, ToolArgumentError
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST

from forensic import __version__

from .session import BudgetExhausted, McpSession

_READ_ONLY = types.ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

_INVESTIGATE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "tool_calls": {
            "type": "integer",
            "minimum": 0,
            "maximum": 1000,
            "description": "At most this many tool calls (never more than the session has left).",
        },
        "wall_s": {
            "type": "number",
            "exclusiveMinimum": 0,
            "maximum": 3600,
            "description": "At most this many seconds (never more than the session has left).",
        },
    },
}

_CHAT_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["question"],
    "properties": {
        "question": {
            "type": "string",
            "minLength": 1,
            "maxLength": 2000,
            "description": "A question about the incident, in words.",
        }
    },
}

#: MCP sessions one HTTP server keeps open at once; the transport answers 503 to one more.
MAX_SESSIONS = 64
#: Seconds an HTTP session may go unused before it is closed and its budget and ledger dropped.
SESSION_IDLE_S = 30 * 60.0


def _json(obj: Any) -> str:
    return json.dumps(obj, indent=2, default=str)


class _Sessions:
    """One :class:`McpSession` per MCP session, each with its own budget and ledger.

    Over streamable HTTP a session is named by the ``Mcp-Session-Id`` header the transport hands
    out at initialisation (the transport has already refused ids it did not issue); an HTTP request
    without one is refused, never served from a shared session. Over stdio (and in process) the
    process serves exactly one client, so there is one session.

    At most ``max_sessions`` are kept (the least recently used goes first), the HTTP transport's
    own bound. One unused for ``idle_s`` plus the session's wall budget (the longest one call can
    run) is dropped: by then the transport, which closes sessions idle for ``idle_s`` with no
    request in flight, has closed it too, so a live session never loses its budget and ledger here.
    """

    def __init__(
        self,
        bundle: Any,
        limits: Limits,
        *,
        max_sessions: int = MAX_SESSIONS,
        idle_s: float = SESSION_IDLE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.bundle, self.limits = bundle, limits
        self.max_sessions, self.idle_s, self.clock = max_sessions, idle_s, clock
        self._by_id: dict[str, tuple[McpSession, float]] = {}  # least recently used first
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._by_id)

    def get(self, ctx: Any) -> McpSession:
        request = getattr(ctx, "request", None)
        if request is None:
            key = "stdio"
        else:
            key = request.headers.get("mcp-session-id") or ""
            if not key:
                raise MCPError(INVALID_REQUEST, "no Mcp-Session-Id: initialize a session first")
        now = self.clock()
        with self._lock:
            keep_s = self.idle_s + self.limits.wall_s
            self._by_id = {k: v for k, v in self._by_id.items() if now - v[1] <= keep_s}
            found = self._by_id.pop(key, None)
            session = found[0] if found is not None else None
            if session is None:
                while len(self._by_id) >= self.max_sessions:
                    self._by_id.pop(next(iter(self._by_id)))
                session = McpSession(self.bundle, self.limits)
            self._by_id[key] = (session, now)
            return session


def build_server(bundle: Any, limits: Limits | None = None) -> Server:
    """An MCP server over one incident (a bundle path or an evidence source, such as a live fleet);
    each MCP session gets its own budget, ``limits``."""
    bundle = Path(bundle) if isinstance(bundle, str) else bundle
    McpSession(bundle)  # open it once now: an unusable bundle fails at start, not at the first call
    sessions = _Sessions(bundle, limits or Limits())

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        tools = [
            types.Tool(
                name=s["name"],
                description=s["description"],
                input_schema=s["parameters"],
                annotations=_READ_ONLY,
            )
            for s in McpSession.tool_schemas()
        ]
        tools.append(
            types.Tool(
                name="investigate",
                input_schema=_INVESTIGATE_SCHEMA,
                annotations=_READ_ONLY,
                description="Investigate the incident end to end: hypotheses over the failure graph, tests with the "
                "read-only tools, and a verdict whose every finding cites evidence. Returns the "
                "forensic.report/v1 report; its remediation proposals can be read but not approved here.",
            )
        )
        tools.append(
            types.Tool(
                name="chat",
                input_schema=_CHAT_SCHEMA,
                annotations=_READ_ONLY,
                description="Ask about the incident in words and follow up (why is it slow? which rank is slowest? what about "
                "<host|GPU|NIC|rank>? why not <cause>? what should we do?). Each answer cites evidence; claims "
                "that do not check out are dropped. The first question runs the investigation.",
            )
        )
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        session = sessions.get(ctx)
        args = params.arguments or {}
        try:
            if params.name == "chat":
                if set(args) != {"question"}:
                    raise ToolArgumentError("chat: takes exactly one argument, question")
                out = await anyio.to_thread.run_sync(lambda: session.chat(args["question"]))
            elif params.name == "investigate":
                _check_investigate_args(args)
                out = await anyio.to_thread.run_sync(lambda: session.investigate(**args))
            else:
                out = await anyio.to_thread.run_sync(lambda: session.call_tool(params.name, args))
        except ToolArgumentError as exc:
            raise MCPError(INVALID_PARAMS, str(exc)) from None
        except BudgetExhausted as exc:
            raise MCPError(INVALID_REQUEST, str(exc)) from None
        except ForensicError as exc:
            raise MCPError(INTERNAL_ERROR, f"{params.name} failed: {exc}") from None
        return types.CallToolResult(content=[types.TextContent(text=_json(out))], structured_content=out)

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        session = sessions.get(ctx)
        fixed = [
            ("incident", "The incident: title, window, job."),
            ("failure-graph", "Symptoms, mechanisms and root causes with their tests."),
            ("budget", "What this session has spent and may spend."),
        ]
        res = [
            types.Resource(uri=f"forensic://{n}", name=n, description=d, mime_type="application/json")
            for n, d in fixed
        ]
        res += [
            types.Resource(
                uri=f"forensic://evidence/{r['id']}",
                name=r["id"],
                mime_type="application/json",
                description=f"{r['tool']}: {r['summary'][:200]}",
            )
            for r in session.records
        ]
        res += [
            types.Resource(
                uri=f"forensic://investigations/{r['id']}",
                name=r["id"],
                mime_type="application/json",
                description=verdict_text(r),
            )
            for r in session.reports
        ]
        return types.ListResourcesResult(resources=res)

    async def list_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template="forensic://evidence/{id}",
                    name="evidence",
                    description="An evidence record of this session (ev-N).",
                    mime_type="application/json",
                ),
                types.ResourceTemplate(
                    uri_template="forensic://investigations/{id}",
                    name="investigation",
                    description="A report of this session (inv-N).",
                    mime_type="application/json",
                ),
            ]
        )

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        session = sessions.get(ctx)
        uri = str(params.uri)
        kind, _, rest = uri.removeprefix("forensic://").partition("/")
        try:
            if not uri.startswith("forensic://"):
                raise ToolArgumentError(f"unknown resource {uri[:200]!r}")
            body = (
                {
                    "incident": lambda: session.incident,
                    "failure-graph": session.failure_graph,
                    "budget": session.budget,
                }.get(kind)
                if not rest
                else None
            )
            if body is not None:
                data = body()
            elif kind == "evidence" and rest:
                data = session.evidence(rest)
            elif kind == "investigations" and rest:
                data = session.report(rest)
            else:
                raise ToolArgumentError(f"unknown resource {uri[:200]!r}")
        except ToolArgumentError as exc:
            raise MCPError(INVALID_PARAMS, str(exc)) from None
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="application/json", text=_json(data))]
        )

    return Server(
        "forensic",
        version=__version__,
        instructions="Read-only investigator for one GPU training incident. Call `investigate` for a verdict, "
        "or single tools (start with job_steps) to look yourself; cite evidence ids (ev-N).",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
    )


def _check_investigate_args(args: dict[str, Any]) -> None:
    unknown = set(args) - set(_INVESTIGATE_SCHEMA["properties"])
    if unknown:
        raise ToolArgumentError(f"investigate: unknown arguments {sorted(unknown)}")
    for key, kind in (("tool_calls", int), ("wall_s", (int, float))):
        value = args.get(key)
        if value is not None and (
            isinstance(value, bool)
            or not isinstance(value, kind)
            or value <= 0
            and key == "wall_s"
            or value < 0
            or value > _INVESTIGATE_SCHEMA["properties"][key]["maximum"]
        ):
            raise ToolArgumentError(f"investigate: {key} out of range: {value!r}")
