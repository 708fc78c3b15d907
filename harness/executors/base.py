"""What an executor is: plan, execute, verify, undo, for a few action kinds; and the registry.

An executor never decides anything. It is handed a proposal that the execution gate
(:mod:`.gate`) has already checked (approved through the approval gate, bound to its content
hash, fresh, not executed before) and turns it into the smallest concrete change: an argv, an API
call, an HTTP request. ``plan`` has no side effects (it is also the dry run); ``execute`` makes
the change; ``verify`` reads back that it took; ``undo`` reverses it where that is possible.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, Protocol

from forensic.sandbox import ForensicError
from pydantic import BaseModel, Field


class ExecutionError(ForensicError):
    """An execution was refused or could not be carried out; the message says why."""


class Plan(BaseModel):
    """What an executor will do, concretely, before it does anything."""

    executor: str = Field(description="Executor name: slurm, kubernetes, runbook.")
    action: str = Field(description="The proposal's action kind.")
    target: str = Field(description="The proposal's target (bundle vocabulary).")
    resolved: str = Field(
        description="The target in the executor's own names (a Slurm node, a Kubernetes node)."
    )
    steps: list[str] = Field(description="Human-readable steps, e.g. the argv that will run.")
    undo: list[str] = Field(default_factory=list, description="How it will be undone, if it can be.")
    details: dict[str, Any] = Field(
        default_factory=dict, description="Executor-specific data for execute/verify/undo."
    )


class Outcome(BaseModel):
    """The result of execute, verify or undo."""

    ok: bool
    detail: str = Field(description="One line a person can read: what happened.")
    data: dict[str, Any] = Field(default_factory=dict)


class Executor(Protocol):
    """Carries out approved proposals of some action kinds."""

    name: ClassVar[str]
    actions: ClassVar[frozenset[str]]

    def plan(self, action: str, target: str, *, reason: str, context: dict[str, Any]) -> Plan:
        """What would be done; no side effects. ``context``: thread, proposal id, hash, approver."""
        ...

    def execute(self, plan: Plan) -> Outcome: ...

    def verify(self, plan: Plan) -> Outcome: ...

    def undo(self, plan: Plan) -> Outcome: ...


Step = Literal["planned", "started", "result", "verification", "undo"]
