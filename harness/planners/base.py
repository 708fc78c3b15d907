"""The planner seam: given where the investigation stands, decide the next tool call or stop."""

from __future__ import annotations

from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from forensic.harness.failure_graph import FailureGraph, Hypothesis, Observation


class ToolCall(BaseModel):
    """The next test to run."""

    action: Literal["call"] = "call"
    tool: str = Field(description="Tool name.")
    args: dict[str, Any] = Field(default_factory=dict, description="Tool arguments (validated before use).")
    reason: str = Field("", description="Why this test, now.")


class Stop(BaseModel):
    """Enough: conclude."""

    action: Literal["stop"] = "stop"
    reason: str = Field(description="Why the planner stops.")


Decision = ToolCall | Stop


class PlannerView(BaseModel):
    """Everything a planner may look at. Built fresh for every decision."""

    model_config = {"arbitrary_types_allowed": True}

    graph: FailureGraph
    observation: Observation
    hypotheses: list[Hypothesis]
    executed: list[tuple[str, str | None]] = Field(description="(tool, host or None for fleet) already run.")
    tools: dict[str, float] = Field(description="Available tool name -> cost.")
    host_scoped: list[str] = Field(default_factory=list, description="Tools that accept a host argument.")
    hosts: list[str] = Field(description="Hosts in the bundle.")
    records: list[dict[str, Any]] = Field(default_factory=list, description="The evidence ledger so far.")
    incident: dict[str, Any] = Field(default_factory=dict, description="incident.json as loaded.")
    budget_left: dict[str, float] = Field(
        default_factory=dict,
        description="What is left of each budget (tool_calls, llm_tokens, cost_usd, wall_s): a model call must fit in it.",
    )


@runtime_checkable
class Planner(Protocol):
    """What the graph asks of a planner. Planners without memory inherit :class:`PlannerBase`."""

    name: str

    def decide(self, view: PlannerView) -> Decision:
        """The next tool call, or Stop."""
        ...

    def claims(self) -> list[dict[str, Any]]:
        """Claims the planner makes about the verdict (the model's), [] when none."""
        ...

    def drain_notes(self) -> list[str]:
        """Notes for the report since the last call (a fallback, a retry), then forgotten."""
        ...

    def drain_usage(self) -> dict[str, float]:
        """Budget usage since the last call (model tokens, cost), then forgotten."""
        ...

    def dump_state(self) -> dict[str, Any]:
        """What the planner must remember across a checkpoint."""
        ...

    def load_state(self, state: dict[str, Any]) -> None:
        """Continue from :meth:`dump_state` of an earlier process."""
        ...


class PlannerBase:
    """A planner without memory, claims or usage of its own."""

    name: str

    def claims(self) -> list[dict[str, Any]]:
        return []

    def drain_notes(self) -> list[str]:
        return []

    def drain_usage(self) -> dict[str, float]:
        return {}

    def dump_state(self) -> dict[str, Any]:
        return {}

    def load_state(self, state: dict[str, Any]) -> None:
        return None


_PLANNERS: dict[str, type] = {}


def register_planner(cls: type) -> type:
    _PLANNERS[cls.name] = cls
    return cls


def planner_names() -> list[str]:
    return sorted(_PLANNERS)


def make_planner(name: str, **kwargs: Any) -> Planner:
    from forensic.sandbox import PlannerError

    try:
        return _PLANNERS[name](**kwargs)
    except KeyError:
        raise PlannerError(f"unknown planner {name!r}; known: {', '.join(planner_names())}") from None
