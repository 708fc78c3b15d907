"""An investigation as a LangGraph state graph.

    triage -> hypothesize -> choose_test -> run_tool -> assess -> (choose_test ...)
                                  |                                    |
                                  +------------> conclude <------------+
                                                    |
                                                 propose -> [approval_gate] -> END

The state is plain JSON (so any checkpointer can store it); the bundle and the tools live in
the :class:`Investigator`, rebuilt from ``bundle_path`` when a thread is resumed. Nodes have no
side effects outside the state, so LangGraph may re-run any of them on resume. The append-only
lists (evidence, executed calls, refusals, notes, trace, decisions) are declared with a reducer:
a node returns only what it adds, and no node can rewrite what an earlier step recorded.

How a thread is started, continued, resumed and decided is :mod:`forensic.harness.driver`.
"""

from __future__ import annotations

import logging
import operator
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, Protocol, TypedDict

from forensic.harness import approvals, ledger
from forensic.harness.budget import Limits, Usage, exhausted
from forensic.harness.driver import Driver, OnStep
from forensic.harness.failure_graph import (
    FailureGraph,
    Hypothesis,
    Observation,
    beliefs,
    default_graph,
    observe,
)
from forensic.harness.models import Report
from forensic.harness.planners import PlannerView, Refusal, Stop, ToolCall, call_key, make_planner
from forensic.harness.proposals import make_proposals
from forensic.harness.report import build_report, symptom_of
from forensic.sandbox import Bundle, EvidenceSource, ForensicError, ToolArgumentError, deadline, open_source
from forensic.sandbox.errors import NotAllowedError, PathEscapeError, WallTimeExceeded
from forensic.tools import ToolContext, ToolResult, all_tools, get_tool
from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphInterrupt
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

log = logging.getLogger(__name__)

__all__ = ["Investigator", "OnStep", "State"]


class State(TypedDict, total=False):
    bundle_path: str
    incident_id: str
    planner: str
    #: The evidence ledger: each tool call appends one record (``ev-N``), never edits one.
    records: Annotated[list[dict[str, Any]], operator.add]
    #: (tool, host) of every call that ran, so the planner does not repeat one.
    executed: Annotated[list[list[Any]], operator.add]
    #: Calls refused by validation or the sandbox policy, answered from here if asked again.
    refused: Annotated[list[dict[str, Any]], operator.add]
    pending: dict[str, Any] | None
    usage: dict[str, Any]
    limits: dict[str, Any]
    stop_reason: str | None
    budget_exhausted: str | None
    notes: Annotated[list[str], operator.add]
    report: dict[str, Any] | None
    await_approval: bool
    decisions: Annotated[list[dict[str, Any]], operator.add]
    hypotheses: list[dict[str, Any]]
    trace: Annotated[list[dict[str, Any]], operator.add]
    symptom: str
    planner_state: dict[str, Any]
    playbooks: dict[str, Any]


def _inert(args: Any) -> dict[str, Any]:
    """Arguments that did not validate, kept as bounded text: they may hold anything a model sent
    (huge integers, deep nesting) and must still fit the checkpoint and the report."""
    return {"unvalidated": repr(args)[:500]}


def _refusal(key: str, call: ToolCall, index: int, reason: str) -> dict[str, Any]:
    host = call.args.get("host")
    return Refusal(
        key=key,
        tool=call.tool,
        host=host if isinstance(host, str) else None,
        evidence=f"ev-{index}",
        reason=reason,
    ).model_dump()


def _summary(hyps: list[Any], k: int = 8) -> list[dict[str, Any]]:
    return [
        {
            "root_cause": h.root_cause,
            "component": h.component,
            "p": round(h.probability, 4),
            "confirmed": h.confirmed,
            "support": h.support,
        }
        for h in hyps[:k]
    ]


class _Node(Protocol):
    # LangGraph calls a node with its state by the name ``state``; a bare Callable type does not
    # say the parameter may be passed by name, so add_node's overloads would not accept it.
    def __call__(self, state: State) -> dict[str, Any]: ...


def _timed(fn: Callable[[State], dict[str, Any]]) -> _Node:
    """Count a node's own time against the wall-time budget (time waiting for a person is not)."""

    def node(state: State) -> dict[str, Any]:
        t0 = time.monotonic()
        update = fn(state)
        usage = Usage.model_validate(update.get("usage") or state.get("usage") or {})
        usage.wall_s += time.monotonic() - t0
        update["usage"] = usage.model_dump()
        return update

    node.__name__ = fn.__name__
    return node


