"""What the model may answer: typed hypotheses, one typed action, typed claims. Nothing else.

The reply is requested as JSON (with :func:`reply_schema` as the ``response_format`` where the
server takes one) and always validated here, whatever the server promised: unknown fields, a
second action, an approval, free-form commands: all of it is a malformed reply.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, field_validator

#: Largest tool-argument object accepted, as compact JSON: tool inputs are a few short fields.
MAX_ARGS_CHARS = 2000


class ReplyError(ValueError):
    """A reply that is not one JSON object of the right shape; the message is fit to send back."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModelHypothesis(_Strict):
    """A cause the model believes in: advisory only, the verdict is computed from evidence."""

    root_cause: str = Field(
        min_length=1,
        max_length=80,
        description="A root cause id from the vocabulary, or a short free-text cause outside it.",
    )
    component: str | None = Field(
        None,
        max_length=200,
        description="The component it blames (host, host/gpuN, host/ibdev, switch/port) or null.",
    )
    why: str = Field("", max_length=600, description="The reasoning, citing evidence ids.")


class CallAction(_Strict):
    """Run one tool next."""

    kind: Literal["call"] = Field(description="Always 'call'.")
    tool: str = Field(min_length=1, max_length=64, description="Tool name.")
    args: dict[str, Any] = Field(
        default_factory=dict,
        description="Tool arguments; validated against the tool's input model before anything runs.",
    )
    reason: str = Field("", max_length=600, description="Why this test, now.")

    @field_validator("args")
    @classmethod
    def _small(cls, value: dict[str, Any]) -> dict[str, Any]:
        if len(json.dumps(value, default=str)) > MAX_ARGS_CHARS:
            raise ValueError(f"arguments longer than {MAX_ARGS_CHARS} characters")
        return value


class StopAction(_Strict):
    """Enough evidence: conclude."""

    kind: Literal["stop"] = Field(description="Always 'stop'.")
    reason: str = Field("", max_length=600, description="Why nothing more is worth running.")


EvidenceId = Annotated[str, StringConstraints(min_length=1, max_length=16)]


class ModelClaim(_Strict):
    """A statement the model makes, with the evidence records it rests on (checked by the harness)."""

    claim: str = Field(
        min_length=1,
        max_length=400,
        description="One sentence; every number in it must appear in the cited evidence.",
    )
    evidence: list[EvidenceId] = Field(max_length=8, description="Evidence ids (ev-N) cited.")


class ModelReply(_Strict):
    """One turn of the model."""

    hypotheses: list[ModelHypothesis] = Field(
        default_factory=list, max_length=5, description="Current hypotheses, best first."
    )
    action: Annotated[CallAction | StopAction, Field(discriminator="kind")] = Field(
        description="The next step."
    )
    claims: list[ModelClaim] = Field(
        default_factory=list, max_length=8, description="Claims with their citations."
    )


def _args_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's input schema reduced to structure: validation happens on our side anyway, and
    grammar-constrained servers choke on long patterns and length bounds."""
    if "$ref" in json.dumps(schema) or "$defs" in schema:
        return {"type": "object"}
    drop = {"title", "default", "description", "pattern", "maxLength", "minLength", "format", "examples"}

    def clean(node: Any) -> Any:
        if isinstance(node, dict):
            out = {}
            for key, value in node.items():
                if key == "properties" and isinstance(value, dict):  # keys here are argument names
                    out[key] = {name: clean(sub) for name, sub in value.items()}
                elif key not in drop:
                    out[key] = clean(value)
            return out
        if isinstance(node, list):
            return [clean(v) for v in node]
        return node

    return clean(schema)


def reply_schema(tool_schemas: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """JSON schema of :class:`ModelReply` for ``response_format``: one call variant per tool, so a
    server that enforces schemas cannot even emit an unknown tool or argument.

    Free text carries no ``maxLength``: llama.cpp compiles it into a grammar repetition that
    slows sampling tenfold; ``max_tokens`` and :class:`ModelReply` bound it anyway."""

    text = {"type": "string"}

    calls = [
        {
            "type": "object",
            "properties": {
                "kind": {"enum": ["call"]},
                "tool": {"enum": [name]},
                "args": _args_schema(params),
                "reason": text,
            },
            "required": ["kind", "tool", "args", "reason"],
            "additionalProperties": False,
        }
        for name, params in sorted(tool_schemas.items())
    ]
    stop = {
        "type": "object",
        "properties": {"kind": {"enum": ["stop"]}, "reason": text},
        "required": ["kind", "reason"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "hypotheses": {
                "type": "array",
                "maxItems": 3,
                "items": {
                    "type": "object",
                    "properties": {
                        "root_cause": text,
                        "component": {"anyOf": [text, {"type": "null"}]},
                        "why": text,
                    },
                    "required": ["root_cause", "component", "why"],
                    "additionalProperties": False,
                },
            },
            "action": {"anyOf": [*calls, stop]},
            "claims": {
                "type": "array",
                "maxItems": 5,
                "items": {
                    "type": "object",
                    "properties": {
                        "claim": text,
                        "evidence": {"type": "array", "maxItems": 8, "items": text},
                    },
                    "required": ["claim", "evidence"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["hypotheses", "action", "claims"],
        "additionalProperties": False,
    }


_FENCE = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.DOTALL)


def _first_object(text: str) -> Any:
    """The reply's JSON object: the whole text, a fenced block, or the first object in prose."""
    stripped = text.strip()
    if not stripped:
        raise ReplyError("the reply was empty")
    if m := _FENCE.fullmatch(stripped):
        stripped = m.group(1)
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        pass
    start = stripped.find("{")
    if start < 0:
        raise ReplyError("the reply holds no JSON object")
    try:
        value, _ = json.JSONDecoder().raw_decode(stripped[start:])
    except json.JSONDecodeError as exc:
        raise ReplyError(f"the reply is not valid JSON ({exc.msg} at character {exc.pos})") from None
    return value


def parse_reply(text: str, finish_reason: str | None = None) -> ModelReply:
    """Validate a reply; ReplyError says what is wrong in words the model can act on."""
    try:
        raw = _first_object(text)
    except ReplyError as exc:
        if finish_reason == "length":
            raise ReplyError(f"{exc}: the reply was cut off at the token limit; answer shorter") from None
        raise
    if not isinstance(raw, dict):
        raise ReplyError("the reply must be one JSON object")
    try:
        return ModelReply.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "reply"
        raise ReplyError(f"the reply does not match the format: {where}: {first['msg']}") from None


def inert_args(value: Any, depth: int = 0) -> Any:
    """Model-chosen arguments made safe to store: the harness records even an invalid call's
    arguments in its checkpointed state, whose serialisers choke on integers past 64 bits, NaN
    and deep nesting. Strings are kept as they are (they are data, and short)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value if -(2**63) <= value < 2**63 else str(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if depth >= 4:
        return json.dumps(value, default=str)[:200]
    if isinstance(value, dict):
        return {str(k)[:64]: inert_args(v, depth + 1) for k, v in list(value.items())[:16]}
    if isinstance(value, list):
        return [inert_args(v, depth + 1) for v in value[:16]]
    return str(value)[:200]


def clean_text(text: str, limit: int) -> str:
    """Model text made safe to show a person: no control or invisible format characters (bidi
    overrides, zero-width joiners), one line, at most ``limit`` characters."""
    kept = "".join(
        " " if unicodedata.category(c) in ("Cc", "Zl", "Zp") else c
        for c in text
        if unicodedata.category(c) not in ("Cf", "Co", "Cs", "Cn")
    )
    one_line = " ".join(kept.split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"
