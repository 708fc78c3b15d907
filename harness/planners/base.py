"""The planner seam: given where the investigation stands, decide the next tool call or stop."""

from __future__ import annotations

import json
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

from forensic.harness.failure_graph import FailureGraph, Hypothesis, Observation
from pydantic import BaseModel, Field


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


def call_key(tool: str, args: Any) -> str:
    """A call's identity: its tool and arguments, whatever their key order. Identical calls share it."""
    try:
        return f"{tool} {json.dumps(args, sort_keys=True, default=repr)}"
    except (TypeError, ValueError, RecursionError):  # keys of mixed types, or nesting too deep for JSON
        return f"{tool} {repr(args)[:2000]}"


class Refusal(BaseModel):
    """A call that validation or the sandbox policy refused. An identical call is not run again:
    the harness answers it from this refusal, and counts it."""

    key: str = Field(description="call_key of the refused call.")
    tool: str = Field(description="Tool name.")
    host: str | None = Field(None, description="Its host argument, when that was a string.")
    evidence: str = Field(description="The evidence record holding the refusal (ev-N).")
    reason: str = Field(description="Why it was refused, as the record says.")


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
    refused: list[Refusal] = Field(
        default_factory=list, description="Calls refused so far; identical ones are not run again."
    )
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

#: Planners whose modules pull in heavy optional dependencies (the model planner needs ``openai``,
#: 1.5 s of start-up and an extra): imported on first use, so runs without a model never load them.
_LAZY: dict[str, tuple[str, str]] = {"llm": ("forensic.harness.planners.llm_planner", "llm")}


_PB = TypeVar("_PB", bound=type[Planner])


def register_planner(cls: _PB) -> _PB:
    _PLANNERS[cls.name] = cls
    return cls


def planner_names() -> list[str]:
    return sorted(set(_PLANNERS) | set(_LAZY))


def make_planner(name: str, **kwargs: Any) -> Planner:
    import importlib

    from forensic.sandbox import PlannerError

    if name not in _PLANNERS and name in _LAZY:
        module, extra = _LAZY[name]
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name is None or exc.name.startswith("forensic"):
                raise
            raise PlannerError(
                f"the {name} planner needs the {exc.name!r} package: pip install 'forensic-harness[{extra}]'"
            ) from None
    try:
        return _PLANNERS[name](**kwargs)
    except KeyError:
        raise PlannerError(f"unknown planner {name!r}; known: {', '.join(planner_names())}") from None
