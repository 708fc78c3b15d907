"""The execution gate: the only way an approved proposal becomes an action.

A proposal runs only when all of these hold, checked in this order, each refusal audited:

1. it exists in the investigation's checkpoint;
2. its status there is ``approved``, set by the approval gate (``forensic approve`` or the
   service), and the gate's own decision record for it says ``approved`` for the same content hash;
3. its content still hashes to that hash (what runs is exactly what the person approved);
4. the approval is younger than ``approvals.max_age_s``;
5. it has not run before: a row in the executions table is claimed under SQLite's write lock
   (``BEGIN IMMEDIATE``), so of two concurrent executions exactly one proceeds. A failed run (for
   example Slurm down: nothing was changed) may be tried again; a succeeded one may not.

Every step, planned, started, result, verification and undo, is appended to the audit log with the
operating-system user who ran it.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from forensic.harness import approvals
from forensic.harness.models import Proposal
from forensic.harness.proposals import content_hash

from .base import ExecutionError, Executor, Outcome, Plan
from .config import ExecutorsConfig
from .kubernetes import KubernetesExecutor
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
            raise ExecutionError(f"route {action} -> {routes[action]!r}: that executor is not configured or cannot do it")
        return chosen
    for name in ("slurm", "kubernetes", "runbook"):
        ex = executors.get(name)
        if ex is not None and action in ex.actions:
            return ex
    raise ExecutionError(f"no configured executor carries out {action!r} (configure slurm, kubernetes or runbook)")


class ExecutionStore:
    """Which proposals ran, in SQLite beside the checkpoints: the claim that makes a run unique."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(path), timeout=30, isolation_level=None)
        self.db.execute("""CREATE TABLE IF NOT EXISTS executions (
            thread TEXT NOT NULL, proposal_id TEXT NOT NULL, content_hash TEXT NOT NULL, action TEXT, target TEXT,
            executor TEXT, state TEXT NOT NULL, plan TEXT, detail TEXT, by TEXT, started REAL, finished REAL,
            PRIMARY KEY (thread, proposal_id))""")

    def claim(self, thread: str, p: Proposal, executor: str, plan: Plan, by: str) -> None:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            row = self.db.execute("SELECT state FROM executions WHERE thread=? AND proposal_id=?",
                                  (thread, p.id)).fetchone()
            if row is not None and row[0] != "failed":
                raise ExecutionError(f"{p.id} has already run (state: {row[0]}); it does not run twice")
            self.db.execute("INSERT OR REPLACE INTO executions VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                            (thread, p.id, p.content_hash, p.action, p.target, executor, "running",
                             plan.model_dump_json(), "", by, time.time(), None))
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def finish(self, thread: str, proposal_id: str, state: str, detail: str) -> None:
        self.db.execute("UPDATE executions SET state=?, detail=?, finished=? WHERE thread=? AND proposal_id=?",
                        (state, detail[:1000], time.time(), thread, proposal_id))

    def get(self, thread: str, proposal_id: str) -> dict[str, Any] | None:
        cur = self.db.execute("SELECT * FROM executions WHERE thread=? AND proposal_id=?", (thread, proposal_id))
        row = cur.fetchone()
        return dict(zip([c[0] for c in cur.description], row)) if row else None

    def for_thread(self, thread: str) -> dict[str, dict[str, Any]]:
        cur = self.db.execute("SELECT * FROM executions WHERE thread=?", (thread,))
        cols = [c[0] for c in cur.description]
        return {r[1]: dict(zip(cols, r)) for r in cur.fetchall()}


