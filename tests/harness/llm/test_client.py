"""The model client: one retry layer, retry-after honoured, accounting, structured-output negotiation.

Every test drives the real openai client through a scripted server (``httpx.MockTransport``) and
a fake clock, so retries are checked without a network and without sleeping.
"""

from __future__ import annotations

import email.utils

import pytest
from forensic.harness.llm.client import Allowance, ModelClient
from forensic.harness.llm.prices import load_prices
from forensic.harness.llm.scripted import Disconnect, Fail, Raw, Reply, ScriptedModel, Timeout
from forensic.harness.llm.tokens import prompt_bound
from forensic.sandbox.errors import ModelError

MSGS = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello"}]
SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}}


def test_openai_retries_are_off_and_the_timeout_is_set() -> None:
    client = ScriptedModel([]).client(timeout_s=7.5)
    assert client._openai.max_retries == 0
    assert client._openai.timeout == 7.5


def test_429_retry_after_is_honoured_then_the_reply_comes() -> None:
    model = ScriptedModel(
        [
            Fail(429, headers={"retry-after": "3"}),
            Fail(503, headers={"retry-after-ms": "1500"}),
            Reply("ok", prompt_tokens=10, completion_tokens=2),
        ]
    )
    client = model.client()
    done = client.complete(MSGS, max_tokens=50)
    assert done.text == "ok" and len(model.requests) == 3
    assert model.sleeps == [3.0, 1.5]
    assert client.tally.tokens == 12 and client.tally.attempts == 3


def test_retry_after_as_an_http_date(monkeypatch) -> None:
    import time

    when = email.utils.formatdate(time.time() + 4, usegmt=True)
    model = ScriptedModel([Fail(429, headers={"retry-after": when}), Reply("ok")])
    model.client().complete(MSGS, max_tokens=50)
    assert len(model.sleeps) == 1 and 2.0 <= model.sleeps[0] <= 4.0


def test_retries_stop_after_max_attempts_with_a_model_error() -> None:
    model = ScriptedModel([], then=Fail(500))
    client = model.client(max_attempts=3)
    with pytest.raises(ModelError, match=r"HTTP 500.*gave up after 3 attempts"):
        client.complete(MSGS, max_tokens=50)
    assert len(model.requests) == 3 and len(model.sleeps) == 2
    assert client.tally.tokens == 0  # a refused request generated nothing


def test_a_retry_after_longer_than_we_wait_stops_instead_of_coming_back_early() -> None:
    model = ScriptedModel([Fail(429, headers={"retry-after": "600"}), Reply("never reached")])
    with pytest.raises(ModelError, match="asked to wait 600 s"):
        model.client(max_wait_s=30).complete(MSGS, max_tokens=50)
    assert len(model.requests) == 1 and model.sleeps == []


def test_total_retry_time_is_bounded() -> None:
    model = ScriptedModel([], then=Fail(429, headers={"retry-after": "20"}))
    with pytest.raises(ModelError, match="in all"):
        model.client(max_attempts=100, max_total_s=50).complete(MSGS, max_tokens=50)
    assert sum(model.sleeps) <= 50 and len(model.requests) == 3


def test_a_deadline_stops_retries() -> None:
    model = ScriptedModel([], then=Fail(502, headers={"retry-after": "5"}))
    client = model.client(max_attempts=10)
    with pytest.raises(ModelError, match="working-time budget"):
        client.complete(MSGS, max_tokens=50, within_s=8)
    assert len(model.requests) == 2 and model.sleeps == [5.0]  # a second wait would pass the deadline


def test_timeouts_are_retried_and_charged_their_worst_case() -> None:
    model = ScriptedModel([Timeout(), Reply("ok", prompt_tokens=5, completion_tokens=1)])
    client = model.client()
    client.complete(MSGS, max_tokens=40)
    worst = prompt_bound(MSGS, client.response_format(None)) + 40
    assert client.tally.tokens == worst + 6
    assert len(model.sleeps) == 1


def test_retries_stop_when_the_allowance_cannot_pay_for_another_timeout() -> None:
    model = ScriptedModel([], then=Timeout())
    client = model.client(max_attempts=10)
    worst = prompt_bound(MSGS) + 40
    with pytest.raises(ModelError, match="cannot pay for another attempt"):
        client.complete(MSGS, max_tokens=40, allowance=Allowance(tokens=2 * worst + 1, cost_usd=1.0))
    assert len(model.requests) == 2 and client.tally.tokens == 2 * worst <= 2 * worst + 1


