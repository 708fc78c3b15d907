"""An investigation as a LangGraph state graph.

    triage -> hypothesize -> choose_test -> run_tool -> assess -> (choose_test ...)
                                  |                                    |
                                  +------------> conclude <------------+
                                                    |
                                                 propose -> [approval_gate] -> END

The state is plain JSON (so any checkpointer can store it); the bundle and the tools live in
the :class:`Investigator`, rebuilt from ``bundle_path`` when a thread is resumed. Nodes have no
side effects outside the state, so LangGraph may re-run any of them on resume.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, TypedDict

from forensic.harness import approvals, ledger
from forensic.harness.budget import Limits, Usage, exhausted
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

#: Progress callback: (node name, "start" with the node's input state or "end" with its update).
OnStep = Callable[[str, str, dict[str, Any]], None]


class State(TypedDict, total=False):
    bundle_path: str
    incident_id: str
    planner: str
    records: list[dict[str, Any]]
    executed: list[list[Any]]
    refused: list[dict[str, Any]]
    pending: dict[str, Any] | None
    usage: dict[str, Any]
    limits: dict[str, Any]
    stop_reason: str | None
    budget_exhausted: str | None
    notes: list[str]
    report: dict[str, Any] | None
    await_approval: bool
    decisions: list[dict[str, Any]]
    hypotheses: list[dict[str, Any]]
    trace: list[dict[str, Any]]
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
        notes = list(state.get("notes") or [])
        notes.extend(n for n in self.source.notes() if n not in notes)
        return {
            "notes": notes,
            "records": state.get("records") or [],
            "executed": state.get("executed") or [],
        }

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
        notes = list(state.get("notes") or [])
        for note in self.planner.drain_notes():
            notes.append(note)
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
        executed = list(state.get("executed") or [])
        refused = list(state.get("refused") or [])
        index = len(records) + 1
        key = call_key(call.tool, call.args)
        earlier = next((Refusal.model_validate(r) for r in refused if r["key"] == key), None)
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
            return {"records": ledger.append(records, record), "usage": usage.model_dump(), "pending": None}
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
            "records": ledger.append(records, record),
            "usage": usage.model_dump(),
            "executed": executed,
            "refused": refused,
            "pending": None,
        }

    def _assess(self, state: State) -> dict[str, Any]:
        view = self._view(state)
        last = (state.get("records") or [{}])[-1]
        trace = [
            *(state.get("trace") or []),
            {"evidence": last.get("id"), "top": _summary(view.hypotheses, 3)},
        ]
        return {
            "hypotheses": _summary(view.hypotheses),
            "trace": trace,
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
            "decisions": [*(state.get("decisions") or []), *(a.model_dump() for a in audit)],
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

    def check_playbooks(self, thread_id: str, values: dict[str, Any]) -> None:
        """Refuse to go on with a thread under other playbooks than the ones it was investigated with
        (its hypotheses and proposals name their root causes). Threads saved before this was
        recorded are not checked."""
        saved = values.get("playbooks") or {}
        if not saved.get("digest") or saved["digest"] == self.failure_graph.digest():
            return
        folder = saved.get("folder")
        where = f"the playbooks in {folder}" if folder else "the shipped playbooks"
        how = f"pass --playbooks {folder}" if folder else "leave out --playbooks"
        same_folder = folder == self.failure_graph.folder
        raise ForensicError(
            f"thread {thread_id!r} was investigated with {where}"
            + (", which have changed since" if same_folder else "")
            + f"; to continue it, {'restore them' if same_folder else how}"
        )

    def config(self, thread_id: str | None = None) -> dict[str, Any]:
        return {
            "configurable": {"thread_id": thread_id or f"{self.source.incident.id}-{uuid.uuid4().hex[:8]}"},
            "recursion_limit": self.recursion_limit(),
        }

    def _drive(self, inp: Any, cfg: dict[str, Any], on_step: OnStep | None) -> dict[str, Any]:
        """Run the graph to its next stop; with ``on_step``, report each node as it starts and ends."""
        if on_step is None:
            return self.app.invoke(inp, cfg)
        final: dict[str, Any] = {}
        for mode, ev in self.app.stream(inp, cfg, stream_mode=["tasks", "values"]):
            if mode == "values":
                final = ev
            elif "result" in ev:
                on_step(ev["name"], "end", ev.get("result") or {})
            else:
                on_step(ev["name"], "start", ev.get("input") or {})
        return final

    def run(
        self, *, thread_id: str | None = None, await_approval: bool = False, on_step: OnStep | None = None
    ) -> dict[str, Any]:
        """Investigate to the end (or to the approval gate) and return the report dict."""
        final = self._drive(
            self.initial_state(await_approval=await_approval), self.config(thread_id), on_step
        )
        return final["report"]

    def decide(
        self, thread_id: str, decisions: Sequence[approvals.Decision | dict[str, Any]]
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Hand a person's decisions to a thread waiting at the approval gate.

        Returns the updated report and the audit entries of these decisions (refusals included).
        """
        from langgraph.types import Command

        cfg = self.config(thread_id)
        snapshot = self.app.get_state(cfg)
        if "approval_gate" not in (snapshot.next or ()):
            raise ForensicError(f"thread {thread_id!r} is not waiting for an approval")
        self.check_playbooks(thread_id, snapshot.values)
        raw = [d.model_dump() if isinstance(d, approvals.Decision) else d for d in decisions]
        final = self.app.invoke(Command(resume=raw), cfg)
        return final["report"], (final.get("decisions") or [])[-len(decisions) :]

    def resume(self, thread_id: str, on_step: OnStep | None = None) -> dict[str, Any]:
        """Continue a checkpointed thread from whatever was saved, wherever a kill landed.

        A kill between a step's writes and its checkpoint leaves a snapshot with no ``next`` but
        with finished tasks; ``invoke(None)`` applies those writes and goes on. A thread waiting
        at the approval gate is left waiting: a decision counts only through a completed
        :meth:`decide`, never through a resume (a crashed ``approve`` may have saved its value).
        A thread that ended because a budget ran out continues when this investigator's limits
        leave room in that budget; otherwise the report comes back unchanged with a note that says
        why it did not continue.
        """
        cfg = self.config(thread_id)
        snapshot = self.app.get_state(cfg)
        if not snapshot.values and not snapshot.next:
            raise ForensicError(f"no checkpoint for thread {thread_id!r} (nothing was saved; run it again)")
        if snapshot.values.get("bundle_path") and not _same_source(snapshot.values, self.source):
            raise ForensicError(
                f"thread {thread_id!r} investigates {snapshot.values.get('incident_id')!r} at "
                f"{snapshot.values['bundle_path']}, not this bundle: refusing to mix two incidents"
            )
        self.check_playbooks(thread_id, snapshot.values)
        at_gate = "approval_gate" in (snapshot.next or ()) or any(
            t.name == "approval_gate" for t in snapshot.tasks
        )
        if at_gate and snapshot.values.get("report"):
            return snapshot.values["report"]
        if snapshot.next or snapshot.tasks or not snapshot.values.get("report"):
            final = self._drive(None, cfg, on_step)
            if not final.get("report"):
                raise ForensicError(f"thread {thread_id!r} could not be finished from its checkpoint")
            return final["report"]
        values = snapshot.values
        why_not = self._why_not_continue(values)
        if why_not is not None:
            report = dict(values["report"])
            report["notes"] = [*report.get("notes", []), f"not continued: {why_not}"]
            return report
        # Back to the planner with the larger budget: as if the last assessment had just finished.
        self.app.update_state(
            cfg,
            {
                "budget_exhausted": None,
                "stop_reason": None,
                "report": None,
                "pending": None,
                "limits": self.limits.model_dump(),
            },
            as_node="assess",
        )
        return self._drive(None, cfg, on_step)["report"]

    def _why_not_continue(self, values: dict[str, Any]) -> str | None:
        """None when a finished thread can go on under this investigator's limits, else why not."""
        spent = values.get("budget_exhausted")
        if not spent:
            return f"the investigation had finished ({values.get('stop_reason') or 'concluded'}); a larger budget changes nothing"
        usage = Usage.model_validate(values.get("usage") or {})
        left = exhausted(usage, self.limits)
        if left is not None:
            used = getattr(usage, left)
            return (
                f"the {left} budget ran out at {used:g} and the new limit {getattr(self.limits, left):g} leaves nothing more; "
                f"pass a larger --budget-{left.replace('_', '-').replace('llm-', '')}"
            )
        return None


def _same_source(values: dict[str, Any], source: EvidenceSource) -> bool:
    return (
        str(values.get("bundle_path")) == str(source.locator)
        and str(values.get("incident_id", source.incident.id)) == source.incident.id
    )
