"""Carrying out approved remediations: the only code in forensic that changes anything outside it.

Nothing here runs on its own: :class:`ExecutionGate` executes a proposal only after a person
approved that exact proposal through the approval gate (an approval on the audit record, not only
in the checkpoint), within the approval's lifetime, once per checkpoint store (:mod:`.ledger`).
Executors (one per system: Slurm, Kubernetes, a runbook/ticket webhook) plan, execute, verify
and undo; every step is audited.
"""

from .base import ExecutionError, Executor, Outcome, Plan
from .config import ExecutorsConfig, load_config
from .gate import ApprovalRecords, AuditLogApprovals, ExecutionGate, annotate, build_executors, route
from .kubernetes import KubernetesExecutor
from .ledger import ExecutionLedger, PostgresLedger, SqliteLedger
from .runbook import RunbookExecutor
from .slurm import SlurmExecutor

__all__ = [
    "ApprovalRecords",
    "AuditLogApprovals",
    "ExecutionError",
    "ExecutionGate",
    "ExecutionLedger",
    "Executor",
    "ExecutorsConfig",
    "KubernetesExecutor",
    "Outcome",
    "Plan",
    "PostgresLedger",
    "RunbookExecutor",
    "SlurmExecutor",
    "SqliteLedger",
    "annotate",
    "build_executors",
    "load_config",
    "route",
]