def test_a_call_the_allowance_cannot_pay_for_is_not_sent() -> None:
    model = ScriptedModel([Reply("x")])
    with pytest.raises(ModelError, match="cannot pay"):
        model.client().complete(MSGS, max_tokens=40, allowance=Allowance(tokens=10, cost_usd=1.0))
    assert model.requests == []


def test_connection_errors_are_retried_then_reported() -> None:
    model = ScriptedModel([], then=Disconnect())
    with pytest.raises(ModelError, match="cannot connect"):
        model.client(max_attempts=2).complete(MSGS, max_tokens=10)
    assert len(model.requests) == 2


@pytest.mark.parametrize("status", [401, 403, 404])
def test_client_errors_are_not_retried(status: int) -> None:
    model = ScriptedModel([Fail(status), Reply("never")])
    with pytest.raises(ModelError, match=f"HTTP {status}"):
        model.client().complete(MSGS, max_tokens=10)
    assert len(model.requests) == 1 and model.sleeps == []


def test_an_html_page_with_status_200_is_a_model_error() -> None:
    model = ScriptedModel([Raw(200, "<html>gateway</html>")])
    with pytest.raises(ModelError, match="not a chat completion"):
        model.client().complete(MSGS, max_tokens=10)


def test_structured_output_steps_down_once_per_client() -> None:
    # llama-cpp-python answers 500 to an unknown response_format: that is a refusal, not transient.
    model = ScriptedModel(
        [
            Fail(400, message="json_schema unsupported"),
            Fail(500, message="body.response_format.type: Input should be 'text' or 'json_object'"),
            Reply('{"a": "x"}'),
            Reply('{"a": "y"}'),
        ]
    )
    client = model.client()
    assert client.complete(MSGS, max_tokens=20, schema=SCHEMA).format == "json_object"
    assert [r.get("response_format", {}).get("type") for r in model.requests] == [
        "json_schema",
        "json_object",
        "json_object",
    ]
    assert (
        "schema" in model.requests[1]["response_format"]
        and "schema" not in model.requests[2]["response_format"]
    )
    assert model.sleeps == []
    client.complete(MSGS, max_tokens=20, schema=SCHEMA)
    assert model.requests[-1]["response_format"] == {"type": "json_object"}


def test_a_server_refusing_every_format_ends_in_plain_text_then_an_error() -> None:
    model = ScriptedModel([], then=Fail(400, message="bad request"))
    with pytest.raises(ModelError, match="refused the request: HTTP 400"):
        model.client().complete(MSGS, max_tokens=20, schema=SCHEMA)
    assert [("response_format" in r) for r in model.requests] == [True, True, True, False]


def test_cost_from_the_price_table_and_the_longest_prefix() -> None:
    model = ScriptedModel([Reply("ok", prompt_tokens=1000, completion_tokens=100)])
    client = model.client(model="gpt-4o-mini-2024-07-18")
    assert client.priced and client.price == load_prices().models["gpt-4o-mini"]
    done = client.complete(MSGS, max_tokens=200)
    assert done.cost_usd == pytest.approx((1000 * 0.15 + 100 * 0.60) / 1e6)
    assert client.tally.cost_usd == pytest.approx(done.cost_usd)


def test_an_unknown_model_costs_nothing_and_says_it_is_unpriced() -> None:
    client = ScriptedModel([Reply("ok", prompt_tokens=1000, completion_tokens=100)]).client(
        model="my-local-llama"
    )
    assert not client.priced
    assert client.complete(MSGS, max_tokens=200).cost_usd == 0.0


def test_missing_usage_is_charged_the_worst_case() -> None:
    model = ScriptedModel([Reply("ok", usage=False)])
    client = model.client()
    done = client.complete(MSGS, max_tokens=77)
    assert not done.usage.reported
    assert client.tally.tokens == prompt_bound(MSGS) + 77


def test_settings_come_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("FORENSIC_LLM_BASE_URL", "http://127.0.0.1:1/v1")
    monkeypatch.setenv("FORENSIC_LLM_MODEL", "env-model")
    monkeypatch.setenv("FORENSIC_LLM_API_KEY", "env-key")
    client = ModelClient()
    assert (client.base_url, client.model, client._openai.api_key) == (
        "http://127.0.0.1:1/v1",
        "env-model",
        "env-key",
    )
    explicit = ModelClient(base_url="http://127.0.0.1:2/v1", model="m", api_key="k")
    assert (explicit.base_url, explicit.model) == ("http://127.0.0.1:2/v1", "m")


def test_no_model_is_a_model_error(monkeypatch) -> None:
    monkeypatch.delenv("FORENSIC_LLM_MODEL", raising=False)
    with pytest.raises(ModelError, match="FORENSIC_LLM_MODEL"):
        ModelClient(base_url="http://127.0.0.1:1/v1")
