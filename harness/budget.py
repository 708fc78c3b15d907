"""Hard budgets: each limit is checked before the work it limits, never after."""

from __future__ import annotations

from pydantic import BaseModel, Field


class Limits(BaseModel):
    """Budget limits of one investigation."""

    # Finite and bounded: a limit is a number the report writes as JSON and the graph's
    # recursion limit is derived from; "inf" or 1e20 is refused, not silently kept.
    tool_calls: int = Field(40, ge=0, le=100_000, description="Tool calls, valid or not.")
    llm_tokens: int = Field(200_000, ge=0, le=10**12, description="Model tokens, prompt plus completion.")
    cost_usd: float = Field(1.0, ge=0.0, le=1e9, allow_inf_nan=False, description="Model cost in US dollars.")
    wall_s: float = Field(
        300.0,
        gt=0.0,
        le=7 * 86400,
        allow_inf_nan=False,
        description="Working time in seconds (waiting for a person excluded).",
    )


class Usage(BaseModel):
    """What has been spent so far."""

    tool_calls: int = 0
    llm_tokens: int = 0
    cost_usd: float = 0.0
    wall_s: float = 0.0


def exhausted(usage: Usage, limits: Limits) -> str | None:
    """The name of the first budget with nothing left for one more step, or None."""
    if usage.tool_calls >= limits.tool_calls:
        return "tool_calls"
    if usage.llm_tokens >= limits.llm_tokens:
        return "llm_tokens"
    if usage.cost_usd >= limits.cost_usd:
        return "cost_usd"
    if usage.wall_s >= limits.wall_s:
        return "wall_s"
    return None
