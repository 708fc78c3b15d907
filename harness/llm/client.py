"""One client for any OpenAI-compatible chat endpoint: OpenAI, vLLM, Ollama, llama.cpp.

It sends Chat Completions, retries what is transient through the one retry layer
(:mod:`harness.llm._retry`), and charges every attempt to a running tally of tokens and dollars:

- a reply is charged the usage the server reports (the worst case when it reports none);
- a timed-out attempt is charged the worst case (its prompt bound plus ``max_tokens``), since the
  server may have generated, and billed, a reply nobody received;
- a refused attempt (4xx, 5xx, no connection) is charged nothing: no tokens were generated.

Structured output is negotiated once per client, stepping down each time the server refuses a
mode: ``json_schema`` (OpenAI, vLLM, Ollama), then ``json_object`` carrying the schema (the
llama-cpp-python server's way to constrain output to a schema), then plain ``json_object``, then
plain text. The caller validates the reply whatever the server promised. Every failure surfaces
as ``ModelError``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Literal

import httpx
import openai
from forensic.harness.llm import _retry
from forensic.harness.llm.prices import PRICES_FILE, UNPRICED, Price, load_prices
from forensic.harness.llm.tokens import prompt_bound, text_bound
from forensic.sandbox.errors import ModelError
from pydantic import BaseModel, Field
from tenacity import RetryError, Retrying, retry_if_exception

from forensic.settings import get_settings

DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: Local servers ignore the key, but the openai package insists on one.
PLACEHOLDER_KEY = "not-needed"

Format = Literal["json_schema", "json_object_schema", "json_object", "text"]
_FORMATS: tuple[Format, ...] = ("json_schema", "json_object_schema", "json_object", "text")


class TokenUsage(BaseModel):
    """Tokens one attempt was charged."""

    prompt_tokens: int = Field(0, ge=0, description="Prompt tokens.")
    completion_tokens: int = Field(0, ge=0, description="Completion tokens (reasoning tokens included).")
    reported: bool = Field(
        True, description="False when the server said nothing and the worst case was charged."
    )

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class Completion(BaseModel):
    """A reply from the model."""

    text: str = Field(description="The assistant message's content ('' when there was none).")
    finish_reason: str | None = Field(
        None, description="stop, length, content_filter, ... as the server says."
    )
    model: str = Field(description="The model that answered, as the server names it.")
    format: Format = Field(description="The structured-output mode the request used.")
    usage: TokenUsage = Field(description="What this reply was charged.")
    cost_usd: float = Field(0.0, ge=0.0, description="Dollars this reply was charged.")


class Tally(BaseModel):
    """Everything charged so far, failed attempts included."""

    tokens: int = Field(0, ge=0, description="Tokens, prompt plus completion.")
    cost_usd: float = Field(0.0, ge=0.0, description="US dollars.")
    attempts: int = Field(0, ge=0, description="HTTP requests sent.")


class Allowance(BaseModel):
    """What one ``complete`` call, retries included, may spend."""

    tokens: int = Field(ge=0, description="Tokens, prompt plus completion.")
    cost_usd: float = Field(ge=0.0, description="US dollars.")


class ModelClient:
    """Chat Completions against one model on one endpoint."""

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        model: str | None = None,
        timeout_s: float = 60.0,
        max_attempts: int = 4,
        max_total_s: float = 120.0,
        max_wait_s: float = 30.0,
        temperature: float = 0.0,
        http_client: httpx.Client | None = None,
        prices_path: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        env = get_settings()
        self.base_url = base_url or env.llm_base_url or DEFAULT_BASE_URL
        self.model = model or env.llm_model or ""
        if not self.model:
            raise ModelError("no model named: pass --llm-model or set FORENSIC_LLM_MODEL")
        key = api_key or (env.llm_api_key.get_secret_value() if env.llm_api_key else "") or PLACEHOLDER_KEY
        self.timeout_s = timeout_s
        self.max_attempts = max(1, max_attempts)
        self.max_total_s = max_total_s
        self.max_wait_s = max_wait_s
        self.temperature = temperature
        self._sleep = sleep
        self._clock = clock
        table = load_prices(prices_path or env.llm_prices or PRICES_FILE)
        found = table.lookup(self.model)
        self.priced = found is not None
        self.price: Price = found or UNPRICED
        self.tally = Tally()
        self._format_index = 0
        self._attempt_deadline: float | None = None
        # The HTTP timeout bounds only the gap between bytes: a server that drips one byte a
        # second would never trip it. Every response body is read through a stream that checks
        # the call's deadline and a size cap between chunks.
        http_client = http_client or openai.DefaultHttpxClient()
        http_client.event_hooks["response"] = [
            *http_client.event_hooks.get("response", []),
            self._bound_response,
        ]
        try:
            self._openai = openai.OpenAI(
                base_url=self.base_url, api_key=key, max_retries=0, timeout=timeout_s, http_client=http_client
            )
        except openai.OpenAIError as exc:
            raise ModelError(f"cannot set up the model client: {exc}") from None

    # -- sizes -----------------------------------------------------------------------------
    @property
    def format(self) -> Format:
        """The structured-output mode the next request will use."""
        return _FORMATS[self._format_index]

    def response_format(self, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        if schema is None or self.format == "text":
            return None
        if self.format == "json_object":
            return {"type": "json_object"}
        if self.format == "json_object_schema":
            return {"type": "json_object", "schema": schema}
        return {"type": "json_schema", "json_schema": {"name": "decision", "schema": schema, "strict": False}}

    def prompt_bound(self, messages: list[dict[str, str]], schema: dict[str, Any] | None = None) -> int:
        """At most this many prompt tokens for ``messages`` in the current format."""
        return prompt_bound(messages, self.response_format(schema))

    def worst_cost(self, prompt_tokens: int, max_tokens: int) -> float:
        return self.price.cost(prompt_tokens, max_tokens)

    # -- calls -----------------------------------------------------------------------------
    def complete(
        self,
        messages: list[dict[str, str]],
        *,
        max_tokens: int,
        schema: dict[str, Any] | None = None,
        within_s: float | None = None,
        allowance: Allowance | None = None,
    ) -> Completion:
        """One reply, retrying what is transient; ModelError when there is none to be had.

        ``within_s`` bounds the call in seconds, retries and waits included; ``allowance`` bounds
        what its attempts may be charged in all.
        """
        deadline = None if within_s is None else self._clock() + within_s
        charged_before = self.tally.model_copy()
        while True:
            fmt = self.format
            try:
                return self._complete_with_retries(
                    messages, max_tokens, schema, deadline, allowance, charged_before
                )
            except openai.APIStatusError as exc:
                # The server may just not know the structured-output mode: step down and try again.
                if (
                    _retry.is_format_refusal(exc)
                    and schema is not None
                    and fmt != "text"
                    and self.format == fmt
                ):
                    self._format_index += 1
                    continue
                raise ModelError(f"the endpoint refused the request: {_retry.describe(exc)}") from None

    def _complete_with_retries(
        self,
        messages: list[dict[str, str]],
        max_tokens: int,
        schema: dict[str, Any] | None,
        deadline: float | None,
        allowance: Allowance | None,
        before: Tally,
    ) -> Completion:
        response_format = self.response_format(schema)
        bound = prompt_bound(messages, response_format)
        worst_tokens = bound + max_tokens
        worst_cost = self.worst_cost(bound, max_tokens)

        def affordable() -> bool:
            if allowance is None:
                return True
            spent_tokens = self.tally.tokens - before.tokens
            spent_cost = self.tally.cost_usd - before.cost_usd
            return (
                spent_tokens + worst_tokens <= allowance.tokens
                and spent_cost + worst_cost <= allowance.cost_usd + 1e-12
            )

        if not affordable():
            raise ModelError("the token or cost budget cannot pay for a model call")
        stop = _retry.StopWhen(
            max_attempts=self.max_attempts,
            max_total_s=self.max_total_s,
            max_wait_s=self.max_wait_s,
            started=self._clock(),
            clock=self._clock,
            deadline=deadline,
            min_attempt_s=MIN_ATTEMPT_S,
            affordable=affordable,
        )
        retrying = Retrying(
            retry=retry_if_exception(_retry.is_transient),
            stop=stop,
            wait=_retry.Backoff(),
            sleep=self._sleep,
            reraise=True,
        )
        try:
            for attempt in retrying:
                with attempt:
                    return self._attempt(messages, max_tokens, response_format, bound, deadline)
        except (openai.APIConnectionError, openai.APIStatusError) as exc:
            if isinstance(exc, openai.APIStatusError) and not _retry.is_transient(exc):
                raise
            why = f"; {stop.why}" if stop.why else ""
            raise ModelError(f"model endpoint failed: {_retry.describe(exc)}{why}") from None
        except RetryError as exc:  # pragma: no cover - reraise=True makes tenacity re-raise the cause
            raise ModelError(f"model endpoint failed: {exc}") from None
        raise ModelError("model endpoint failed: no attempt was made")  # pragma: no cover

    def _attempt(
        self,
        messages: list[dict[str, str]],
        max_tokens: int,
        response_format: dict[str, Any] | None,
        bound: int,
        deadline: float | None,
    ) -> Completion:
        timeout = self.timeout_s
        if deadline is not None:
            timeout = min(timeout, max(MIN_ATTEMPT_S, deadline - self._clock()))
        # The whole attempt, headers to last byte, ends by this time (the HTTP timeout is per gap).
        self._attempt_deadline = self._clock() + timeout
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": self.temperature,
            "timeout": timeout,
        }
        if response_format is not None:
            kwargs["response_format"] = response_format
        self.tally.attempts += 1
        try:
            response = self._openai.chat.completions.create(**kwargs)
        except openai.APITimeoutError:
            self._charge(TokenUsage(prompt_tokens=bound, completion_tokens=max_tokens, reported=False))
            raise
        # Charged even when the answer is unusable: without usage, the server may have billed anything.
        usage = _usage_of(response, bound, max_tokens)
        choices = getattr(response, "choices", None)
        usage = _plausible(usage, bound, max_tokens, _reply_text(choices))
        cost = self._charge(usage)
        if not choices or getattr(choices[0], "message", None) is None:
            # A proxy's HTML page with status 200, or JSON of some other shape.
            raise ModelError("the endpoint answered something that is not a chat completion")
        choice = choices[0]
        return Completion(
            text=choice.message.content or "",
            finish_reason=choice.finish_reason,
            model=getattr(response, "model", None) or self.model,
            format=_format_name(response_format),
            usage=usage,
            cost_usd=cost,
        )

    def _bound_response(self, response: httpx.Response) -> None:
        response.stream = _BoundedStream(response.stream, self._attempt_deadline, self._clock)

    def _charge(self, usage: TokenUsage) -> float:
        cost = self.price.cost(usage.prompt_tokens, usage.completion_tokens)
        self.tally.tokens += usage.total
        self.tally.cost_usd += cost
        return cost


#: The shortest attempt worth starting, in seconds.
MIN_ATTEMPT_S = 0.5
#: The largest reply body read from the endpoint; a chat completion is a few kilobytes.
MAX_REPLY_BYTES = 8 * 1024 * 1024


class _BoundedStream(httpx.SyncByteStream):
    """A response body that ends the call at its deadline or when it grows past the cap."""

    def __init__(self, inner: Any, deadline: float | None, clock: Callable[[], float]) -> None:
        self._inner, self._deadline, self._clock = inner, deadline, clock

    def __iter__(self):
        size = 0
        for chunk in self._inner:
            size += len(chunk)
            if self._deadline is not None and self._clock() > self._deadline:
                raise httpx.ReadTimeout("the reply did not arrive within the call's time budget")
            if size > MAX_REPLY_BYTES:
                raise httpx.ReadError(f"the reply is larger than {MAX_REPLY_BYTES} bytes")
            yield chunk

    def close(self) -> None:
        close = getattr(self._inner, "close", None)
        if close is not None:
            close()


def _format_name(response_format: dict[str, Any] | None) -> Format:
    if response_format is None:
        return "text"
    return "json_object_schema" if "schema" in response_format else response_format["type"]


def _reply_text(choices: Any) -> str:
    try:
        return str(choices[0].message.content or "")
    except (AttributeError, IndexError, TypeError):
        return ""


def _plausible(usage: TokenUsage, bound: int, max_tokens: int, text: str) -> TokenUsage:
    """A server that counts 0 tokens for a prompt it read, or for a reply it wrote, is not
    believed: the missing side is counted locally (its upper bound), so a run is never free."""
    prompt, completion = usage.prompt_tokens, usage.completion_tokens
    if prompt > 0 and (completion > 0 or not text):
        return usage
    if prompt <= 0:
        prompt = bound
    if completion <= 0 and text:
        completion = min(max_tokens, text_bound(text)) if max_tokens > 0 else text_bound(text)
    return TokenUsage(prompt_tokens=prompt, completion_tokens=completion, reported=False)


def _usage_of(response: Any, bound: int, max_tokens: int) -> TokenUsage:
    """The server's usage; the worst case when it gives none (some servers do not)."""
    raw: Any = getattr(response, "usage", None)  # None too: the AttributeError below answers it
    try:
        prompt = int(raw.prompt_tokens)
        completion = int(raw.completion_tokens or 0)
        total = int(getattr(raw, "total_tokens", 0) or 0)
    except (AttributeError, TypeError, ValueError):
        return TokenUsage(prompt_tokens=bound, completion_tokens=max_tokens, reported=False)
    if prompt < 0 or completion < 0:
        return TokenUsage(prompt_tokens=bound, completion_tokens=max_tokens, reported=False)
    # Some servers count extra tokens only in the total: charge whichever is larger.
    completion += max(0, total - prompt - completion)
    return TokenUsage(prompt_tokens=prompt, completion_tokens=completion)
