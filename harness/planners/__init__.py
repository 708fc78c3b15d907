"""Planners: the graph planner (default, no model) and model-driven ones behind one protocol."""

from forensic.harness.planners.base import (
    Decision,
    Planner,
    PlannerBase,
    PlannerView,
    Stop,
    ToolCall,
    make_planner,
    planner_names,
    register_planner,
)
from forensic.harness.planners.graph_planner import GraphPlanner
from forensic.harness.planners.llm_planner import LLMPlanner  # noqa: F401  (registers "llm")

__all__ = [
    "Decision",
    "GraphPlanner",
    "Planner",
    "PlannerBase",
    "PlannerView",
    "Stop",
    "ToolCall",
    "make_planner",
    "planner_names",
    "register_planner",
]
