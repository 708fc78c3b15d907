"""One MCP client's view of one incident: its own budget, its own evidence ledger, its reports.

Everything an MCP client can do goes through :class:`McpSession`, whatever the transport:

- call one forensic tool (validated by the tool's own pydantic model, confined by the sandbox,
  charged to the session's budget before it runs, recorded as ``ev-N`` in the session's ledger);
- run a whole investigation (``inv-N``), whose tool calls and time are charged to the same budget;
- read what it found: evidence records, reports (with their proposals) and the failure graph.

There is deliberately no way to approve or reject a proposal here: decisions only enter through
the approval gate from an authenticated person (``forensic approve`` or the service), never from a
model or an agent framework on the other side of MCP.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from forensic.harness import ledger
from forensic.harness.budget import Limits, Usage, exhausted
from forensic.harness.driver import budget_left
from forensic.harness.graph import Investigator
from forensic.sandbox import ForensicError, ToolArgumentError
from forensic.tools import all_tools, get_tool

#: A tool call's arguments, as JSON, may not exceed this: every forensic tool takes a few short fields.
MAX_ARGUMENT_BYTES = 16_384


class BudgetExhausted(ForensicError):
    """The session has spent one of its budgets; nothing more runs in it."""


class McpSession:
    """The budget, ledger and reports of one MCP session over one incident bundle."""

    def __init__(self, bundle: Any, limits: Limits | None = None) -> None:
        # One Investigator gives the tools the same context (and memoised parses) as an investigation.
        self._inv = Investigator(bundle)
        self.bundle_path = str(bundle)
        self.limits = limits or Limits()
        self.usage = Usage()
        self.records: list[dict[str, Any]] = []
        self.reports: list[dict[str, Any]] = []
        self._conversation: Any = None  # made on the first chat question
        self._lock = threading.Lock()  # tool runs are sync; one at a time keeps the ledger ordered

    # -- what the session offers --------------------------------------------------------------
    @property
    def incident(self) -> dict[str, Any]:
        return self._inv.source.incident.model_dump(mode="json")

    @staticmethod
    def tool_schemas() -> list[dict[str, Any]]:
        return [t.schema() for t in all_tools().values()]

    def failure_graph(self) -> dict[str, Any]:
        return self._inv.failure_graph.model_dump(mode="json")

    def budget(self) -> dict[str, Any]:
        return {
            **{k: v for k, v in self.usage.model_dump().items()},
            **{f"{k}_limit": v for k, v in self.limits.model_dump().items()},
        }

    # -- calls --------------------------------------------------------------------------------
    def _check_budget(self) -> None:
        spent = exhausted(self.usage, self.limits)
        if spent:
            raise BudgetExhausted(f"this MCP session's {spent} budget is spent ({self.budget()})")

    def call_tool(self, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
        """Run one forensic tool and return its evidence record (``ev-N``)."""
        _check_size(arguments)
        tool = get_tool(name)  # ToolArgumentError for an unknown name
        args = tool.validate(arguments)  # ToolArgumentError for bad arguments, before any budget is spent
        with self._lock:
            self._check_budget()
            self.usage.tool_calls += 1
            started = time.monotonic()
            try:
                result = tool(self._inv.ctx, args.model_dump(exclude_none=True))
            finally:
                self.usage.wall_s += time.monotonic() - started
            record = ledger.make_record(
                len(self.records) + 1, name, args.model_dump(exclude_none=True), result
            )
            self.records = ledger.append(self.records, record)
            return self.records[-1]

    def investigate(self, *, tool_calls: int | None = None, wall_s: float | None = None) -> dict[str, Any]:
        """Run a whole investigation within what is left of the session's budget."""
        with self._lock:
            self._check_budget()
            limits = budget_left(self.limits, self.usage, tool_calls=tool_calls, wall_s=wall_s)
            inv = Investigator(self._inv.source, limits=limits, graph=self._inv.failure_graph)
            started = time.monotonic()
            try:
                report = inv.run()
            finally:
                self.usage.wall_s += time.monotonic() - started
            self.usage.tool_calls += int(report.get("budget", {}).get("tool_calls", 0))
            report = {**report, "id": f"inv-{len(self.reports) + 1}"}
            self.reports.append(report)
            return report

    def chat(self, question: str) -> dict[str, Any]:
        """One question of this session's conversation: the answer, its checked claims, new evidence.

        The conversation is one in-memory thread per session (its own evidence ids, inside the
        answer); its tool calls and time are charged to the session's budget. Nothing said in it
        can approve anything: the conversation's only way to decide is its ``decide`` method, which
        MCP never calls.
        """
        if not isinstance(question, str) or not question.strip() or len(question) > 2000:
            raise ToolArgumentError("chat: question must be 1 to 2,000 characters of text")
        from forensic.harness.conversation import Conversation
        from langgraph.checkpoint.memory import InMemorySaver

        with self._lock:
            self._check_budget()
            if self._conversation is None:
                left = budget_left(self.limits, self.usage)
                self._conversation = Conversation(self._inv.source, checkpointer=InMemorySaver(), limits=left)
            conv = self._conversation
            before = len(conv.records)
            started = time.monotonic()
            try:
                answer = conv.ask(question)
            finally:
                self.usage.wall_s += time.monotonic() - started
            self.usage.tool_calls += max(0, len(conv.records) - before)
            return {"thread": conv.thread_id, "answer": answer.render(), **answer.model_dump(mode="json")}

    # -- reading back -------------------------------------------------------------------------
    def evidence(self, evidence_id: str) -> dict[str, Any]:
        record = ledger.by_id(self.records).get(evidence_id)
        if record is None:
            raise ToolArgumentError(
                f"no evidence {evidence_id!r} in this session (it has {len(self.records)} records)"
            )
        return record

    def report(self, report_id: str) -> dict[str, Any]:
        for r in self.reports:
            if r["id"] == report_id:
                return r
        raise ToolArgumentError(f"no investigation {report_id!r} in this session")


def _check_size(arguments: Any) -> None:
    try:
        size = len(json.dumps(arguments if arguments is not None else {}))
    except (TypeError, ValueError) as exc:
        raise ToolArgumentError(f"arguments are not JSON: {exc}") from None
    if size > MAX_ARGUMENT_BYTES:
        raise ToolArgumentError(f"arguments are {size} bytes; at most {MAX_ARGUMENT_BYTES} are accepted")
