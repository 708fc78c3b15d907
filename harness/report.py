"""From the evidence ledger and the final beliefs to the ``forensic.report/v1`` document."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from forensic.harness import citations
from forensic.harness.bounded import bound_record
from forensic.harness.budget import Usage
from forensic.harness.health import check_healthy
from forensic.harness.failure_graph import FailureGraph, Hypothesis, Observation, _covered, beliefs, host_of, observe
from forensic.harness.ledger import by_id
from forensic.harness.models import BudgetReport, EvidenceRecord, Finding, Report, Verdict
from forensic.harness.provenance import provenance

if TYPE_CHECKING:
    from forensic.harness.graph import Investigator, State
    from forensic.harness.planners import PlannerView
    from forensic.sandbox import EvidenceSource

#: Symptoms in the order they are preferred when several are seen: a hang outranks a slowdown.
_SYMPTOM_ORDER = ("collective_timeout", "loss_anomaly", "mfu_drop")
_KEYWORDS = {
    "collective_timeout": ("hang", "hung", "timeout", "timed out", "stuck", "watchdog", "crash"),
    "loss_anomaly": ("loss", "diverg", "nan", "checksum", "mismatch"),
    "mfu_drop": ("mfu", "slow", "throughput", "step time", "tokens/s", "regress", "drop"),
}


def symptom_of(graph: FailureGraph, view: PlannerView, source: EvidenceSource) -> str:
    """The presenting symptom: from the job's own signals first, else from how it was reported."""
    seen = {s.name for _, s in view.observation.signals}
    for name in _SYMPTOM_ORDER:
        if seen & set(graph.symptoms[name].signals):
            return name
    text = f"{source.incident.title} {source.incident.reported}".lower()
    for name in _SYMPTOM_ORDER:
        if any(k in text for k in _KEYWORDS[name]):
            return name
    return "alert"


def _mechanism(graph: FailureGraph, h: Hypothesis) -> str | None:
    rc = graph.root_causes[h.root_cause]
    found = {key.split("@", 1)[0] for key in h.support}
    for m in rc.mechanisms:
        if found & set(graph.mechanisms[m].signals):
            return m
    return rc.mechanisms[0] if rc.mechanisms else None


def _findings(h: Hypothesis, records: list[dict[str, Any]]) -> list[Finding]:
    """One finding per supporting signal, citing every record that carries it."""
    out: list[Finding] = []
    for key in h.support:
        name, component = key.split("@", 1)
        ids, detail = [], ""
        for rec in records:
            for sig in rec.get("signals") or []:
                if sig["name"] == name and sig["component"] == component and rec["status"] == "ok":
                    ids.append(rec["id"])
                    detail = detail or sig.get("detail") or f"{name} on {component}"
        if ids:
            out.append(Finding(claim=detail, subject=component, evidence=sorted(set(ids), key=lambda e: int(e.split("-")[1]))))
    return out


def _healthy_findings(records: list[dict[str, Any]]) -> list[Finding]:
    return [Finding(claim=r["summary"], evidence=[r["id"]]) for r in records if r["status"] == "ok"]


#: How many fault hypotheses an inconclusive report names.
LEADING = 3


def _untested(graph: FailureGraph, obs: Observation, leading: list[Hypothesis]) -> list[str]:
    """The discriminating tests of the leading hypotheses that no tool call has covered yet."""
    out: list[str] = []
    for h in leading:
        for t in graph.root_causes[h.root_cause].tests:
            if _covered(t, obs, h.component):
                continue
            scoped = t.match in ("component", "host") and h.component not in (None, "job")
            name = f"{t.tool}@{host_of(h.component)}" if scoped else t.tool
            if name not in out:
                out.append(name)
    return out


