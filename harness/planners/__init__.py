"""Planners: the graph planner (default, no model) and model-driven ones behind one protocol."""

from forensic.harness.planners.base import (
    Decision,
    Planner,
    PlannerBase,
    PlannerView,
    Refusal,
    Stop,
    ToolCall,
    call_key,
    make_planner,
    planner_names,
    register_planner,
)
from forensic.harness.planners.graph_planner import GraphPlanner

# The model planner ("llm") is imported by make_planner on first use: it needs openai.

__all__ = [
    "Decision",
    "GraphPlanner",
    "Planner",
    "PlannerBase",
    "PlannerView",
    "Refusal",
    "Stop",
    "ToolCall",
    "call_key",
    "make_planner",
    "planner_names",
    "register_planner",
]