class ExecutionGate:
    """Checks, claims, runs, verifies and audits the execution of approved proposals."""

    def __init__(self, config: ExecutorsConfig, *, store: ExecutionStore, audit_log: Path | None = None,
                 audit_sink: Callable[[approvals.AuditEntry], None] | None = None, actor: str | None = None,
                 executors: dict[str, Executor] | None = None, clock: Any = time.time) -> None:
        """``audit_log`` (the CLI's file) or ``audit_sink`` (the service's table) receives every step;
        ``actor`` is the authenticated person who runs it (default: the operating-system user)."""
        if (audit_log is None) == (audit_sink is None):
            raise ValueError("give exactly one of audit_log and audit_sink")
        self.config = config
        self.store = store
        self._sink = audit_sink or (lambda entry: approvals.append_audit(audit_log, [entry]))  # type: ignore[arg-type]
        self.actor = actor or os_user()
        self.executors = executors if executors is not None else build_executors(config)
        self.clock = clock

    # -- audit ------------------------------------------------------------------------------
    def _audit(self, thread: str, incident: str, pid: str, p: Proposal | None, step: str, outcome: str,
               reason: str = "") -> None:
        entry = approvals.AuditEntry(time_unix=self.clock(), thread=thread, incident=incident, proposal_id=pid,
                                     action=p.action if p else None, target=p.target if p else None,
                                     content_hash=p.content_hash if p else "", decision=step, approver=self.actor,
                                     outcome=outcome, reason=reason[:1000])
        self._sink(entry)

    def _refuse(self, thread: str, incident: str, pid: str, p: Proposal | None, step: str, reason: str) -> None:
        self._audit(thread, incident, pid, p, step, "refused", reason)
        raise ExecutionError(f"{step} {pid} refused: {reason}")

    # -- checks -----------------------------------------------------------------------------
    def _approved(self, state: dict[str, Any], thread: str, pid: str, step: str) -> Proposal:
        report = state.get("report") or {}
        incident = str(report.get("incident", ""))
        raw = next((p for p in report.get("proposals", []) if p.get("id") == pid), None)
        if raw is None:
            self._refuse(thread, incident, pid, None, step, "no such proposal in this investigation")
        p = Proposal.model_validate(raw)
        if p.status != "approved":
            self._refuse(thread, incident, pid, p, step, f"the proposal is {p.status}, not approved")
        decision = next((d for d in reversed(state.get("decisions") or [])
                         if d.get("proposal_id") == pid and d.get("outcome") == "approved"), None)
        if decision is None or decision.get("content_hash") != p.content_hash:
            self._refuse(thread, incident, pid, p, step, "no approval of this exact content was recorded by the approval gate")
        if content_hash(p) != p.content_hash:
            self._refuse(thread, incident, pid, p, step, "the proposal changed since it was approved (hash mismatch)")
        age = self.clock() - float(decision.get("time_unix", 0))
        if age > self.config.approvals.max_age_s:
            self._refuse(thread, incident, pid, p, step,
                         f"the approval is {age:.0f} s old; approvals expire after {self.config.approvals.max_age_s:g} s")
        return p

    def _plan(self, thread: str, state: dict[str, Any], p: Proposal) -> tuple[Executor, Plan]:
        incident = str((state.get("report") or {}).get("incident", ""))
        try:
            ex = route(p.action, self.executors, self.config.routes)
            plan = ex.plan(p.action, p.target, reason=f"forensic {thread} {p.id}"[:200],
                           context={"thread": thread, "proposal_id": p.id, "content_hash": p.content_hash,
                                    "incident": incident, "risk": p.risk, "blast_radius": p.blast_radius,
                                    "rollback": p.rollback, "evidence": p.evidence, "proposal_reason": p.reason})
        except ExecutionError as exc:
            self._refuse(thread, incident, p.id, p, "execute", str(exc))
        return ex, plan

    # -- the verbs --------------------------------------------------------------------------
    def execute(self, thread: str, state: dict[str, Any], pid: str, *, dry_run: bool = False) -> dict[str, Any]:
        """Run approved proposal ``pid`` of ``thread`` (whose checkpointed values are ``state``)."""
        incident = str((state.get("report") or {}).get("incident", ""))
        step = "dry-run" if dry_run else "execute"
        p = self._approved(state, thread, pid, step)
        ex, plan = self._plan(thread, state, p)
        self._audit(thread, incident, pid, p, step, "planned", "; ".join(plan.steps))
        if dry_run:
            return {"proposal": pid, "state": "planned", "plan": plan.model_dump()}
        try:
            self.store.claim(thread, p, ex.name, plan, self.actor)
        except ExecutionError as exc:
            self._refuse(thread, incident, pid, p, step, str(exc))
        self._audit(thread, incident, pid, p, step, "started", plan.steps[0])
        try:
            result = ex.execute(plan)
        except ExecutionError as exc:
            self.store.finish(thread, pid, "failed", str(exc))
            self._audit(thread, incident, pid, p, step, "failed", str(exc))
            raise
        self._audit(thread, incident, pid, p, step, "succeeded", result.detail)
        check = self._verify(ex, plan)
        state_name = "succeeded" if check.ok else "unverified"
        self.store.finish(thread, pid, state_name, f"{result.detail}; {check.detail}")
        self._audit(thread, incident, pid, p, "verify", "verified" if check.ok else "unverified", check.detail)
        return {"proposal": pid, "state": state_name, "plan": plan.model_dump(), "result": result.model_dump(),
                "verification": check.model_dump()}

    def _verify(self, ex: Executor, plan: Plan) -> Outcome:
        try:
            return ex.verify(plan)
        except ExecutionError as exc:
            return Outcome(ok=False, detail=f"could not verify: {exc}")

    def undo(self, thread: str, state: dict[str, Any], pid: str) -> dict[str, Any]:
        """Reverse an executed proposal (a drained node resumes, a cordoned node is uncordoned)."""
        incident = str((state.get("report") or {}).get("incident", ""))
        row = self.store.get(thread, pid)
        p = next((Proposal.model_validate(x) for x in (state.get("report") or {}).get("proposals", [])
                  if x.get("id") == pid), None)
        if row is None or row["state"] not in ("succeeded", "unverified"):
            self._refuse(thread, incident, pid, p, "undo",
                         "it has not been executed" if row is None else f"its execution is {row['state']}")
        ex = self.executors.get(row["executor"])
        if ex is None:
            self._refuse(thread, incident, pid, p, "undo", f"the {row['executor']} executor is not configured")
        plan = Plan.model_validate_json(row["plan"])
        try:
            result = ex.undo(plan)
        except ExecutionError as exc:
            self._audit(thread, incident, pid, p, "undo", "failed", str(exc))
            raise
        self.store.finish(thread, pid, "undone", result.detail)
        self._audit(thread, incident, pid, p, "undo", "undone", result.detail)
        return {"proposal": pid, "state": "undone", "result": result.model_dump()}


def annotate(report: dict[str, Any], executions: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The report with each proposal's execution state (``not_executed`` when none)."""
    out = json.loads(json.dumps(report))
    for p in out.get("proposals", []):
        row = executions.get(p.get("id"))
        p["execution"] = ({"state": row["state"], "executor": row["executor"], "by": row["by"],
                           "detail": row["detail"], "finished": row["finished"]} if row else {"state": "not_executed"})
    return out
