"""A conversation is one LangGraph thread: the investigation, then every question and decision.

The thread's state holds the report, the evidence ledger, the budget and the turns. The first
question runs a whole investigation (the same :class:`~forensic.harness.graph.Investigator`, the
same planner and budget); each later question is answered from that state and may add evidence
through the same tools and budget. ``resume`` continues a conversation from its checkpoint, in
another process if need be.

Decisions on proposals enter only through :meth:`Conversation.decide`, which the terminal calls
for ``/approve`` and ``/reject`` typed by the person at it, with the operating-system user as the
approver; they go through :func:`forensic.harness.approvals.apply` (content hash, pending status,
authenticated person) and the audit log, as ``forensic approve`` does. Nothing a question, an
answer or a model says becomes a decision.
"""

from __future__ import annotations

import operator
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypedDict

from forensic.harness import approvals
from forensic.harness.budget import Limits, Usage
from forensic.harness.failure_graph import FailureGraph
from forensic.harness.graph import Investigator
from forensic.sandbox import EvidenceSource, ForensicError
from langgraph.graph import END, START, StateGraph

from .answers import Answer, Workspace, build_answer
from .intents import classify


class ChatState(TypedDict, total=False):
    bundle_path: str
    incident_id: str
    limits: dict[str, Any]
    usage: dict[str, Any]
    report: dict[str, Any] | None
    records: list[dict[str, Any]]
    decisions: list[dict[str, Any]]
    question: str | None
    last_subject: str | None
    turns: Annotated[list[dict[str, Any]], operator.add]


