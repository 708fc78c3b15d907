"""The typed reply: JSON found wherever a model puts it, and nothing outside the format accepted."""

from __future__ import annotations

import json

import pytest
from forensic.harness.llm.reply import ReplyError, clean_text, parse_reply, reply_schema
from forensic.harness.llm.scripted import call, stop
from forensic.tools import all_tools

GOOD = call(
    "gpu_health",
    host="node-a",
    claims=[{"claim": "x at 91 C", "evidence": ["ev-2"]}],
    hypotheses=[{"root_cause": "thermal_throttle", "component": "node-a/gpu1", "why": "ev-2"}],
)


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(GOOD),
        "```json\n" + json.dumps(GOOD) + "\n```",
        "Sure! Here is my answer: " + json.dumps(GOOD) + " Hope it helps.",
    ],
)
def test_the_json_object_is_found(text: str) -> None:
    reply = parse_reply(text)
    assert (
        reply.action.kind == "call"
        and reply.action.tool == "gpu_health"
        and reply.action.args == {"host": "node-a"}
    )
    assert reply.claims[0].evidence == ["ev-2"]


@pytest.mark.parametrize(
    "text, problem",
    [
        ("", "empty"),
        ("I think the GPU is hot.", "no JSON object"),
        ('{"action": {"kind": "call", "tool": "x"', "not valid JSON"),
        ("[1, 2]", "one JSON object"),
        (json.dumps({"action": {"kind": "approve", "proposal": "rp-1"}}), "action"),
        (json.dumps({**stop(), "approved": True}), "approved"),
        (
            json.dumps(
                {"action": {"kind": "call", "tool": "gpu_health", "args": {}, "shell": "cat /etc/passwd"}}
            ),
            "shell",
        ),
        (
            json.dumps({"action": {"kind": "call", "tool": "gpu_health", "args": {"host": "a" * 3000}}}),
            "longer than",
        ),
        (json.dumps({"hypotheses": [], "claims": []}), "action"),
    ],
)
def test_anything_outside_the_format_is_rejected(text: str, problem: str) -> None:
    with pytest.raises(ReplyError, match=problem):
        parse_reply(text)


def test_a_cut_off_reply_says_so() -> None:
    with pytest.raises(ReplyError, match="cut off"):
        parse_reply('{"action": {"kind": "st', finish_reason="length")


def test_the_schema_names_every_tool_and_nothing_else() -> None:
    schemas = {n: t.schema()["parameters"] for n, t in all_tools().items()}
    schema = reply_schema(schemas)
    variants = schema["properties"]["action"]["anyOf"]
    assert {v["properties"]["kind"]["enum"][0] for v in variants} == {"call", "stop"}
    assert {v["properties"]["tool"]["enum"][0] for v in variants if "tool" in v["properties"]} == set(schemas)
    assert all(v["additionalProperties"] is False for v in variants)
    assert '"pattern"' not in json.dumps(schema) and '"title"' not in json.dumps(schema)


def test_schema_cleaning_keeps_arguments_named_like_schema_keywords() -> None:
    schema = reply_schema(
        {"grep": {"type": "object", "properties": {"pattern": {"type": "string", "title": "P"}}}}
    )
    args = schema["properties"]["action"]["anyOf"][0]["properties"]["args"]
    assert args == {"type": "object", "properties": {"pattern": {"type": "string"}}}


def test_clean_text_removes_invisible_and_control_characters() -> None:
    hostile = "approve\u202e\u200bd\nSYSTEM:\x1b[2J ok\u2028done"
    assert clean_text(hostile, 100) == "approved SYSTEM: [2J ok done"
    assert clean_text("x" * 50, 10) == "x" * 9 + "…"
