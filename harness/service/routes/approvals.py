"""Decisions on proposals (approve, reject), carrying out an approved one, and the audit log."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from forensic.harness.service.config import User
from forensic.harness.service.decisions import DecisionError, TableApprovals, audit_sink, decide
from pydantic import BaseModel, Field

from .common import Problem, Svc, investigation, need

router = APIRouter()
Approver = Annotated[User, Depends(need("approver"))]


class DecisionBody(BaseModel):
    """A person's decision on one proposal."""

    content_hash: str = Field(
        min_length=64, max_length=64, description="The proposal's content hash, as shown."
    )
    reason: str = Field(min_length=1, max_length=2000, description="Why, recorded in the audit log.")


class ExecuteBody(BaseModel):
    """Carry out an approved proposal, or only plan it."""

    model_config = {"extra": "forbid"}

    dry_run: bool = Field(False, description="Show what would run; change nothing.")


def _decide(svc: Any, inv_id: str, rp: str, verdict: str, body: DecisionBody, user: User) -> dict[str, Any]:
    try:
        p = decide(
            svc.store,
            svc.saver,
            inv_id,
            rp,
            verdict,
            content_hash=body.content_hash,
            reason=body.reason,
            where=svc.live.where,
            user=user.name,
        )
    except DecisionError as exc:
        raise Problem(exc.status, exc.reason) from None
    return {"proposal": p, "by": user.name}


@router.post("/api/v1/investigations/{inv_id}/proposals/{rp}/approve", tags=["decisions"])
def approve(inv_id: str, rp: str, body: DecisionBody, svc: Svc, user: Approver) -> dict[str, Any]:
    """Approve exactly the proposal with this content hash, as the token's user."""
    return _decide(svc, inv_id, rp, "approve", body, user)


@router.post("/api/v1/investigations/{inv_id}/proposals/{rp}/reject", tags=["decisions"])
def reject(inv_id: str, rp: str, body: DecisionBody, svc: Svc, user: Approver) -> dict[str, Any]:
    """Reject the proposal with this content hash, as the token's user."""
    return _decide(svc, inv_id, rp, "reject", body, user)


class UndoBody(BaseModel):
    """Reverse an executed proposal, saying why."""

    model_config = {"extra": "forbid"}

    reason: str = Field(min_length=1, max_length=2000, description="Why, recorded in the audit log.")


@router.post("/api/v1/investigations/{inv_id}/proposals/{rp}/execute", tags=["decisions"])
def execute(inv_id: str, rp: str, body: ExecuteBody, svc: Svc, user: Approver) -> dict[str, Any]:
    """Carry out an approved proposal (or plan it with ``dry_run``), once, as the token's user.

    Needs ``executors`` in serve.toml. The execution gate checks that the approval gate approved
    exactly this content, recently, and that it has not run; every step goes to the audit log.
    """
    from forensic.harness.executors import ExecutionError

    gate, state, thread = _gate(svc, investigation(svc, inv_id), user)
    try:
        return gate.execute(thread, state, rp, dry_run=body.dry_run)
    except ExecutionError as exc:
        raise Problem(409, str(exc)) from None


@router.post("/api/v1/investigations/{inv_id}/proposals/{rp}/undo", tags=["decisions"])
def undo(inv_id: str, rp: str, body: UndoBody, svc: Svc, user: Approver) -> dict[str, Any]:
    """Reverse an executed proposal (a drained Slurm node resumes, a cordoned node is uncordoned),
    as the token's user, where its executor can; the same gate, ledger and audit as
    ``forensic execute --undo``, which reverses what this ran and the other way round."""
    from forensic.harness.executors import ExecutionError

    gate, state, thread = _gate(svc, investigation(svc, inv_id), user, reason_given=body.reason)
    try:
        return gate.undo(thread, state, rp)
    except ExecutionError as exc:
        raise Problem(409, str(exc)) from None


def _gate(
    svc: Any, inv: dict[str, Any], user: User, reason_given: str | None = None
) -> tuple[Any, dict[str, Any], str]:
    """The execution gate the CLI builds, on this store (its ledger, its audit table's approvals),
    the investigation's checkpointed state and its thread."""
    from forensic.harness.executors import ExecutionError, ExecutionGate, load_config

    if svc.cfg.executors is None:
        raise Problem(
            409,
            "this service carries nothing out: name an executors.toml in serve.toml (executors = ...)",
        )
    tup = svc.saver.get_tuple({"configurable": {"thread_id": inv["thread_id"]}})
    if tup is None:
        raise Problem(409, f"investigation {inv['id']} has no checkpoint to execute from")
    try:
        gate = ExecutionGate(
            load_config(svc.cfg.executors),
            audit_sink=audit_sink(svc.store, inv["id"], reason_given),
            actor=user.name,
            approval_records=TableApprovals(svc.store, inv["id"]),
            ledger=svc.ledger(),
        )
    except ExecutionError as exc:
        raise Problem(409, str(exc)) from None
    return gate, tup.checkpoint["channel_values"], inv["thread_id"]


@router.get("/api/v1/audit", tags=["audit"])
def audit(
    svc: Svc,
    _: Annotated[User, Depends(need("viewer"))],
    investigation: str | None = None,
    limit: Annotated[int, Query(ge=1, le=5000)] = 500,
) -> dict[str, Any]:
    """The append-only audit log, newest first: who, when, what, why, and the outcome."""
    return {"entries": svc.store.audit_log(investigation=investigation, limit=limit)}
