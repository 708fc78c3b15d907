"""The default planner: walks the failure graph, no model needed.

Triage tools run first (the job layer). Then each candidate test is valued by the belief it
could move: for every live hypothesis that the test discriminates, the hypothesis' probability
times the spread between the test's found and absent weights, divided by the tool's cost.
Targeted tests run on the suspect's host; fleet-wide sweeps are there for when no suspect is
good enough. The planner stops when the leading fault is confirmed and dominant, or when no
test is left that could change the answer.
"""

from __future__ import annotations

from collections import defaultdict

from forensic.harness.failure_graph import Hypothesis, host_of
from forensic.harness.planners.base import (
    Decision,
    PlannerBase,
    PlannerView,
    Stop,
    ToolCall,
    call_key,
    register_planner,
)

#: A hypothesis below this probability does not steer test choice.
MIN_PROBABILITY = 0.01
#: Fleet-wide sweeps read every host: they cost this many targeted calls.
SWEEP_COST_FACTOR = 2.0
#: Dominance needed to stop on a confirmed fault.
STOP_PROBABILITY = 0.9


@register_planner
class GraphPlanner(PlannerBase):
    name = "graph"

    def decide(self, view: PlannerView) -> Decision:
        # A refused call is done too: asked again, it would only be refused again.
        done = set(view.executed) | _refused(view)
        fleet_done = {tool for tool, host in done if host is None}
        sampled = _sampled_sweeps(view)
        for tool in view.graph.triage:
            if tool in view.tools and tool not in fleet_done:
                return ToolCall(tool=tool, reason="triage: the job layer first")

        hypotheses = _explaining(view)
        top = hypotheses[0] if hypotheses else None
        if top and top.root_cause != "healthy" and top.confirmed and top.probability >= STOP_PROBABILITY:
            # Before stopping, run the tests that could refute the leader (a signal that, found,
            # lowers its belief) and that have not run on its host or fleet-wide.
            if refute := self._refuting_test(view, top, done):
                return refute
            return Stop(reason=f"{top.root_cause} on {top.component} confirmed (p={top.probability:.2f})")

        values: dict[tuple[str, str | None], float] = defaultdict(float)
        why: dict[tuple[str, str | None], str] = {}
        for h in hypotheses:
            if h.probability < MIN_PROBABILITY or h.root_cause == "healthy":
                continue
            rc = view.graph.root_causes[h.root_cause]
            for test in rc.tests:
                if test.tool not in view.tools:
                    continue
                host = host_of(h.component) if h.component and h.kind not in ("job", "switch") else None
                if host is not None and (host not in view.hosts or test.tool not in view.host_scoped):
                    host = None
                if test.tool in fleet_done and (host is None or host in sampled.get(test.tool, {host})):
                    continue  # swept: only a host a sampled sweep did not read is still open
                key = (test.tool, host)
                if key in done:
                    continue
                gain = h.probability * (abs(test.weight) + abs(test.absent)) / 2.0
                cost = view.tools[test.tool] * (SWEEP_COST_FACTOR if host is None else 1.0)
                values[key] += gain / cost
                if key not in why or gain > 0:
                    why[key] = f"tests {h.root_cause} on {h.component} ({test.signal})"

        confident = top is not None and top.confirmed and top.probability >= STOP_PROBABILITY
        if not confident:
            # Sweeps: valued by the prior mass of the root causes they can reveal anywhere. A leader
            # that does not stop the search does not discount them either.
            for tool in view.graph.sweeps:
                if tool not in view.tools or tool in fleet_done:
                    continue
                mass = sum(
                    rc.prior * max(abs(t.weight) for t in rc.tests if t.tool == tool and t.sweep)
                    for rc in view.graph.root_causes.values()
                    if rc.id != "healthy" and any(t.tool == tool and t.sweep for t in rc.tests)
                )
                if mass <= 0:
                    continue
                key = (tool, None)
                values[key] += mass / (view.tools[tool] * SWEEP_COST_FACTOR)
                why.setdefault(key, "sweep: look for faults no suspect points at")

        if not values:
            return Stop(reason="no test left that could change the answer")
        key = max(sorted(values, key=lambda k: (k[0], k[1] or "")), key=lambda k: values[k])
        if values[key] < 1e-3:
            return Stop(reason="remaining tests carry no information")
        tool, host = key
        return ToolCall(tool=tool, args={"host": host} if host else {}, reason=why.get(key, ""))

    @staticmethod
    def _refuting_test(view: PlannerView, top, done: set) -> ToolCall | None:
        rc = view.graph.root_causes[top.root_cause]
        fleet_done = {tool for tool, host in done if host is None}
        sampled = _sampled_sweeps(view)
        host = host_of(top.component) if top.component and top.kind not in ("job", "switch") else None
        for test in rc.tests:
            if test.weight >= 0 or test.tool not in view.tools:
                continue
            if test.tool in fleet_done and (host is None or host in sampled.get(test.tool, {host})):
                continue
            scoped = host if host in view.hosts and test.tool in view.host_scoped else None
            tried = any(
                r.get("tool") == test.tool and (r.get("args") or {}).get("host") == scoped
                for r in view.records
            )
            if (test.tool, scoped) in done or tried:  # a call that failed is not asked again
                continue
            return ToolCall(
                tool=test.tool,
                args={"host": scoped} if scoped else {},
                reason=f"could refute {top.root_cause} on {top.component} ({test.signal})",
            )
        return None


