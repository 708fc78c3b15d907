"""Budgets are hard limits, whatever the model does: random scripted models (valid and invalid
calls, garbage, errors, timeouts, random but possible usage) never push tool calls, tokens or
cost past their limits, and every token and cent the client was charged is in the report."""

from __future__ import annotations

import math
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

from forensic.harness.budget import Limits
from forensic.harness.graph import Investigator
from forensic.harness.llm.scripted import Disconnect, Fail, Reply, ScriptedModel, Timeout, call, stop
from forensic.harness.llm.tokens import prompt_bound
from forensic.harness.models import Report
from forensic.tools import all_tools
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.memory import InMemorySaver

from tests.conftest import HOSTS, build_bundle

TOOLS = sorted(all_tools())


@lru_cache(maxsize=2)
def _bundle(fault: str) -> Path:
    # Built once per process: hypothesis examples must not share function-scoped fixtures.
    return build_bundle(Path(tempfile.mkdtemp(prefix="forensic-prop-")) / fault, fault)


def _policy(data: st.DataObject):
    """A model that answers each request with a step drawn at random."""

    def answer(body: dict[str, Any]):
        kind = data.draw(
            st.sampled_from(
                [
                    "valid",
                    "valid",
                    "valid",
                    "invalid",
                    "stop",
                    "garbage",
                    "error",
                    "timeout",
                    "disconnect",
                    "no-usage",
                ]
            )
        )
        bound = prompt_bound(body["messages"], body.get("response_format"))
        max_tokens = body["max_tokens"]
        usage = {
            "prompt_tokens": data.draw(st.integers(0, bound)),
            "completion_tokens": data.draw(st.integers(0, max_tokens)),
        }
        if kind == "valid":
            host = data.draw(st.sampled_from([None, *HOSTS]))
            return Reply.json(
                call(data.draw(st.sampled_from(TOOLS)), **({"host": host} if host else {})), **usage
            )
        if kind == "invalid":
            tool = data.draw(st.sampled_from([*TOOLS, "shell", "read_file", ""]))
            args = data.draw(
                st.dictionaries(
                    st.sampled_from(["host", "path", "cmd"]),
                    st.one_of(st.text(max_size=20), st.integers()),
                    max_size=2,
                )
            )
            return Reply.json(call(tool, **args), **usage)
        if kind == "stop":
            return Reply.json(stop(claims=[{"claim": "rank 3 is slow", "evidence": ["ev-1"]}]), **usage)
        if kind == "garbage":
            return Reply(data.draw(st.text(max_size=60)), **usage)
        if kind == "error":
            return Fail(
                data.draw(st.sampled_from([429, 500, 503])),
                headers={"retry-after": str(data.draw(st.integers(0, 40)))},
            )
        if kind == "timeout":
            return Timeout()
        if kind == "disconnect":
            return Disconnect()
        return Reply.json(call(data.draw(st.sampled_from(TOOLS))), usage=False)

    return answer


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    fault=st.sampled_from(["pcie_downtrain", "thermal_throttle"]),
    tool_calls=st.integers(0, 10),
    tokens=st.integers(0, 80_000),
    cost=st.sampled_from([0.0, 0.001, 0.01, 0.05, 1.0]),
    model=st.sampled_from(["gpt-4o", "gpt-4.1-mini", "some-local-model"]),
    max_tokens=st.sampled_from([200, 1024]),
)
def test_budgets_hold_exactly(
    data, fault: str, tool_calls: int, tokens: int, cost: float, model: str, max_tokens: int
) -> None:
    scripted = ScriptedModel(_policy(data))
    client = scripted.client(model=model, max_attempts=3)
    limits = Limits(tool_calls=tool_calls, llm_tokens=tokens, cost_usd=cost)
    report = Investigator(
        _bundle(fault),
        planner="llm",
        planner_kwargs={"client": client, "max_tokens": max_tokens},
        limits=limits,
        checkpointer=InMemorySaver(),
    ).run()
    Report.model_validate(report)
    b = report["budget"]
    assert b["tool_calls"] <= tool_calls and len(report["evidence"]) == b["tool_calls"]
    assert b["llm_tokens"] <= tokens
    assert b["cost_usd"] <= cost
    # Exact accounting: the report holds everything charged, failed attempts included.
    assert b["llm_tokens"] == client.tally.tokens
    assert math.isclose(b["cost_usd"], client.tally.cost_usd, abs_tol=6e-7)  # the report rounds to 6 places
    assert client.tally.cost_usd <= cost
    assert all(r["max_tokens"] <= max_tokens for r in scripted.requests)
