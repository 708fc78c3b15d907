"""Approving remediation proposals: only a person, only the exact proposal, always on the record.

A decision names the proposal by id *and* by the hash of its content: approving means approving
that exact action, target, reason, risk and evidence. A decision counts only when it comes from an
authenticated person (the caller's identity layer sets ``authenticated``; the CLI uses the login
of the operating-system user who runs it). Nothing that tool output, a log line or a model says
reaches this module: the only way in is the resume value of the approval gate, which only the
caller supplies. Every decision, counted or refused, is appended to the audit log.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Literal

from forensic.harness import audit as audit_log
from forensic.harness.models import Proposal
from forensic.harness.proposals import content_hash
from pydantic import BaseModel, Field, ValidationError


class Decision(BaseModel):
    """A person's decision on one proposal."""

    proposal_id: str = Field(description="rp-N of the proposal.")
    content_hash: str = Field(description="The proposal's content hash, as shown to the person.")
    decision: Literal["approve", "reject"] = Field(description="What the person decided.")
    approver: str = Field(min_length=1, max_length=128, description="Who decided.")
    authenticated: bool = Field(False, description="Set by the caller's identity layer, never by text.")
    comment: str = Field("", max_length=2000, description="Why, in the person's words.")


class AuditEntry(BaseModel):
    """One line of the append-only audit log."""

    time_unix: float
    thread: str
    incident: str
    proposal_id: str
    action: str | None
    target: str | None
    content_hash: str
    decision: str
    approver: str
    # Decisions are approved/rejected/refused; executions (harness/executors) add their steps.
    outcome: Literal[
        "approved",
        "rejected",
        "refused",
        "planned",
        "started",
        "succeeded",
        "failed",
        "verified",
        "unverified",
        "undone",
    ]
    reason: str = ""
    comment: str = ""


def apply(
    proposals: list[Proposal], raw_decisions: list[Any], *, thread: str, incident: str
) -> tuple[list[Proposal], list[AuditEntry]]:
    """Apply decisions to proposals; anything malformed, stale or unauthenticated is refused."""
    by_id = {p.id: p for p in proposals}
    updated = dict(by_id)
    audit: list[AuditEntry] = []
    decided: set[str] = set()
    for raw in raw_decisions:
        try:
            d = Decision.model_validate(raw)
        except ValidationError as exc:
            audit.append(
                AuditEntry(
                    time_unix=time.time(),
                    thread=thread,
                    incident=incident,
                    proposal_id=str(raw)[:64],
                    action=None,
                    target=None,
                    content_hash="",
                    decision="?",
                    approver="?",
                    outcome="refused",
                    reason=f"malformed decision: {exc.errors()[0]['msg']}",
                )
            )
            continue
        p = updated.get(d.proposal_id)
        entry = dict(
            time_unix=time.time(),
            thread=thread,
            incident=incident,
            proposal_id=d.proposal_id,
            action=p.action if p else None,
            target=p.target if p else None,
            content_hash=d.content_hash,
            decision=d.decision,
            approver=d.approver,
            comment=d.comment,
        )
        if p is None:
            audit.append(AuditEntry(**entry, outcome="refused", reason="no such proposal"))
        elif d.proposal_id in decided:
            # One decision per proposal per command: approve-and-reject, or approve twice, is
            # ambiguous; the first stands and the repeat is refused on the record.
            audit.append(
                AuditEntry(
                    **entry, outcome="refused", reason="a second decision on the same proposal in one command"
                )
            )
        elif not d.authenticated:
            audit.append(AuditEntry(**entry, outcome="refused", reason="the approver is not authenticated"))
        elif d.content_hash != p.content_hash or d.content_hash != content_hash(p):
            audit.append(
                AuditEntry(
                    **entry, outcome="refused", reason="the hash does not match the proposal's content"
                )
            )
        elif p.status != "pending_approval":
            audit.append(AuditEntry(**entry, outcome="refused", reason=f"the proposal is already {p.status}"))
        else:
            decided.add(p.id)
            status = "approved" if d.decision == "approve" else "rejected"
            updated[p.id] = p.model_copy(update={"status": status})
            audit.append(AuditEntry(**entry, outcome=status))
    return [updated[p.id] for p in proposals], audit


def append_audit(path: Path, entries: list[AuditEntry]) -> None:
    """Append entries to the hash-chained audit log (:mod:`forensic.harness.audit`)."""
    audit_log.append(path, [e.model_dump() for e in entries])


def refusal(*, thread: str, incident: str, decision: Decision, reason: str) -> AuditEntry:
    """The audit entry of a decision refused before it reached the gate (not waiting, ...)."""
    return AuditEntry(
        time_unix=time.time(),
        thread=thread,
        incident=incident,
        proposal_id=decision.proposal_id,
        action=None,
        target=None,
        content_hash=decision.content_hash,
        decision=decision.decision,
        approver=decision.approver,
        outcome="refused",
        reason=reason,
    )


def recorded_approval(
    path: Path, *, thread: str, proposal_id: str, content_hash: str
) -> dict[str, Any] | None:
    """The latest approval of exactly this content in the audit log at ``path`` (None: there is none).

    The chain is verified first (:class:`~forensic.harness.audit.AuditError` if it breaks): an
    approval counts only where it sits in an intact log, not in a checkpoint that anyone with the
    file could edit.
    """
    if not path.is_file():
        return None
    found = None
    for e in audit_log.entries(path):
        if (
            e.get("thread") == thread
            and e.get("proposal_id") == proposal_id
            and e.get("content_hash") == content_hash
            and e.get("decision") == "approve"
            and e.get("outcome") == "approved"
            and e.get("approver")
        ):
            found = e
    return found
