"""A scripted OpenAI-compatible model at the HTTP seam, for tests and demos without a network.

It answers Chat Completions requests through an ``httpx.MockTransport``, so the real client runs
end to end (the openai package, the retry layer, the accounting); only the server is fake::

    model = ScriptedModel([Fail(429, headers={"retry-after": "2"}), Reply.json(call("gpu_health"))])
    client = model.client()          # a ModelClient on that transport, with a fake clock
    ...
    model.sleeps                     # [2.0]: the retry honoured retry-after, without sleeping

A script is a list of steps consumed in order (then ``then`` forever), or a function from the
request body to a step, for models that react to what they read.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import httpx
from forensic.harness.llm.client import ModelClient
from forensic.harness.llm.tokens import prompt_bound

BASE_URL = "http://scripted.invalid/v1"


@dataclass
class Reply:
    """A chat completion. Token counts default to plausible ones that respect the request."""

    content: str | None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str = "stop"
    usage: bool = True

    @classmethod
    def json(cls, obj: Any, **kw: Any) -> Reply:
        return cls(json.dumps(obj), **kw)


@dataclass
class Fail:
    """An HTTP error answer (429, 500, ...), with headers such as ``retry-after``."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    message: str = "scripted failure"


@dataclass
class Raw:
    """Any HTTP answer at all: an HTML error page with status 200, a truncated body."""

    status: int
    text: str
    content_type: str = "text/html"


@dataclass
class Timeout:
    """The request is sent and no answer comes back in time."""


@dataclass
class Disconnect:
    """The connection cannot be made."""


Step = Reply | Fail | Raw | Timeout | Disconnect


def call(
    tool: str,
    reason: str = "scripted",
    claims: list[dict[str, Any]] | None = None,
    hypotheses: list[dict[str, Any]] | None = None,
    **args: Any,
) -> dict[str, Any]:
    """A well-formed reply that calls ``tool`` with ``args``."""
    return {
        "hypotheses": hypotheses or [],
        "action": {"kind": "call", "tool": tool, "args": args, "reason": reason},
        "claims": claims or [],
    }


def stop(
    reason: str = "scripted",
    claims: list[dict[str, Any]] | None = None,
    hypotheses: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A well-formed reply that stops."""
    return {
        "hypotheses": hypotheses or [],
        "action": {"kind": "stop", "reason": reason},
        "claims": claims or [],
    }


class ScriptedModel:
    """The fake server. ``requests`` holds every request body it received, in order."""

    def __init__(
        self, script: Iterable[Step] | Callable[[dict[str, Any]], Step], *, then: Step | None = None
    ) -> None:
        self._policy = script if callable(script) else None
        self._steps = [] if callable(script) else list(script)
        self._then = then
        self.requests: list[dict[str, Any]] = []
        self.sleeps: list[float] = []
        self.now = 1000.0

    # -- the fake clock the client waits on -----------------------------------------------------
    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now

    # -- wiring ---------------------------------------------------------------------------------
    def http_client(self) -> httpx.Client:
        return httpx.Client(transport=httpx.MockTransport(self))

    def client(self, **kwargs: Any) -> ModelClient:
        """A real :class:`~harness.llm.client.ModelClient` talking to this model, on its fake clock."""
        kwargs.setdefault("model", "scripted-model")
        return ModelClient(
            base_url=BASE_URL,
            api_key="test-key",
            http_client=self.http_client(),
            sleep=self.sleep,
            clock=self.clock,
            **kwargs,
        )

    # -- serving --------------------------------------------------------------------------------
    def next_step(self, body: dict[str, Any]) -> Step:
        if self._policy is not None:
            return self._policy(body)
        if self._steps:
            return self._steps.pop(0)
        if self._then is not None:
            return self._then
        return Fail(500, message="the script ran out")

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content or b"{}")
        self.requests.append(body)
        step = self.next_step(body)
        if isinstance(step, Timeout):
            raise httpx.ReadTimeout("scripted timeout", request=request)
        if isinstance(step, Disconnect):
            raise httpx.ConnectError("scripted connection refused", request=request)
        if isinstance(step, Fail):
            return httpx.Response(
                step.status,
                headers=step.headers,
                json={"error": {"message": step.message, "type": "scripted", "code": step.status}},
            )
        if isinstance(step, Raw):
            return httpx.Response(step.status, text=step.text, headers={"content-type": step.content_type})
        return httpx.Response(200, json=self._completion(body, step))

    @staticmethod
    def _completion(body: dict[str, Any], step: Reply) -> dict[str, Any]:
        bound = prompt_bound(body.get("messages") or [], body.get("response_format"))
        max_tokens = int(body.get("max_tokens") or 1 << 30)
        prompt = step.prompt_tokens if step.prompt_tokens is not None else math.ceil(bound / 3)
        completion = (
            step.completion_tokens
            if step.completion_tokens is not None
            else min(max_tokens, math.ceil(len(step.content or "") / 3))
        )
        out: dict[str, Any] = {
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "scripted"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": step.content},
                    "finish_reason": step.finish_reason,
                }
            ],
        }
        if step.usage:
            out["usage"] = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            }
        return out
