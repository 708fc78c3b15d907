"""A person's decision on a proposal, through the investigation's own approval gate.

The decision is handed to :meth:`Investigator.decide` (the same path as ``forensic approve``):
it binds the proposal id, its content hash and the authenticated user's name. Every decision,
counted or refused, goes to the service's append-only audit table.

Two decisions on one investigation never interleave, whichever API process takes them: each runs
under the store's :meth:`~forensic.harness.service.store.SqlStore.decision_lock` (an advisory lock
on PostgreSQL, a file lock beside a SQLite database), so the second reads the first's result.
"""

from __future__ import annotations

import time
from typing import Any

from forensic.harness.approvals import Decision
from forensic.sandbox import ForensicError


class DecisionError(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def decide(
    store: Any,
    saver: Any,
    inv_id: str,
    proposal_id: str,
    verdict: str,
    *,
    content_hash: str,
    reason: str,
    user: str,
    where: Any = None,
) -> dict[str, Any]:
    """Apply one decision; returns the updated proposal. :class:`DecisionError` 404/409 otherwise."""
    from forensic.harness.graph import Investigator

    with store.decision_lock(inv_id):
        inv = store.investigation(inv_id)
        if inv is None:
            raise DecisionError(404, f"no investigation {inv_id!r}")
        proposals = {p["id"]: p for p in (inv.get("report") or {}).get("proposals", [])}
        p = proposals.get(proposal_id)
        base = dict(
            time=time.time(),
            actor=user,
            action=verdict,
            investigation=inv_id,
            proposal=proposal_id,
            content_hash=content_hash,
            detail={"reason_given": reason},
        )

        def refuse(status: int, why: str) -> DecisionError:
            store.audit({**base, "outcome": "refused", "reason": why})
            return DecisionError(status, why)

        if p is None:
            raise refuse(404, f"no proposal {proposal_id!r} in {inv_id}")
        if p["status"] != "pending_approval":
            raise refuse(409, f"proposal {proposal_id} is already {p['status']}")
        if inv["status"] != "awaiting_approval":
            raise refuse(409, f"investigation {inv_id} is {inv['status']}, not awaiting approval")
        if content_hash != p.get("content_hash"):
            raise refuse(
                409,
                "the content hash does not match the proposal (it changed, or this is not what was shown)",
            )
        d = Decision(
            proposal_id=proposal_id,
            content_hash=content_hash,
            decision=verdict,
            approver=user,
            authenticated=True,
            comment=reason,
        )
        try:
            # A live investigation reopens the fleet window it read (``where``: LiveSources.where).
            investigator = Investigator(where(inv) if where else inv["bundle"], checkpointer=saver)
            report, audit = investigator.decide(inv["thread_id"], [d])
        except ForensicError as exc:
            raise refuse(409, str(exc)) from None
        entry = audit[-1] if audit else {"outcome": "refused", "reason": "no decision recorded"}
        store.audit(
            {
                **base,
                "outcome": entry["outcome"],
                "reason": entry.get("reason") or reason,
                "detail": {"reason_given": reason, "action": p["action"], "target": p["target"]},
            }
        )
        pending = any(q["status"] == "pending_approval" for q in report.get("proposals", []))
        store.set_report(inv_id, report, "awaiting_approval" if pending else "concluded")
        store.add_event(
            inv_id,
            f"decision:{proposal_id}",
            "decision",
            {"proposal": proposal_id, "outcome": entry["outcome"], "by": user},
        )
        if entry["outcome"] == "refused":
            raise DecisionError(409, entry.get("reason") or "refused")
        return next(q for q in report["proposals"] if q["id"] == proposal_id)


class TableApprovals:
    """The approvals of one investigation in the service's append-only audit table, for the execution gate."""

    def __init__(self, store: Any, inv_id: str) -> None:
        self.store = store
        self.inv_id = inv_id

    def approval(self, thread: str, proposal_id: str, content_hash: str) -> dict[str, Any] | None:
        # An investigation's own entries are few; past the cap the approval is not found, and nothing runs.
        for e in self.store.audit_log(investigation=self.inv_id, limit=10_000):  # newest first
            if (
                e.get("proposal") == proposal_id
                and e.get("content_hash") == content_hash
                and e.get("action") == "approve"
                and e.get("outcome") == "approved"
                and e.get("actor")
            ):
                detail = e.get("detail") if isinstance(e.get("detail"), dict) else {}
                return {
                    "approver": e["actor"],
                    "time_unix": e["time"],
                    "reason": detail.get("reason_given") or "",
                }
        return None


def audit_sink(store: Any, inv_id: str, reason_given: str | None = None) -> Any:
    """The execution gate's audit entries, as rows of the service's audit table for ``inv_id``;
    ``reason_given``: why the person asked for it (an undo's reason), kept with each step."""

    def sink(entry: Any) -> None:
        detail = {"action": entry.action, "target": entry.target}
        if reason_given:
            detail["reason_given"] = reason_given
        store.audit(
            {
                "time": entry.time_unix,
                "actor": entry.approver,
                "action": entry.decision,
                "investigation": inv_id,
                "proposal": entry.proposal_id,
                "content_hash": entry.content_hash,
                "outcome": entry.outcome,
                "reason": entry.reason,
                "detail": detail,
            }
        )

    return sink