def build_report(inv: Investigator, state: State) -> Report:
    records = state.get("records") or []
    graph = inv.failure_graph
    obs = observe(records)
    hyps = beliefs(graph, obs)
    top = hyps[0]
    view_symptom = state.get("symptom") or "alert"
    notes = list(state.get("notes") or [])
    # The source may learn of problems during the run (a host whose agent stopped answering).
    notes.extend(n for n in inv.source.notes() if n not in notes)
    exhausted = state.get("budget_exhausted")

    unearned: str | None = None
    if top.root_cause == "healthy":
        health = check_healthy(graph, obs, f"{inv.source.incident.title} {inv.source.incident.reported}")
        faults = [h for h in hyps if h.root_cause != "healthy"]
        # With nothing read at all the rule below (absence of evidence) says inconclusive already.
        if health.earned or not faults or not health.tested:
            status = "healthy"
            # Confidence reflects coverage: classes no tool could test are not ruled out.
            verdict = Verdict(root_cause="healthy", component=None, confidence=round(top.probability * health.coverage, 4))
            chain = [view_symptom, "healthy"]
            findings = _healthy_findings(records)
            notes.append(f"healthy: {health.why}; {len(health.tested)} fault classes tested with readable evidence"
                         + (f", not testable here: {', '.join(health.untestable)}" if health.untestable else ""))
        else:
            # Healthy must be earned: name the strongest fault candidate, inconclusive, not a weak "healthy".
            unearned = health.why
            top = faults[0]
            verdict = Verdict(root_cause=top.root_cause, component=top.component, confidence=round(top.probability, 4))
            chain = [view_symptom, m, top.root_cause] if (m := _mechanism(graph, top)) else [view_symptom, top.root_cause]
            findings = _findings(top, records) or _healthy_findings(records)
            status = "inconclusive"
            notes.append(f"not healthy: {unearned}; the strongest candidates are listed, none is established")
    else:
        status = "confirmed" if top.confirmed else "probable"
        verdict = Verdict(root_cause=top.root_cause, component=top.component, confidence=round(top.probability, 4))
        chain = [view_symptom, m, top.root_cause] if (m := _mechanism(graph, top)) else [view_symptom, top.root_cause]
        findings = _findings(top, records)
        if top.required_met and not top.impact_shown:
            notes.append(f"{top.root_cause} is present on {top.component}, but no evidence ties it to the job's symptom: probable, not confirmed")
        if top.unexplained:
            notes.append(f"not confirmed: the evidence also shows {', '.join(top.unexplained)}, which this verdict does not explain")
    if exhausted:
        status = "inconclusive"
        notes.append(f"budget exhausted ({exhausted}) before the investigation could finish; the verdict is the best hypothesis so far")
    elif status == "healthy" and not any(r["status"] == "ok" and (r.get("covered") or r.get("signals")) for r in records):
        # Absence of evidence is not health: with nothing read, "healthy" is only the prior.
        status = "inconclusive"
        notes.append("no evidence could be read: nothing supports a verdict")
        verdict.confidence = round(min(verdict.confidence, graph.root_causes["healthy"].prior), 4)

    # A model planner may add its own claims; they face the same citation check as ours.
    ours = {f.claim for f in findings}  # a claim that repeats one of ours adds nothing
    findings += [f.model_copy(update={"author": "model"})
                 for f in (Finding.model_validate(c) for c in inv.planner.claims())
                 if f.claim not in ours]
    ledger_by_id = by_id(records)
    checked = [citations.check(f, ledger_by_id, f.subject or verdict.component) for f in findings]
    for f in checked:
        if not f.verified:
            notes.append(f"finding dropped: {f.claim!r}: {f.problem}")
    findings = [f for f in checked if f.verified]

    alternatives = [
        Verdict(root_cause=h.root_cause, component=h.component, confidence=round(h.probability, 4))
        for h in hyps if h is not top and h.probability >= 0.001
    ][:3]
    if verdict.root_cause != "healthy" and not any(a.root_cause == "healthy" for a in alternatives):
        healthy = next((h for h in hyps if h.root_cause == "healthy"), None)
        if healthy and healthy.probability >= 0.001:
            alternatives = alternatives[:2] + [Verdict(root_cause="healthy", component=None, confidence=round(healthy.probability, 4))]
    leading: list[Hypothesis] = []
    if status == "inconclusive":
        # An exhausted budget (or an unearned "healthy") is no evidence of health: name the faults still in play.
        leading = [h for h in hyps if h.root_cause != "healthy"][:LEADING]
    origin = provenance(inv.source, records)
    for o in origin.outside_window:
        if o.detail and o.detail not in notes:
            notes.append(o.detail)
    missing = [r for r in records if r["status"] == "no_data"]
    if missing:
        notes.append("no data for: " + ", ".join(f"{r['tool']}{'@' + r['args']['host'] if r['args'].get('host') else ''}" for r in missing))
    usage = Usage.model_validate(state.get("usage") or {})
    lim = inv.limits
    return Report(
        incident=inv.source.incident.id,
        title=inv.source.incident.title,
        status=status,
        verdict=verdict,
        alternatives=alternatives,
        chain=chain,
        findings=findings,
        # Bounded: the rows about the verdict, the alternatives and the signals; the checkpoint
        # keeps every record whole (forensic evidence THREAD ev-N).
        evidence=[EvidenceRecord.model_validate(bound_record(
            r, [verdict.component, *(f.subject for f in findings), *(a.component for a in alternatives),
                *(h.component for h in leading)]))
            for r in records],
        budget=BudgetReport(
            tool_calls=usage.tool_calls, tool_calls_limit=lim.tool_calls,
            llm_tokens=usage.llm_tokens, llm_tokens_limit=lim.llm_tokens,
            cost_usd=round(usage.cost_usd, 6), cost_usd_limit=lim.cost_usd,
            wall_s=round(usage.wall_s, 3), wall_s_limit=lim.wall_s,
        ),
        planner=state.get("planner") or inv.planner.name,
        notes=notes,
        leading=[Verdict(root_cause=h.root_cause, component=h.component, confidence=round(h.probability, 4)) for h in leading],
        untested=_untested(graph, obs, leading),
        evidence_source=origin,
    )

