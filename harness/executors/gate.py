"""The execution gate: the only way an approved proposal becomes an action.

A proposal runs only when all of these hold, checked in this order, each refusal audited:

1. it exists in the investigation's checkpoint;
2. its status there is ``approved``, set by the approval gate (``forensic approve`` or the
   service), and the gate's own decision record for it says ``approved`` for the same content hash;
3. the approval is on the record outside the checkpoint (:class:`ApprovalRecords`: an entry of the
   verified hash-chained audit log, or of the service's append-only audit table, naming the thread,
   proposal, content hash and approver), so an edited checkpoint approves nothing;
4. its content still hashes to that hash (what runs is exactly what the person approved);
5. the recorded approval is younger than ``approvals.max_age_s``;
6. it has not run before: a row of the store's execution ledger (:mod:`.ledger`, shared by the CLI
   and the service) is claimed atomically, so of two concurrent executions, in one process or
   several, exactly one proceeds. A failed run (for example Slurm down: nothing was changed) may
   be tried again; a succeeded one may not.

Every step, planned, started, result, verification and undo, is appended to the audit log with the
operating-system user who ran it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, Protocol

from forensic.harness import approvals
from forensic.harness.models import Proposal
from forensic.harness.proposals import content_hash

from .base import ExecutionError, Executor, Outcome, Plan
from .config import ExecutorsConfig
from .kubernetes import KubernetesExecutor
from .ledger import ExecutionLedger
from .runbook import RunbookExecutor
from .slurm import SlurmExecutor


def os_user() -> str:
    """Who runs this process, from the operating system (never from USER or LOGNAME)."""
    from forensic.harness.identity import OsIdentity

    return OsIdentity().current().name


def build_executors(config: ExecutorsConfig) -> dict[str, Executor]:
    """The executors the config enables, by name."""
    out: dict[str, Executor] = {}
    if config.slurm is not None:
        out["slurm"] = SlurmExecutor(config.slurm)
    if config.kubernetes is not None:
        out["kubernetes"] = KubernetesExecutor(config.kubernetes)
    if config.runbook is not None:
        out["runbook"] = RunbookExecutor(config.runbook)
    return out


def route(action: str, executors: dict[str, Executor], routes: dict[str, str]) -> Executor:
    """The executor for ``action``: an explicit route, else the first enabled one that does it."""
    if action in routes:
        chosen = executors.get(routes[action])
        if chosen is None or action not in chosen.actions:
            raise ExecutionError(
                f"route {action} -> {routes[action]!r}: that executor is not configured or cannot do it"
            )
        return chosen
    for name in ("slurm", "kubernetes", "runbook"):
        ex = executors.get(name)
        if ex is not None and action in ex.actions:
            return ex
    raise ExecutionError(
        f"no configured executor carries out {action!r} (configure slurm, kubernetes or runbook)"
    )


class ApprovalRecords(Protocol):
    """Where a surface's approvals are on the record, beyond the checkpoint's reach."""

    def approval(self, thread: str, proposal_id: str, content_hash: str) -> dict[str, Any] | None:
        """The latest recorded approval of exactly this content, with ``approver`` and ``time_unix``;
        None when there is none; :class:`ExecutionError` when the record cannot be trusted."""
        ...


class AuditLogApprovals:
    """Approvals in the CLI's hash-chained audit log (``forensic approve`` writes them)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def approval(self, thread: str, proposal_id: str, content_hash: str) -> dict[str, Any] | None:
        from forensic.harness.audit import AuditError

        try:
            return approvals.recorded_approval(
                self.path, thread=thread, proposal_id=proposal_id, content_hash=content_hash
            )
        except AuditError as exc:
            raise ExecutionError(f"the approval cannot be checked: {exc}") from None


