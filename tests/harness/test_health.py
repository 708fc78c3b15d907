"""Healthy must be earned: positive evidence that the job is fine or that its
slowdown is explained; otherwise inconclusive with the strongest candidates, never a weak healthy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from forensic.harness.failure_graph import default_graph, observe
from forensic.harness.health import check_healthy, slowdown_reported

G = default_graph()


def _sig(name: str, comp: str = "job", kind: str = "job") -> dict:
    return {"name": name, "component": comp, "kind": kind, "detail": name, "values": {}}


def _rec(i: int, tool: str, signals: list[dict], covered: list[str], status: str = "ok") -> dict:
    return {
        "id": f"ev-{i}",
        "tool": tool,
        "status": status,
        "signals": signals,
        "covered": covered,
        "summary": tool,
        "args": {},
    }


def _sweeps(start: int = 2) -> list[dict]:
    tools = [
        "gpu_health",
        "kernel_log",
        "pcie_link",
        "metrics",
        "job_logs",
        "nic_counters",
        "fabric",
        "host_load",
        "host_events",
        "nic_fec",
    ]
    return [_rec(start + i, t, [], ["h"]) for i, t in enumerate(tools)]


@pytest.mark.parametrize(
    "text",
    [
        "MFU down from 51% to 37% since 02:10",
        "step time up 30% after the restart",
        "job is slower than yesterday",
        "used to do 0.9 s per step",
        "tokens/s dropped overnight",
        "slow since launch",
    ],
)
def test_slowdown_reported_reads_the_usual_wordings(text: str) -> None:
    assert slowdown_reported(text)


@pytest.mark.parametrize(
    "text", ["Post-maintenance health check of gpt-13b", "Loss spike at step 61,420", ""]
)
def test_no_slowdown_in_text_that_reports_none(text: str) -> None:
    assert not slowdown_reported(text)


def test_steps_showing_a_slowdown_nothing_explains_do_not_earn_healthy() -> None:
    obs = observe([_rec(1, "job_steps", [_sig("job_slowdown")], ["job"]), *_sweeps()])
    hc = check_healthy(G, obs, "health check")
    assert not hc.earned and "slowdown" in hc.why


def test_a_reported_slowdown_with_no_steps_read_does_not_earn_healthy() -> None:
    obs = observe([_rec(1, "job_steps", [], [], status="no_data"), *_sweeps()])
    assert not check_healthy(G, obs, "MFU dropped since 02:10").earned
    # the same evidence with nothing reported: no symptom, no fault found
    assert check_healthy(G, obs, "post-maintenance check").earned


def test_clean_steps_or_a_reconfiguration_earn_healthy() -> None:
    clean = observe([_rec(1, "job_steps", [_sig("steps_clean")], ["job"]), *_sweeps()])
    assert check_healthy(G, clean, "Is it slower than it should be? MFU 52%").earned
    explained = observe(
        [
            _rec(1, "job_steps", [_sig("job_slowdown")], ["job"]),
            _rec(2, "job_logs", [_sig("job_reconfigured")], ["job"]),
        ]
    )
    hc = check_healthy(G, explained, "step time doubled after the relaunch")
    assert hc.earned and "work per second" in hc.why


def test_a_hang_never_earns_healthy() -> None:
    obs = observe([_rec(1, "job_steps", [_sig("job_hang")], ["job"]), *_sweeps()])
    assert not check_healthy(G, obs, "").earned


def test_coverage_counts_classes_tested_and_not_testable() -> None:
    only_steps = observe([_rec(1, "job_steps", [_sig("steps_clean")], ["job"])])
    partial = check_healthy(G, only_steps, "")
    full = check_healthy(G, observe([_rec(1, "job_steps", [_sig("steps_clean")], ["job"]), *_sweeps()]), "")
    assert partial.untestable and "pcie_downtrain" in partial.untestable
    assert 0.0 < partial.coverage < full.coverage == 1.0


def _bundle(tmp_path: Path, title: str, *, steps: bool) -> Path:
    from tests.conftest import build_bundle

    root = build_bundle(tmp_path / "b", None, steps=steps) or tmp_path / "b"
    inc = json.loads((root / "incident.json").read_text())
    inc["title"] = title
    (root / "incident.json").write_text(json.dumps(inc))
    return root


def test_reported_slowdown_without_step_evidence_is_inconclusive_with_candidates(tmp_path: Path) -> None:
    from forensic.harness.graph import Investigator

    report = Investigator(_bundle(tmp_path, "MFU dropped from 51% to 37% since 02:10", steps=False)).run()
    assert report["status"] == "inconclusive"
    assert report["verdict"]["root_cause"] != "healthy"
    assert report["leading"] and all(v["root_cause"] != "healthy" for v in report["leading"])
    assert report["verdict"]["root_cause"] == report["leading"][0]["root_cause"]
    assert any(n.startswith("not healthy:") for n in report["notes"])


def test_healthy_confidence_reflects_coverage(tmp_path: Path) -> None:
    from forensic.harness.graph import Investigator

    report = Investigator(_bundle(tmp_path, "Post-maintenance health check", steps=True)).run()
    assert report["status"] == "healthy" and report["verdict"]["root_cause"] == "healthy"
    note = next(n for n in report["notes"] if n.startswith("healthy:"))
    assert "fault classes tested" in note
