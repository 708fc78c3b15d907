"""Carrying out approved remediations: the only code in forensic that changes anything outside it.

Nothing here runs on its own: :class:`ExecutionGate` executes a proposal only after a person
approved that exact proposal through the approval gate, within the approval's lifetime, once.
Executors (one per system: Slurm, Kubernetes, a runbook/ticket webhook) plan, execute, verify
and undo; every step is audited.
"""

from .base import ExecutionError, Executor, Outcome, Plan
from .config import ExecutorsConfig, load_config
from .gate import ExecutionGate, ExecutionStore, annotate, build_executors, route
from .kubernetes import KubernetesExecutor
from .runbook import RunbookExecutor
from .slurm import SlurmExecutor

__all__ = ["ExecutionError", "ExecutionGate", "ExecutionStore", "Executor", "ExecutorsConfig", "KubernetesExecutor",
           "Outcome", "Plan", "RunbookExecutor", "SlurmExecutor", "annotate", "build_executors", "load_config", "route"]