class ExecutionGate:
    """Checks, claims, runs, verifies and audits the execution of approved proposals."""

    def __init__(
        self,
        config: ExecutorsConfig,
        *,
        ledger: ExecutionLedger,
        audit_log: Path | None = None,
        audit_sink: Callable[[approvals.AuditEntry], None] | None = None,
        approval_records: ApprovalRecords | None = None,
        actor: str | None = None,
        executors: dict[str, Executor] | None = None,
        clock: Any = time.time,
    ) -> None:
        """``audit_log`` (the CLI's file, which also holds its approvals) or ``audit_sink`` with
        ``approval_records`` (the service's table) receives every step; ``ledger`` is the checkpoint
        store's execution ledger; ``actor`` is the authenticated person who runs it (default: the
        operating-system user)."""
        if (audit_log is None) == (audit_sink is None):
            raise ValueError("give exactly one of audit_log and audit_sink")
        if audit_log is not None:
            approval_records = approval_records or AuditLogApprovals(audit_log)
        if approval_records is None:
            raise ValueError("an audit_sink needs the approval_records it keeps")
        self.config = config
        self.ledger = ledger
        self.records = approval_records
        self._sink = audit_sink or (lambda entry: approvals.append_audit(audit_log, [entry]))  # type: ignore[arg-type]
        self.actor = actor or os_user()
        self.executors = executors if executors is not None else build_executors(config)
        self.clock = clock

    # -- audit ------------------------------------------------------------------------------
    def _audit(
        self,
        thread: str,
        incident: str,
        pid: str,
        p: Proposal | None,
        step: str,
        outcome: str,
        reason: str = "",
    ) -> None:
        entry = approvals.AuditEntry(
            time_unix=self.clock(),
            thread=thread,
            incident=incident,
            proposal_id=pid,
            action=p.action if p else None,
            target=p.target if p else None,
            content_hash=p.content_hash if p else "",
            decision=step,
            approver=self.actor,
            outcome=outcome,
            reason=reason[:1000],
        )
        self._sink(entry)

    def _refuse(
        self, thread: str, incident: str, pid: str, p: Proposal | None, step: str, reason: str
    ) -> NoReturn:
        self._audit(thread, incident, pid, p, step, "refused", reason)
        raise ExecutionError(f"{step} {pid} refused: {reason}")

    # -- checks -----------------------------------------------------------------------------
    def _approved(
        self, state: dict[str, Any], thread: str, pid: str, step: str
    ) -> tuple[Proposal, dict[str, Any]]:
        """The approved proposal and its approval as recorded outside the checkpoint (who, when, why)."""
        report = state.get("report") or {}
        incident = str(report.get("incident", ""))
        raw = next((p for p in report.get("proposals", []) if p.get("id") == pid), None)
        if raw is None:
            self._refuse(thread, incident, pid, None, step, "no such proposal in this investigation")
        p = Proposal.model_validate(raw)
        if p.status != "approved":
            self._refuse(thread, incident, pid, p, step, f"the proposal is {p.status}, not approved")
        decision = next(
            (
                d
                for d in reversed(state.get("decisions") or [])
                if d.get("proposal_id") == pid and d.get("outcome") == "approved"
            ),
            None,
        )
        if decision is None or decision.get("content_hash") != p.content_hash:
            self._refuse(
                thread,
                incident,
                pid,
                p,
                step,
                "no approval of this exact content was recorded by the approval gate",
            )
        try:
            recorded = self.records.approval(thread, pid, p.content_hash)
        except ExecutionError as exc:
            self._refuse(thread, incident, pid, p, step, str(exc))
        if recorded is None:
            self._refuse(
                thread,
                incident,
                pid,
                p,
                step,
                "the audit log holds no approval of this exact content (the checkpoint alone approves nothing)",
            )
        if content_hash(p) != p.content_hash:
            self._refuse(
                thread, incident, pid, p, step, "the proposal changed since it was approved (hash mismatch)"
            )
        # The recorded approval's time, not the checkpoint's, which the checkpoint's holder could rewrite.
        age = self.clock() - float(recorded.get("time_unix") or 0)
        if age > self.config.approvals.max_age_s:
            self._refuse(
                thread,
                incident,
                pid,
                p,
                step,
                f"the approval is {age:.0f} s old; approvals expire after {self.config.approvals.max_age_s:g} s",
            )
        return p, recorded

    def _plan(
        self, thread: str, state: dict[str, Any], p: Proposal, approval: dict[str, Any]
    ) -> tuple[Executor, Plan]:
        incident = str((state.get("report") or {}).get("incident", ""))
        try:
            ex = route(p.action, self.executors, self.config.routes)
            plan = ex.plan(
                p.action,
                p.target,
                reason=f"forensic {thread} {p.id}"[:200],
                context={
                    "thread": thread,
                    "proposal_id": p.id,
                    "content_hash": p.content_hash,
                    "incident": incident,
                    "risk": p.risk,
                    "blast_radius": p.blast_radius,
                    "rollback": p.rollback,
                    "evidence": p.evidence,
                    "proposal_reason": p.reason,
                    # Who approved it and why, from the approval on the record (the audit log or the
                    # service's audit table), never from the checkpoint: a ticket says both.
                    "approved_by": str(approval.get("approver") or ""),
                    "approved_at_unix": approval.get("time_unix"),
                    "approval_reason": str(approval.get("reason") or approval.get("comment") or ""),
                },
            )
        except ExecutionError as exc:
            self._refuse(thread, incident, p.id, p, "execute", str(exc))
        return ex, plan

    # -- the verbs --------------------------------------------------------------------------
    def execute(
        self, thread: str, state: dict[str, Any], pid: str, *, dry_run: bool = False
    ) -> dict[str, Any]:
        """Run approved proposal ``pid`` of ``thread`` (whose checkpointed values are ``state``)."""
        incident = str((state.get("report") or {}).get("incident", ""))
        step = "dry-run" if dry_run else "execute"
        if not dry_run:
            # Said first, whatever else is wrong: a run through another surface of this store counts.
            try:
                done = self.ledger.get(thread, pid)
            except ExecutionError as exc:
                self._refuse(thread, incident, pid, None, step, str(exc))
            if done is not None and done["state"] != "failed":
                self._refuse(
                    thread,
                    incident,
                    pid,
                    None,
                    step,
                    f"{pid} has already run (state: {done['state']}, by {done['by']}); it does not run twice",
                )
        p, approval = self._approved(state, thread, pid, step)
        ex, plan = self._plan(thread, state, p, approval)
        self._audit(thread, incident, pid, p, step, "planned", "; ".join(plan.steps))
        if dry_run:
            return {"proposal": pid, "state": "planned", "plan": plan.model_dump()}
        try:
            self.ledger.claim(thread, p, ex.name, plan, self.actor)
        except ExecutionError as exc:
            self._refuse(thread, incident, pid, p, step, str(exc))
        self._audit(thread, incident, pid, p, step, "started", plan.steps[0])
        try:
            result = ex.execute(plan)
        except ExecutionError as exc:
            self.ledger.finish(thread, pid, p.content_hash, "failed", str(exc))
            self._audit(thread, incident, pid, p, step, "failed", str(exc))
            raise
        self._audit(thread, incident, pid, p, step, "succeeded", result.detail)
        check = self._verify(ex, plan)
        state_name = "succeeded" if check.ok else "unverified"
        self.ledger.finish(thread, pid, p.content_hash, state_name, f"{result.detail}; {check.detail}")
        self._audit(
            thread, incident, pid, p, "verify", "verified" if check.ok else "unverified", check.detail
        )
        return {
            "proposal": pid,
            "state": state_name,
            "plan": plan.model_dump(),
            "result": result.model_dump(),
            "verification": check.model_dump(),
        }

    def _verify(self, ex: Executor, plan: Plan) -> Outcome:
        try:
            return ex.verify(plan)
        except ExecutionError as exc:
            return Outcome(ok=False, detail=f"could not verify: {exc}")

    def undo(self, thread: str, state: dict[str, Any], pid: str) -> dict[str, Any]:
        """Reverse an executed proposal (a drained node resumes, a cordoned node is uncordoned)."""
        incident = str((state.get("report") or {}).get("incident", ""))
        try:
            row = self.ledger.get(thread, pid)
        except ExecutionError as exc:
            self._refuse(thread, incident, pid, None, "undo", str(exc))
        p = next(
            (
                Proposal.model_validate(x)
                for x in (state.get("report") or {}).get("proposals", [])
                if x.get("id") == pid
            ),
            None,
        )
        if row is None or row["state"] not in ("succeeded", "unverified"):
            self._refuse(
                thread,
                incident,
                pid,
                p,
                "undo",
                "it has not been executed" if row is None else f"its execution is {row['state']}",
            )
        ex = self.executors.get(row["executor"])
        if ex is None:
            self._refuse(
                thread, incident, pid, p, "undo", f"the {row['executor']} executor is not configured"
            )
        plan = Plan.model_validate_json(row["plan"])
        try:
            result = ex.undo(plan)
        except ExecutionError as exc:
            self._audit(thread, incident, pid, p, "undo", "failed", str(exc))
            raise
        self.ledger.finish(thread, pid, row["content_hash"], "undone", result.detail)
        self._audit(thread, incident, pid, p, "undo", "undone", result.detail)
        return {"proposal": pid, "state": "undone", "result": result.model_dump()}


def annotate(report: dict[str, Any], executions: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The report with each proposal's execution state (``not_executed`` when none)."""
    out = json.loads(json.dumps(report))
    for p in out.get("proposals", []):
        row = executions.get(p.get("id"))
        p["execution"] = (
            {
                "state": row["state"],
                "executor": row["executor"],
                "by": row["by"],
                "detail": row["detail"],
                "started": row["started"],
                "finished": row["finished"],
                # How it is reversed, where its executor can (a surface offers Undo only then).
                "undo": _undo_steps(row) if row["state"] in ("succeeded", "unverified") else [],
            }
            if row
            else {"state": "not_executed"}
        )
    return out


def _undo_steps(row: dict[str, Any]) -> list[str]:
    try:
        return list(Plan.model_validate_json(row.get("plan") or "").undo)
    except ValueError:
        return []
