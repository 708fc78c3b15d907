"""Remediation proposals from the verdict's playbook, each bound to a hash of its content.

A proposal's target comes from the bundle (a host or device name), and executors hand it on to
Slurm, Kubernetes or a ticket system: a target that is not ``job``, a host name, or a host name
and a device id is not proposed at all (the report says so), and executors refuse it too.
"""

from __future__ import annotations

import hashlib
import json
import re

from forensic.harness.failure_graph import FailureGraph, host_of
from forensic.harness.models import Proposal, Report

from forensic.names import is_host_name

#: The device part of a target (``host/DEVICE``).
_DEVICE = re.compile(
    r"gpu\d{1,4}"  # a GPU by index: gpu3
    r"|[A-Za-z][A-Za-z0-9_.-]{0,31}"  # a NIC or switch port by name: mlx5_0, ibp1s0, Ethernet4
    r"|\d{1,5}"  # a switch port by number: 8
    r"|[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-7])?"  # a device by PCI address: 0000:3a:00.0
)


def valid_target(target: str) -> bool:
    """Whether ``target`` is ``job``, a host (or switch) name, or such a name, a slash and a device id."""
    if target == "job":
        return True
    host, slash, device = target.partition("/")
    # The one host-name check (DNS grammar, 253 characters): a name the sandbox reads from is one we may propose for.
    return is_host_name(host) and (not slash or _DEVICE.fullmatch(device) is not None)


def content_hash(p: Proposal) -> str:
    """sha256 over what a person approves: action, target, reason, risk, blast radius, rollback, evidence."""
    body = p.model_dump(
        include={"action", "target", "reason", "risk", "blast_radius", "rollback", "evidence"}
    )
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def make_proposals(graph: FailureGraph, report: Report) -> list[Proposal]:
    """Proposals for a confirmed or probable fault; none when nothing was found or the run ran out.

    A template whose target is not a valid one (see :func:`valid_target`) is left out, with a note
    on ``report`` naming it."""
    v = report.verdict
    if report.status not in ("confirmed", "probable") or v.root_cause == "healthy":
        return []
    rc = graph.root_causes[v.root_cause]
    component = v.component or "job"
    # A device outside the job that the evidence says drives the fault through the named part (a
    # host behind a switch port that sends it a pause storm): a template may target it by name.
    behind = next(
        (
            str(s.values["origin_host"])
            for r in report.evidence
            for s in r.signals
            if s.component == component and s.values.get("origin_host")
        ),
        "",
    )
    fill = {"component": component, "host": host_of(component), "origin_host": behind}
    cited = sorted(
        {e for f in report.findings if f.verified for e in f.evidence}, key=lambda e: int(e.split("-")[1])
    )
    # The verdict component's kind, as the tools that found it said (a signal carries it).
    kinds = {s.kind for r in report.evidence for s in r.signals if s.component == component}
    out: list[Proposal] = []
    templates = [t for t in rc.remediation if not t.kinds or not kinds or kinds & set(t.kinds)]
    for tmpl in templates:
        target = tmpl.target.format(**fill)
        if not target:
            continue  # a template for a device this verdict does not have (no host behind the port)
        if not valid_target(target):
            report.notes.append(
                f"no {tmpl.action} proposed: its target {target!r} is not a valid host, device or port name"
            )
            continue
        p = Proposal(
            id=f"rp-{len(out) + 1}",
            action=tmpl.action,
            target=target,
            reason=tmpl.reason.format(**fill),
            risk=tmpl.risk,
            blast_radius=tmpl.blast_radius.format(**fill),
            rollback=tmpl.rollback.format(**fill),
            evidence=cited,
        )
        out.append(p.model_copy(update={"content_hash": content_hash(p)}))
    return out
