"""Hard budgets: each limit is checked before the work it limits, never after."""

from __future__ import annotations

from pydantic import BaseModel, Field


class Limits(BaseModel):
    """Budget limits of one investigation."""

    tool_calls: int = Field(40, ge=0, description="Tool calls, valid or not.")
    llm_tokens: int = Field(200_000, ge=0, description="Model tokens, prompt plus completion.")
    cost_usd: float = Field(1.0, ge=0.0, description="Model cost in US dollars.")
    wall_s: float = Field(300.0, gt=0.0, description="Working time in seconds (waiting for a person excluded).")


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
