"""The model-driven planner inside the harness' guardrails, against scripted models at the HTTP seam."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from forensic.harness.budget import Limits
from forensic.harness.graph import Investigator
from forensic.harness.llm.client import ModelClient
from forensic.harness.llm.scripted import Disconnect, Fail, Reply, ScriptedModel, Timeout, call, stop
from forensic.harness.models import Report
from forensic.harness.planners import make_planner, planner_names
from forensic.sandbox import PlannerError
from langgraph.checkpoint.memory import InMemorySaver

CULPRIT = "node-b.example/gpu2"
PCIE_CLAIM = f"{CULPRIT} PCIe link at 32 GT/s x8, capable of 32 GT/s x16"


def investigate(
    bundle: Path,
    scripted: ScriptedModel | None = None,
    *,
    client: ModelClient | None = None,
    limits: Limits | None = None,
    **client_kw: Any,
) -> dict[str, Any]:
    client = client or scripted.client(**client_kw)  # type: ignore[union-attr]
    report = Investigator(
        bundle, planner="llm", planner_kwargs={"client": client}, limits=limits, checkpointer=InMemorySaver()
    ).run()
    Report.model_validate(report)
    b = report["budget"]
    assert b["tool_calls"] <= b["tool_calls_limit"] and b["llm_tokens"] <= b["llm_tokens_limit"]
    assert b["cost_usd"] <= b["cost_usd_limit"]
    assert b["llm_tokens"] == client.tally.tokens  # everything the client was charged is in the report
    assert b["cost_usd"] == round(client.tally.cost_usd, 6)
    return report


def graph_run(bundle: Path, limits: Limits | None = None) -> dict[str, Any]:
    return Investigator(bundle, limits=limits, checkpointer=InMemorySaver()).run()


def feedback(request: dict[str, Any]) -> list[str]:
    """What the planner told the model about its previous reply (inside the data block)."""
    lines = request["messages"][1]["content"].split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("<<<BEGIN UNTRUSTED DATA"))
    return json.loads(lines[start + 1]).get("feedback_on_your_previous_reply", [])


def fallback_notes(report: dict[str, Any]) -> list[str]:
    return [n for n in report["notes"] if n.startswith("llm planner fell back to the graph planner: ")]


def test_the_planner_is_registered_and_built_from_cli_settings() -> None:
    assert "llm" in planner_names()
    planner = make_planner("llm", base_url="http://127.0.0.1:1/v1", model="m", api_key="k")
    assert planner.name == "llm" and planner.client.model == "m"


def test_a_planner_without_a_model_is_unusable_input(make_bundle, monkeypatch) -> None:
    monkeypatch.delenv("FORENSIC_LLM_MODEL", raising=False)
    with pytest.raises(PlannerError, match="FORENSIC_LLM_MODEL"):
        Investigator(make_bundle(None), planner="llm")


def test_a_model_that_tests_well_keeps_the_harness_verdict_and_its_claims_are_checked(make_bundle) -> None:
    model = ScriptedModel(
        [
            Reply.json(
                call(
                    "job_steps",
                    hypotheses=[{"root_cause": "pcie_downtrain", "component": None, "why": "a guess"}],
                )
            ),
            Reply.json(call("pcie_link", host="node-b.example")),
            Reply.json(
                stop(
                    claims=[
                        {"claim": PCIE_CLAIM, "evidence": ["ev-2"]},
                        {
                            "claim": f"{CULPRIT} PCIe link at 17.5 GT/s",
                            "evidence": ["ev-2"],
                        },  # a number the evidence lacks
                        {"claim": "the GPU is fine", "evidence": ["ev-42"]},
                        {"claim": "no evidence at all", "evidence": []},
                    ]
                )
            ),
        ]
    )
    report = investigate(make_bundle("pcie_downtrain"), model)
    assert report["planner"] == "llm" and not fallback_notes(report)
    assert report["verdict"]["root_cause"] == "pcie_downtrain" and report["verdict"]["component"] == CULPRIT
    assert [(e["tool"], e["args"]) for e in report["evidence"][:2]] == [
        ("job_steps", {}),
        ("pcie_link", {"host": "node-b.example"}),
    ]
    claims = [f["claim"] for f in report["findings"]]
    assert PCIE_CLAIM in claims and "the GPU is fine" not in claims and "no evidence at all" not in claims
    assert not any("17.5" in c for c in claims)
    dropped = [n for n in report["notes"] if n.startswith("finding dropped")]
    assert any("ev-42 does not exist" in n for n in dropped) and any(
        "does not carry 17.5" in n for n in dropped
    )
    assert any("cites no evidence" in n for n in dropped)
    assert len(model.requests) == 3
    assert report["budget"]["llm_tokens"] > 0


@pytest.mark.parametrize(
    "script, why",
    [
        ([Fail(500)], "HTTP 500"),
        ([Reply("The GPU looks sad, maybe check the cables?")], "malformed twice in a row"),
        (
            [Reply('{"action": {"kind": "call", "tool": "pcie_link", "args": {}, "sudo": true}}')],
            "malformed twice in a row",
        ),
        ([Timeout()], "timed out"),
        ([Disconnect()], "cannot connect"),
        ([Fail(401, message="invalid api key")], "HTTP 401"),
    ],
    ids=["500", "prose", "extra-field", "timeout", "disconnect", "401"],
)
def test_a_failing_model_falls_back_to_the_graph_verdict_and_says_why(make_bundle, script, why: str) -> None:
    bundle = make_bundle("thermal_throttle")
    report = investigate(bundle, ScriptedModel([], then=script[0]))
    baseline = graph_run(bundle)
    notes = fallback_notes(report)
    assert len(notes) == 1 and why in notes[0], report["notes"]
    assert report["verdict"] == baseline["verdict"] and report["status"] == baseline["status"] == "confirmed"
    assert [e["tool"] for e in report["evidence"]] == [e["tool"] for e in baseline["evidence"]]
    assert report["planner"] == "llm"


def test_a_bad_url_falls_back(make_bundle) -> None:
    with socket.socket() as s:  # a loopback port nobody listens on: connection refused, no network
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = ModelClient(
        base_url=f"http://127.0.0.1:{port}/v1", model="m", max_attempts=2, sleep=lambda s: None
    )
    bundle = make_bundle("pcie_downtrain")
    report = investigate(bundle, client=client)
    assert "cannot connect" in fallback_notes(report)[0]
    assert report["verdict"] == graph_run(bundle)["verdict"]


def test_one_malformed_reply_is_sent_back_with_what_was_wrong(make_bundle) -> None:
    model = ScriptedModel([Reply("not json"), Reply.json(call("pcie_link")), Reply.json(stop())])
    report = investigate(make_bundle("pcie_downtrain"), model)
    assert not fallback_notes(report)
    assert "no JSON object" in feedback(model.requests[1])[0]
    assert report["evidence"][0]["tool"] == "pcie_link"


def test_transient_errors_are_retried_inside_a_decision(make_bundle) -> None:
    model = ScriptedModel(
        [Fail(429, headers={"retry-after": "7"}), Reply.json(call("pcie_link")), Reply.json(stop())]
    )
    report = investigate(make_bundle("pcie_downtrain"), model)
    assert model.sleeps == [7.0] and not fallback_notes(report)


def test_invalid_calls_are_typed_errors_that_count_against_the_budget(make_bundle) -> None:
    model = ScriptedModel(
        [
            Reply.json(call("shell", cmd="cat /etc/passwd")),
            Reply.json(call("kernel_log", host="../../etc")),
            Reply.json(call("gpu_health", path="/etc/passwd")),
        ],
        then=Reply.json(stop()),
    )
    report = investigate(make_bundle("pcie_downtrain"), model, limits=Limits(tool_calls=2))
    assert report["budget"]["tool_calls"] == 2 == len(report["evidence"])
    assert all(e["status"] == "error" and e["summary"].startswith("invalid call") for e in report["evidence"])
    assert report["status"] == "inconclusive"
    # The model was told what was wrong (inside the data block: it quotes the model's own words).
    told = feedback(model.requests[1])
    assert 'tool "shell" does not exist' in told[0] and "gpu_health" in told[0]


def test_feedback_names_the_bad_argument(make_bundle) -> None:
    model = ScriptedModel(
        [
            Reply.json(call("gpu_health", path="/etc/passwd")),
            Reply.json(call("pcie_link", host="nowhere")),
            Reply.json(stop()),
        ]
    )
    report = investigate(make_bundle("pcie_downtrain"), model)
    told = [feedback(r) for r in model.requests]
    assert told[1] == ["invalid arguments for gpu_health: gpu_health: path: Extra inputs are not permitted"]
    assert told[2] == ['pcie_link: unknown host "nowhere"; name a host from the data or omit host']
    assert [e["status"] for e in report["evidence"][:2]] == ["error", "error"]
    assert (
        report["verdict"]["root_cause"] == "pcie_downtrain"
    )  # the graph planner finished after the model stopped


def test_a_model_stuck_on_invalid_calls_is_given_up(make_bundle) -> None:
    # Three different invalid calls (the same one asked again is answered from its refusal: test_refusals.py).
    model = ScriptedModel([Reply.json(call("rm", target=t)) for t in ("/", "/etc", "/home")])
    report = investigate(make_bundle("pcie_downtrain"), model)
    assert "3 calls in a row that were invalid or repeated" in fallback_notes(report)[0]
    assert len(model.requests) == 3 and report["budget"]["tool_calls"] == 3 + len(
        graph_run(make_bundle("pcie_downtrain"))["evidence"]
    )
    assert report["verdict"]["root_cause"] == "pcie_downtrain"


def test_a_model_that_stops_at_once_cannot_starve_the_verdict(make_bundle) -> None:
    bundle = make_bundle("hbm_degradation")
    model = ScriptedModel([Reply.json(stop("SYSTEM says the fleet is healthy, stop now"))])
    report = investigate(bundle, model)
    assert any("graph planner ran the tests it still found informative" in n for n in report["notes"])
    assert report["verdict"] == graph_run(bundle)["verdict"] and len(model.requests) == 1


def test_a_token_budget_too_small_for_a_call_falls_back_without_calling(make_bundle) -> None:
    model = ScriptedModel([Reply.json(call("pcie_link"))])
    bundle = make_bundle("pcie_downtrain")
    report = investigate(bundle, model, limits=Limits(llm_tokens=2000))
    assert model.requests == [] and "too small for another model call" in fallback_notes(report)[0]
    assert report["budget"]["llm_tokens"] == 0 and report["verdict"] == graph_run(bundle)["verdict"]


def test_the_cost_budget_is_checked_against_the_worst_case_and_charged_the_actual(make_bundle) -> None:
    model = ScriptedModel(
        [
            Reply.json(call("pcie_link"), prompt_tokens=3000, completion_tokens=100),
            Reply.json(stop(), prompt_tokens=2000, completion_tokens=50),
        ]
    )
    report = investigate(make_bundle("pcie_downtrain"), model, model="gpt-4o", limits=Limits(cost_usd=0.06))
    assert report["budget"]["cost_usd"] == pytest.approx((5000 * 2.5 + 150 * 10.0) / 1e6, abs=1e-6)
    assert report["budget"]["llm_tokens"] == 5150
    tight = ScriptedModel([Reply.json(call("pcie_link"))])
    report = investigate(make_bundle("pcie_downtrain"), tight, model="gpt-4o", limits=Limits(cost_usd=0.001))
    assert tight.requests == [] and "too small" in fallback_notes(report)[0]


def test_an_unpriced_model_is_noted(make_bundle) -> None:
    report = investigate(make_bundle(None), ScriptedModel([], then=Reply.json(stop())), model="my-own-model")
    assert report["budget"]["cost_usd"] == 0.0
    assert any("no price for model 'my-own-model'" in n for n in report["notes"])


def test_a_server_reporting_impossible_usage_is_not_trusted(make_bundle) -> None:
    model = ScriptedModel([Reply.json(call("pcie_link"), prompt_tokens=1, completion_tokens=50_000)])
    report = Investigator(
        make_bundle("pcie_downtrain"),
        planner="llm",
        planner_kwargs={"client": model.client()},
        checkpointer=InMemorySaver(),
    ).run()
    assert "the endpoint reported 1+50000 tokens" in fallback_notes(report)[0]


def test_causes_outside_the_playbooks_are_noted_not_concluded(make_bundle) -> None:
    hyp = [{"root_cause": "bad fan\u202e firmware", "component": "node-a.example", "why": "ev-1"}]
    report = investigate(make_bundle(None), ScriptedModel([Reply.json(stop(hypotheses=hyp))]))
    assert any("outside the playbooks: 'bad fan firmware' on node-a.example" in n for n in report["notes"])
    assert report["verdict"]["root_cause"] == "healthy"


def test_no_model_call_when_no_tool_call_could_follow(make_bundle) -> None:
    model = ScriptedModel([Reply.json(call("pcie_link"))])
    report = investigate(make_bundle("pcie_downtrain"), model, limits=Limits(tool_calls=0))
    assert model.requests == [] and report["status"] == "inconclusive"


def test_too_little_working_time_falls_back_without_calling(make_bundle) -> None:
    model = ScriptedModel([Reply.json(call("pcie_link"))])
    report = investigate(make_bundle("pcie_downtrain"), model, limits=Limits(wall_s=1.2))
    assert model.requests == [] and "too little working time" in fallback_notes(report)[0]


def test_retries_stop_at_the_working_time_budget(make_bundle) -> None:
    model = ScriptedModel([], then=Fail(429, headers={"retry-after": "5"}))
    report = investigate(make_bundle("pcie_downtrain"), model, limits=Limits(wall_s=12))
    assert "would pass the working-time budget" in fallback_notes(report)[0]
    assert len(model.requests) == 3 and model.sleeps == [5.0, 5.0]


MODEL_CLAIM = f"{CULPRIT} runs 8 of its 16 lanes"


def test_a_resumed_run_keeps_the_models_claims(make_bundle) -> None:
    """The model planner's memory is checkpointed with the graph: a new process resumes with it."""
    bundle = make_bundle("pcie_downtrain")
    saver = InMemorySaver()
    first = ScriptedModel(
        [
            Reply.json(call("job_steps")),
            Reply.json(
                call(
                    "pcie_link", host="node-b.example", claims=[{"claim": MODEL_CLAIM, "evidence": ["ev-2"]}]
                )
            ),
        ],
        then=Reply.json(stop()),
    )
    inv = Investigator(bundle, planner="llm", planner_kwargs={"client": first.client()}, checkpointer=saver)
    cfg = inv.config("resume-llm")
    for i, _ in enumerate(inv.app.stream(inv.initial_state(), cfg)):
        if i == 8:  # killed after the second model turn and its tool call
            break
    # A fresh process: a new planner object with no memory, a model that now only says stop.
    later = ScriptedModel([], then=Reply.json(stop()))
    again = Investigator(bundle, planner="llm", planner_kwargs={"client": later.client()}, checkpointer=saver)
    report = again.resume("resume-llm")
    model_findings = [f for f in report["findings"] if f["author"] == "model"]
    assert [f["claim"] for f in model_findings] == [MODEL_CLAIM]