class Investigator:
    """Runs investigations of one bundle with one planner."""

    def __init__(
        self,
        bundle: EvidenceSource | Bundle | Path | str,
        *,
        planner: str = "graph",
        planner_kwargs: dict[str, Any] | None = None,
        graph: FailureGraph | None = None,
        limits: Limits | None = None,
        checkpointer: Any = None,
        audit_log: Path | None = None,
    ) -> None:
        self.limits = limits or Limits()
        t0 = time.monotonic()
        # Each gzip stream is checked when a tool reads it (lazily): a corrupt file costs the read
        # that wanted it, and opening a 2,048-host bundle does not decompress every stream first.
        if isinstance(bundle, Path) or (isinstance(bundle, str) and not bundle.startswith("fleet:")):
            # Opening counts against the wall budget where it can take long: unpacking an archive and
            # parsing topology.json. A topology that runs out of time is left out (the run then ends
            # inconclusive, saying so); an archive that runs out leaves nothing to investigate.
            try:
                bundle = Bundle(
                    bundle,
                    verify_gzip="lazy",
                    verify_budget_s=self.limits.wall_s,
                    budget_s=self.limits.wall_s,
                )
            except WallTimeExceeded as exc:
                raise WallTimeExceeded(
                    f"inconclusive, nothing investigated: {exc} (--budget-wall-s {self.limits.wall_s:g})"
                ) from None
        self.source: EvidenceSource = open_source(bundle)
        self.open_s = time.monotonic() - t0
        self.ctx = ToolContext(self.source)
        self.failure_graph = graph or default_graph()
        self.planner = make_planner(planner, **(planner_kwargs or {}))
        self.tools = all_tools()
        self.audit_log = audit_log
        self._belief_cache: tuple[tuple, Observation, list[Hypothesis]] | None = None
        self.app = self._build(checkpointer)
        self.driver = Driver(self)

    # -- graph -----------------------------------------------------------------------------
    def _build(self, checkpointer: Any) -> Any:
        g = StateGraph(State)
        g.add_node("triage", _timed(self._triage))
        g.add_node("hypothesize", _timed(self._hypothesize))
        g.add_node("choose_test", _timed(self._choose_test))
        g.add_node("run_tool", _timed(self._run_tool))
        g.add_node("assess", _timed(self._assess))
        g.add_node("conclude", _timed(self._conclude))
        g.add_node("propose", _timed(self._propose))
        g.add_node("approval_gate", self._approval_gate)
        g.add_edge(START, "triage")
        g.add_edge("triage", "hypothesize")
        g.add_edge("hypothesize", "choose_test")
        g.add_conditional_edges("choose_test", self._after_choose, {"run": "run_tool", "stop": "conclude"})
        g.add_edge("run_tool", "assess")
        g.add_edge("assess", "choose_test")
        g.add_edge("conclude", "propose")
        g.add_conditional_edges("propose", self._after_propose, {"gate": "approval_gate", "end": END})
        g.add_conditional_edges("approval_gate", self._after_gate, {"gate": "approval_gate", "end": END})
        return g.compile(checkpointer=checkpointer)

    def recursion_limit(self) -> int:
        # Each tool call is three steps (choose, run, assess) plus a fixed head and tail.
        return 3 * self.limits.tool_calls + 16

    # -- nodes -----------------------------------------------------------------------------
    def _triage(self, state: State) -> dict[str, Any]:
        notes: list[str] = []
        for n in self.source.notes():
            if n not in notes and n not in (state.get("notes") or []):
                notes.append(n)
        return {"notes": notes}

    def _beliefs(self, records: list[dict[str, Any]]) -> tuple[Observation, list[Hypothesis]]:
        """Observation and beliefs for the ledger, computed once per ledger (assess and the next
        choose_test read the same one). The key names every record, so two threads of one
        investigator never share an entry."""
        key = tuple((r["id"], r["tool"], r["status"], r["summary"]) for r in records)
        if self._belief_cache is None or self._belief_cache[0] != key:
            obs = observe(records)
            self._belief_cache = (key, obs, beliefs(self.failure_graph, obs))
        return self._belief_cache[1], self._belief_cache[2]

    def _view(self, state: State) -> PlannerView:
        obs, hyps = self._beliefs(state.get("records") or [])
        usage = Usage.model_validate(state.get("usage") or {})
        left = {
            k: max(0.0, float(getattr(self.limits, k)) - float(getattr(usage, k)))
            for k in ("tool_calls", "llm_tokens", "cost_usd", "wall_s")
        }
        return PlannerView(
            budget_left=left,
            graph=self.failure_graph,
            observation=obs,
            hypotheses=hyps,
            executed=[(t, h) for t, h in state.get("executed") or []],
            tools={n: t.cost for n, t in self.tools.items()},
            host_scoped=[n for n, t in self.tools.items() if "host" in t.Input.model_fields],
            hosts=self.source.host_names(),
            records=state.get("records") or [],
            refused=[Refusal.model_validate(r) for r in state.get("refused") or []],
            incident=self.source.incident.model_dump(mode="json", by_alias=True),
        )

    def _hypothesize(self, state: State) -> dict[str, Any]:
        view = self._view(state)
        return {
            "hypotheses": _summary(view.hypotheses),
            "symptom": symptom_of(self.failure_graph, view, self.source),
        }

    def _load_planner(self, state: State) -> None:
        """A planner with memory (the model planner's claims, its fallback) continues from the
        checkpoint, so a resumed run in a new process loses nothing."""
        if state.get("planner_state"):
            self.planner.load_state(state["planner_state"])

    def _choose_test(self, state: State) -> dict[str, Any]:
        self._load_planner(state)
        decision = self.planner.decide(self._view(state))
        saved = self.planner.dump_state()
        notes = list(self.planner.drain_notes())
        usage = Usage.model_validate(state.get("usage") or {})
        for key, value in self.planner.drain_usage().items():
            setattr(usage, key, getattr(usage, key) + value)
        if isinstance(decision, Stop):
            return {
                "pending": None,
                "stop_reason": decision.reason,
                "notes": notes,
                "usage": usage.model_dump(),
                "planner_state": saved,
            }
        if reason := exhausted(usage, self.limits):
            return {
                "pending": None,
                "budget_exhausted": reason,
                "stop_reason": f"budget exhausted: {reason}",
                "notes": notes,
                "usage": usage.model_dump(),
                "planner_state": saved,
            }
        return {
            "pending": decision.model_dump(),
            "notes": notes,
            "usage": usage.model_dump(),
            "planner_state": saved,
        }

    @staticmethod
    def _after_choose(state: State) -> str:
        return "run" if state.get("pending") else "stop"

    def _run_tool(self, state: State) -> dict[str, Any]:
        call = ToolCall.model_validate(state["pending"])
        records = state.get("records") or []
        usage = Usage.model_validate(state.get("usage") or {})
        usage.tool_calls += 1  # an invalid call counts too: a model must not probe for free
        executed: list[list[Any]] = []
        refused: list[dict[str, Any]] = []
        index = len(records) + 1
        key = call_key(call.tool, call.args)
        earlier = next(
            (Refusal.model_validate(r) for r in state.get("refused") or [] if r["key"] == key), None
        )
        if earlier is not None:
            # Refused once, refused again: answered from the refusal, never run a second time.
            record = ledger.make_record(
                index,
                call.tool,
                _inert(call.args),
                ToolResult(
                    status="error",
                    summary=f"{earlier.reason} (not run again: the same call was refused in {earlier.evidence})",
                    data={"refused": earlier.evidence},
                ),
            )
            return {"records": ledger.added(records, record), "usage": usage.model_dump(), "pending": None}
        try:
            tool = get_tool(call.tool)
            args = tool.validate(call.args)
            self.ctx.note_evidence(records)  # a sweep on a large fleet reads what the evidence names
            # The tool runs under what is left of the wall budget, reads and parsing included.
            with deadline.deadline(self.limits.wall_s - usage.wall_s, what=f"running {call.tool}"):
                result = tool(self.ctx, args.model_dump(exclude_none=True))
                # A tool that caught the deadline inside may have returned half its evidence.
                deadline.check(f"running {call.tool}")
            clean_args = args.model_dump(exclude_none=True)
            executed.append([call.tool, clean_args.get("host")])
        except GraphInterrupt:
            raise
        except WallTimeExceeded as exc:
            clean_args = _inert(call.args)
            result = ToolResult(status="error", summary=f"{call.tool} stopped: {exc}")
            executed.append([call.tool, call.args.get("host") if isinstance(call.args, dict) else None])
        except ToolArgumentError as exc:
            clean_args = _inert(call.args)
            result = ToolResult(status="error", summary=f"invalid call: {exc}")
            refused.append(_refusal(key, call, index, result.summary))
        except (NotAllowedError, PathEscapeError) as exc:  # the sandbox policy: asking again changes nothing
            clean_args = _inert(call.args)
            result = ToolResult(status="error", summary=f"{call.tool} refused: {exc}")
            refused.append(_refusal(key, call, index, result.summary))
        except ForensicError as exc:
            clean_args = _inert(call.args)
            result = ToolResult(
                status="error", summary=f"{call.tool} failed: {exc}", unread=[f"{call.tool}: {exc}"]
            )
        except Exception as exc:  # a bug in one tool must not lose the investigation
            clean_args = _inert(call.args)
            crashed = f"{call.tool} crashed: {type(exc).__name__}: {exc}"
            # What it would have read is unread, not absent.
            result = ToolResult(status="error", summary=crashed, unread=[crashed])
            executed.append([call.tool, call.args.get("host") if isinstance(call.args, dict) else None])
        record = ledger.make_record(index, call.tool, clean_args, result)
        log.debug(
            "tool call",
            extra={
                "evidence": record.id,
                "tool": call.tool,
                "tool_args": clean_args,
                "status": result.status,
                "signals": len(result.signals),
            },
        )
        return {
            "records": ledger.added(records, record),
            "usage": usage.model_dump(),
            "executed": executed,
            "refused": refused,
            "pending": None,
        }

    def _assess(self, state: State) -> dict[str, Any]:
        view = self._view(state)
        last = (state.get("records") or [{}])[-1]
        return {
            "hypotheses": _summary(view.hypotheses),
            "trace": [{"evidence": last.get("id"), "top": _summary(view.hypotheses, 3)}],
            "symptom": symptom_of(self.failure_graph, view, self.source),
        }

    def _conclude(self, state: State) -> dict[str, Any]:
        self._load_planner(state)
        report = build_report(self, state)
        # The verdict's vocabulary is the loaded graph's, whichever playbook folder it came from.
        Report.model_validate(report.to_json_dict(), context={"root_causes": self.failure_graph.root_causes})
        log.info(
            "verdict",
            extra={
                "incident": report.incident,
                "status": report.status,
                "root_cause": report.verdict.root_cause,
                "component": report.verdict.component,
                "tool_calls": report.budget.tool_calls,
            },
        )
        return {"report": report.to_json_dict()}

    def _propose(self, state: State) -> dict[str, Any]:
        report = Report.model_validate(state["report"])
        report.proposals = make_proposals(self.failure_graph, report)
        return {"report": report.to_json_dict()}

    @staticmethod
    def _after_propose(state: State) -> str:
        return (
            "gate" if state.get("await_approval") and (state.get("report") or {}).get("proposals") else "end"
        )

    def _approval_gate(self, state: State, config: RunnableConfig) -> dict[str, Any]:
        # Nothing before interrupt(): LangGraph re-runs this node from its first line on resume.
        # The resume value is the only way a decision gets in, and only the caller supplies it.
        raw = interrupt(
            {
                "proposals": [
                    p
                    for p in (state.get("report") or {}).get("proposals", [])
                    if p["status"] == "pending_approval"
                ]
            }
        )
        report = Report.model_validate(state["report"])
        thread = str(config.get("configurable", {}).get("thread_id", ""))
        report.proposals, audit = approvals.apply(
            report.proposals, raw if isinstance(raw, list) else [raw], thread=thread, incident=report.incident
        )
        if self.audit_log is not None:
            approvals.append_audit(self.audit_log, audit)
        return {
            "report": report.to_json_dict(),
            "decisions": [a.model_dump() for a in audit],
        }

    @staticmethod
    def _after_gate(state: State) -> str:
        pending = [
            p for p in (state.get("report") or {}).get("proposals", []) if p["status"] == "pending_approval"
        ]
        return "gate" if pending else "end"

    # -- running ---------------------------------------------------------------------------
    def initial_state(self, *, await_approval: bool = False) -> State:
        return State(
            bundle_path=self.source.locator,
            incident_id=self.source.incident.id,
            planner=self.planner.name,
            records=[],
            executed=[],
            refused=[],
            pending=None,
            usage=Usage(wall_s=self.open_s).model_dump(),
            limits=self.limits.model_dump(),
            stop_reason=None,
            budget_exhausted=None,
            notes=[],
            report=None,
            await_approval=await_approval,
            decisions=[],
            planner_state={},
            playbooks={"folder": self.failure_graph.folder, "digest": self.failure_graph.digest()},
        )

    def config(self, thread_id: str | None = None) -> dict[str, Any]:
        return {
            "configurable": {"thread_id": thread_id or f"{self.source.incident.id}-{uuid.uuid4().hex[:8]}"},
            "recursion_limit": self.recursion_limit(),
        }

    def run(
        self, *, thread_id: str | None = None, await_approval: bool = False, on_step: OnStep | None = None
    ) -> dict[str, Any]:
        """Investigate to the end (or to the approval gate) and return the report dict
        (:meth:`Driver.run <forensic.harness.driver.Driver.run>`)."""
        return self.driver.run(thread_id=thread_id, await_approval=await_approval, on_step=on_step)

    def decide(
        self, thread_id: str, decisions: Sequence[approvals.Decision | dict[str, Any]]
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """A person's decisions for a thread at the approval gate (:meth:`Driver.decide
        <forensic.harness.driver.Driver.decide>`): the updated report and these decisions' audit entries."""
        return self.driver.decide(thread_id, decisions)

    def resume(self, thread_id: str, on_step: OnStep | None = None) -> dict[str, Any]:
        """Continue a checkpointed thread from wherever a kill landed, or with a larger budget
        (:meth:`Driver.resume <forensic.harness.driver.Driver.resume>`)."""
        return self.driver.resume(thread_id, on_step)