#: How many of the strongest hypotheses are checked against the symptom's size before steering.
EXPLAIN_CHECKED = 24


def _explaining(view: PlannerView) -> list[Hypothesis]:
    """The hypotheses that can still account for the job's symptom, belief renormalized over them.

    A fault that is present but cannot explain the slowdown (its part's ranks are not the late
    ones, or are late by a small share of it: ``report.cannot_explain``) must neither stop the
    investigation nor absorb the belief that steers it: otherwise a confirmed 1%-late GPU ends the
    search before the 40%-late GPU's host is ever read, and the verdict is left inconclusive."""
    from forensic.harness.report import cannot_explain  # report imports the planners' package

    hyps = list(view.hypotheses)
    if not any(r.get("tool") == "job_steps" for r in view.records):
        return hyps
    dropped: set[int] = set()
    for i, h in enumerate(hyps[:EXPLAIN_CHECKED]):
        if h.root_cause == "healthy" or h.probability < MIN_PROBABILITY / 10:
            continue
        if cannot_explain(view.graph, h, view.records, "alert") is not None:
            dropped.add(i)
    if not dropped:
        return hyps
    kept = [h for i, h in enumerate(hyps) if i not in dropped]
    total = sum(h.probability for h in kept)
    if total <= 0:
        return kept
    return sorted(
        (h.model_copy(update={"probability": h.probability / total}) for h in kept),
        key=lambda h: -h.probability,
    )


def _refused(view: PlannerView) -> set[tuple[str, str | None]]:
    """(tool, host) of the refused calls shaped as this planner asks them (``{"host": host}`` or ``{}``)."""
    return {
        (r.tool, r.host)
        for r in view.refused
        if r.key == call_key(r.tool, {"host": r.host} if r.host else {})
    }


def _sampled_sweeps(view: PlannerView) -> dict[str, set[str]]:
    """Tool -> the hosts its fleet-wide call read, for sweeps that sampled a large fleet:
    a host such a sweep left out can still get its own call of that tool."""
    out: dict[str, set[str]] = {}
    for r in view.records:
        sweep = (r.get("data") or {}).get("sweep")
        if (
            r.get("status") == "ok"
            and isinstance(sweep, dict)
            and sweep.get("sampled")
            and not (r.get("args") or {}).get("host")
        ):
            out.setdefault(r["tool"], set()).update(host_of(str(c)) for c in r.get("covered") or [])
    return out
