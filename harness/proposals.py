"""Remediation proposals from the verdict's playbook, each bound to a hash of its content."""

from __future__ import annotations

import hashlib
import json

from forensic.harness.failure_graph import FailureGraph, host_of
from forensic.harness.models import Proposal, Report


def content_hash(p: Proposal) -> str:
    """sha256 over what a person approves: action, target, reason, risk, blast radius, rollback, evidence."""
    body = p.model_dump(include={"action", "target", "reason", "risk", "blast_radius", "rollback", "evidence"})
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def make_proposals(graph: FailureGraph, report: Report) -> list[Proposal]:
    """Proposals for a confirmed or probable fault; none when nothing was found or the run ran out."""
    v = report.verdict
    if report.status not in ("confirmed", "probable") or v.root_cause == "healthy":
        return []
    rc = graph.root_causes[v.root_cause]
    component = v.component or "job"
    fill = {"component": component, "host": host_of(component)}
    cited = sorted({e for f in report.findings if f.verified for e in f.evidence}, key=lambda e: int(e.split("-")[1]))
    # The verdict component's kind, as the tools that found it said (a signal carries it).
    kinds = {s.kind for r in report.evidence for s in r.signals if s.component == component}
    out = []
    templates = [t for t in rc.remediation if not t.kinds or not kinds or kinds & set(t.kinds)]
    for i, tmpl in enumerate(templates, start=1):
        p = Proposal(
            id=f"rp-{i}",
            action=tmpl.action,
            target=tmpl.target.format(**fill),
            reason=tmpl.reason.format(**fill),
            risk=tmpl.risk,
            blast_radius=tmpl.blast_radius.format(**fill),
            rollback=tmpl.rollback.format(**fill),
            evidence=cited,
        )
        out.append(p.model_copy(update={"content_hash": content_hash(p)}))
    return out
