"""Slurm: drain a node (and resume it), requeue a job. argv only, never a shell.

``drain_node``: ``scontrol update NodeName=N State=DRAIN Reason="forensic <thread> <rp>"``, verified
with ``sinfo`` (the node is ``drained`` or ``draining`` with our reason); undo resumes the node.
``resume_node``: ``scontrol update NodeName=N State=RESUME``. ``requeue_job``: ``scontrol requeue
JOBID`` for a numeric job id.
"""

from __future__ import annotations

import os
import re
import subprocess
from typing import Any, ClassVar

from .base import ExecutionError, Outcome, Plan
from .config import SlurmConfig

_REASON = re.compile(r"[A-Za-z0-9 ._:/-]{1,200}")


class SlurmExecutor:
    name: ClassVar[str] = "slurm"
    actions: ClassVar[frozenset[str]] = frozenset({"drain_node", "resume_node", "requeue_job"})

    def __init__(self, config: SlurmConfig) -> None:
        self.config = config

    # -- plumbing ---------------------------------------------------------------------------
    def _env(self) -> dict[str, str]:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C"}
        if self.config.slurm_conf is not None:
            env["SLURM_CONF"] = str(self.config.slurm_conf)
        return env

    def _run(self, argv: list[str]) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(
                argv,
                capture_output=True,
                text=True,
                timeout=self.config.timeout_s,
                env=self._env(),
                check=False,
                shell=False,
            )
        except FileNotFoundError:
            raise ExecutionError(f"{argv[0]}: not installed (Slurm client commands are needed)") from None
        except subprocess.TimeoutExpired:
            raise ExecutionError(
                f"{' '.join(argv[:2])}: no answer in {self.config.timeout_s:g} s (is slurmctld up?)"
            ) from None

    @staticmethod
    def _said(done: subprocess.CompletedProcess[str]) -> str:
        return " ".join((done.stderr or done.stdout or f"exit {done.returncode}").split())[:300]

    # -- the protocol -----------------------------------------------------------------------
    def plan(self, action: str, target: str, *, reason: str, context: dict[str, Any]) -> Plan:
        if not _REASON.fullmatch(reason):
            raise ExecutionError(f"reason {reason!r} has characters that do not belong in a Slurm reason")
        sc = self.config.scontrol
        if action == "requeue_job":
            if not target.isdigit():
                raise ExecutionError(f"requeue_job needs a numeric Slurm job id, not {target!r}")
            return Plan(
                executor=self.name,
                action=action,
                target=target,
                resolved=target,
                steps=[f"{sc} requeue {target}"],
                details={"argv": [sc, "requeue", target]},
            )
        node = self.config.node_for(target)
        if action == "drain_node":
            argv = [sc, "update", f"NodeName={node}", "State=DRAIN", f"Reason={reason}"]
            undo = [sc, "update", f"NodeName={node}", "State=RESUME"]
            return Plan(
                executor=self.name,
                action=action,
                target=target,
                resolved=node,
                steps=[" ".join(argv[:4]) + f' Reason="{reason}"'],
                undo=[" ".join(undo)],
                details={"argv": argv, "undo_argv": undo, "node": node, "reason": reason},
            )
        if action == "resume_node":
            argv = [sc, "update", f"NodeName={node}", "State=RESUME"]
            return Plan(
                executor=self.name,
                action=action,
                target=target,
                resolved=node,
                steps=[" ".join(argv)],
                details={"argv": argv, "node": node},
            )
        raise ExecutionError(f"the slurm executor does not carry out {action!r}")

    def execute(self, plan: Plan) -> Outcome:
        done = self._run(plan.details["argv"])
        if done.returncode != 0:
            raise ExecutionError(f"{plan.steps[0]}: {self._said(done)}")
        return Outcome(ok=True, detail=f"ran: {plan.steps[0]}")

    def node_state(self, node: str) -> tuple[str, str]:
        """(state, reason) of ``node`` as sinfo prints them, e.g. ('drained', 'forensic t rp-1')."""
        done = self._run([self.config.sinfo, "-h", "-N", "-n", node, "-o", "%T|%E"])
        if done.returncode != 0 or not done.stdout.strip():
            raise ExecutionError(f"sinfo for node {node}: {self._said(done)}")
        state, _, reason = done.stdout.strip().splitlines()[0].partition("|")
        return state.strip(), reason.strip()

    def verify(self, plan: Plan) -> Outcome:
        if plan.action == "requeue_job":
            return Outcome(ok=True, detail="requeue accepted by slurmctld")
        state, reason = self.node_state(plan.details["node"])
        if plan.action == "drain_node":
            ok = (
                state.rstrip("*~#!%$@^-").startswith(("drain", "drained", "draining"))
                and reason == plan.details["reason"]
            )
        else:
            ok = "drain" not in state
        return Outcome(
            ok=ok,
            detail=f"node {plan.resolved} is {state}"
            + (f" ({reason})" if reason and reason != "none" else ""),
            data={"state": state, "reason": reason},
        )

    def undo(self, plan: Plan) -> Outcome:
        argv = plan.details.get("undo_argv")
        if not argv:
            raise ExecutionError(f"{plan.action} cannot be undone by the slurm executor")
        done = self._run(argv)
        if done.returncode != 0:
            raise ExecutionError(f"{' '.join(argv)}: {self._said(done)}")
        return Outcome(ok=True, detail=f"ran: {' '.join(argv)}")