class Conversation:
    """One conversation about one incident bundle, checkpointed as one thread."""

    def __init__(
        self,
        bundle: EvidenceSource | Path | str,
        *,
        checkpointer: Any,
        limits: Limits | None = None,
        planner: str = "graph",
        planner_kwargs: dict[str, Any] | None = None,
        graph: FailureGraph | None = None,
        audit_log: Path | None = None,
        thread_id: str | None = None,
        phrase: Any = None,
        approve_hint: Callable[[dict[str, Any]], str] | None = None,
    ) -> None:
        # The playbooks decide the causes a question can name as well as the verdict's vocabulary.
        self.inv = Investigator(
            bundle, planner=planner, planner_kwargs=planner_kwargs, limits=limits, graph=graph
        )
        self.limits = limits or Limits()
        self.audit_log = audit_log
        self.phrase = phrase  # optional model phraser: (question, Answer, records) -> Answer
        self.approve_hint = approve_hint  # how a person approves where this conversation is shown
        self.thread_id = thread_id or f"chat-{self.inv.source.incident.id}-{uuid.uuid4().hex[:8]}"
        self._components = self._vocabulary()
        self.app = self._build(checkpointer)

    # -- names the questions may use ----------------------------------------------------------
    def _vocabulary(self) -> dict[str, str]:
        b = self.inv.source
        names: dict[str, str] = {}
        for host in b.host_names():
            names[host.lower()] = host
            info = b.host_info(host)
            for g in info.gpus if info else []:
                names[f"{host}/gpu{g.index}".lower()] = f"{host}/gpu{g.index}"
            for n in info.nics if info else []:
                names[f"{host}/{n.ibdev}".lower()] = f"{host}/{n.ibdev}"
        for host, gpu in b.rank_map().values():
            names.setdefault(f"{host}/gpu{gpu}".lower(), f"{host}/gpu{gpu}")
        for sw in b.switch_names():
            names[sw.lower()] = sw
        return names

    # -- the graph ------------------------------------------------------------------------------
    def _build(self, checkpointer: Any) -> Any:
        g = StateGraph(ChatState)
        g.add_node("investigate", self._investigate)
        g.add_node("answer", self._answer)
        g.add_conditional_edges(
            START,
            lambda s: "answer" if s.get("report") else "investigate",
            {"answer": "answer", "investigate": "investigate"},
        )
        g.add_edge("investigate", "answer")
        g.add_edge("answer", END)
        return g.compile(checkpointer=checkpointer)

    def _investigate(self, state: ChatState) -> dict[str, Any]:
        report = self.inv.run()
        b = report.get("budget") or {}
        usage = Usage(
            tool_calls=b.get("tool_calls", 0),
            llm_tokens=b.get("llm_tokens", 0),
            cost_usd=b.get("cost_usd", 0.0),
            wall_s=b.get("wall_s", 0.0),
        )
        return {
            "report": report,
            "records": report.get("evidence") or [],
            "usage": usage.model_dump(),
            "decisions": [],
        }

    def _answer(self, state: ChatState) -> dict[str, Any]:
        question = state.get("question") or ""
        report = state["report"] or {}
        ws = Workspace(
            ctx=self.inv.ctx,
            graph=self.inv.failure_graph,
            report=report,
            records=state.get("records") or [],
            usage=Usage.model_validate(state.get("usage") or {}),
            limits=self.limits,
            rank_map=self.inv.source.rank_map(),
            window=self.inv.source.window,
            approve_hint=self.approve_hint,
        )
        intent = classify(
            question, self._components, self.inv.failure_graph.vocabulary(), state.get("last_subject")
        )
        ans = build_answer(ws, intent)
        if self.phrase is not None:
            ans = self.phrase(question, ans, ws)
        turn = {"question": question, "answer": ans.model_dump(mode="json")}
        return {
            "records": ws.records,
            "usage": ws.usage.model_dump(),
            "turns": [turn],
            "question": None,
            "last_subject": ans.subject or state.get("last_subject"),
        }

    # -- public ---------------------------------------------------------------------------------
    def config(self) -> dict[str, Any]:
        return {"configurable": {"thread_id": self.thread_id}, "recursion_limit": 25}

    def state(self) -> dict[str, Any]:
        return self.app.get_state(self.config()).values or {}

    def ask(self, question: str) -> Answer:
        if len(question) > 2000:
            question = question[:2000]
        inputs: dict[str, Any] = {"question": question}
        if not self.state():
            inputs.update(
                bundle_path=str(self.inv.source.locator),
                incident_id=self.inv.source.incident.id,
                limits=self.limits.model_dump(),
                usage=Usage().model_dump(),
                report=None,
                records=[],
                decisions=[],
                turns=[],
                last_subject=None,
            )
        final = self.app.invoke(inputs, self.config())
        return Answer.model_validate(final["turns"][-1]["answer"])

    @property
    def report(self) -> dict[str, Any] | None:
        return self.state().get("report")

    @property
    def records(self) -> list[dict[str, Any]]:
        return self.state().get("records") or []

    def refuse(self, decision: approvals.Decision, reason: str) -> dict[str, Any]:
        """Audit a decision refused before it reached the proposals (no report yet, none named)."""
        entry = approvals.refusal(thread=self.thread_id, incident="", decision=decision, reason=reason)
        if self.audit_log is not None:
            approvals.append_audit(self.audit_log, [entry])
        return entry.model_dump()

    def decide(self, decisions: list[approvals.Decision]) -> list[dict[str, Any]]:
        """Apply a person's decisions to the report's proposals; return the audit entries."""
        state = self.state()
        report = state.get("report")
        if not report:
            raise ForensicError("nothing to decide yet: ask a question first")
        from forensic.harness.models import Report

        rep = Report.model_validate(report)
        rep.proposals, audit = approvals.apply(
            rep.proposals, [d.model_dump() for d in decisions], thread=self.thread_id, incident=rep.incident
        )
        if self.audit_log is not None:
            approvals.append_audit(self.audit_log, audit)
        entries = [a.model_dump() for a in audit]
        self.app.update_state(
            self.config(),
            {"report": rep.to_json_dict(), "decisions": [*(state.get("decisions") or []), *entries]},
            as_node="answer",
        )
        return entries
