"""End-to-end investigations of hand-written bundles: verdicts, budgets, checkpoints, citations."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from forensic.harness.budget import Limits
from forensic.harness.graph import Investigator
from forensic.harness.models import Report
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

FAULTS = ["pcie_downtrain", "thermal_throttle", "power_throttle", "hbm_degradation", "gpu_fell_off_bus"]


@pytest.mark.parametrize("fault", FAULTS)
def test_fault_is_named_on_the_right_component(make_bundle, fault: str) -> None:
    report = Investigator(make_bundle(fault), checkpointer=InMemorySaver()).run()
    Report.model_validate(report)
    assert report["schema"] == "forensic.report/v1"
    assert report["verdict"]["root_cause"] == fault
    assert report["verdict"]["component"] == "node-b.example/gpu2"
    assert report["status"] == "confirmed"
    assert report["findings"] and all(f["verified"] for f in report["findings"])
    ids = {e["id"] for e in report["evidence"]}
    assert all(set(f["evidence"]) <= ids for f in report["findings"])
    assert report["proposals"] and all(
        p["status"] == "pending_approval" and len(p["content_hash"]) == 64 for p in report["proposals"]
    )
    assert report["chain"][-1] == fault and len(report["chain"]) == 3


def test_healthy_fleet_with_decoys(make_bundle) -> None:
    report = Investigator(make_bundle(None), checkpointer=InMemorySaver()).run()
    assert report["status"] == "healthy"
    assert report["verdict"] == {
        "root_cause": "healthy",
        "component": None,
        "confidence": report["verdict"]["confidence"],
    }
    assert report["proposals"] == []


def test_budget_exhaustion_gives_an_inconclusive_report(make_bundle) -> None:
    inv = Investigator(
        make_bundle("thermal_throttle"), limits=Limits(tool_calls=1), checkpointer=InMemorySaver()
    )
    report = inv.run()
    assert report["status"] == "inconclusive"
    assert report["budget"]["tool_calls"] == 1 == report["budget"]["tool_calls_limit"]
    assert any("budget exhausted (tool_calls)" in n for n in report["notes"])
    assert len(report["evidence"]) == 1


def test_zero_budget_runs_no_tool(make_bundle) -> None:
    report = Investigator(
        make_bundle("pcie_downtrain"), limits=Limits(tool_calls=0), checkpointer=InMemorySaver()
    ).run()
    assert report["status"] == "inconclusive" and report["evidence"] == []


def test_wall_time_budget(make_bundle) -> None:
    report = Investigator(
        make_bundle("pcie_downtrain"), limits=Limits(wall_s=1e-9), checkpointer=InMemorySaver()
    ).run()
    assert report["status"] == "inconclusive"
    assert any("wall_s" in n for n in report["notes"])


def test_recursion_limit_is_always_set(make_bundle) -> None:
    inv = Investigator(make_bundle(None), limits=Limits(tool_calls=7), checkpointer=InMemorySaver())
    cfg = inv.config()
    assert cfg["recursion_limit"] == inv.recursion_limit() > 3 * 7


def test_resume_from_a_sqlite_checkpoint(make_bundle, tmp_path: Path) -> None:
    """A run interrupted after a few steps resumes from its last checkpoint to the same verdict."""
    bundle = make_bundle("thermal_throttle")
    db = tmp_path / "cp.sqlite"
    saver = SqliteSaver(sqlite3.connect(str(db), check_same_thread=False))
    inv = Investigator(bundle, checkpointer=saver)
    cfg = inv.config("thread-1")
    # Run only the first steps, as if the process had been killed mid-investigation.
    for i, _ in enumerate(inv.app.stream(inv.initial_state(), cfg)):
        if i == 4:
            break
    mid = inv.app.get_state(cfg)
    assert mid.next and mid.values["records"]
    done_before = len(mid.values["records"])

    fresh = Investigator(bundle, checkpointer=SqliteSaver(sqlite3.connect(str(db), check_same_thread=False)))
    report = fresh.resume("thread-1")
    assert report["verdict"]["root_cause"] == "thermal_throttle"
    ids = [e["id"] for e in report["evidence"]]
    assert ids == [f"ev-{i}" for i in range(1, len(ids) + 1)] and len(ids) >= done_before
    baseline = Investigator(bundle, checkpointer=InMemorySaver()).run()
    assert [e["tool"] for e in report["evidence"]] == [e["tool"] for e in baseline["evidence"]]


def test_resume_of_unknown_thread_is_a_clear_error(make_bundle) -> None:
    from forensic.sandbox import ForensicError

    with pytest.raises(ForensicError, match="no checkpoint"):
        Investigator(make_bundle(None), checkpointer=InMemorySaver()).resume("nope")


def test_approval_gate_interrupts_and_nothing_is_approved_by_default(make_bundle) -> None:
    inv = Investigator(make_bundle("pcie_downtrain"), checkpointer=InMemorySaver())
    cfg = inv.config("t-approve")
    inv.app.invoke(inv.initial_state(await_approval=True), cfg)
    snap = inv.app.get_state(cfg)
    assert snap.next == ("approval_gate",)
    pending = [i for t in snap.tasks for i in t.interrupts]
    assert pending and pending[0].value["proposals"]
    assert all(p["status"] == "pending_approval" for p in snap.values["report"]["proposals"])


def test_a_crashing_tool_is_recorded_and_the_run_goes_on(make_bundle, monkeypatch) -> None:
    from forensic.tools import get_tool

    tool = get_tool("gpu_health")
    monkeypatch.setattr(type(tool), "run", lambda self, ctx, args: 1 / 0)
    report = Investigator(make_bundle("pcie_downtrain"), checkpointer=InMemorySaver()).run()
    crashed = [e for e in report["evidence"] if e["tool"] == "gpu_health"]
    assert crashed and crashed[0]["status"] == "error" and "ZeroDivisionError" in crashed[0]["summary"]
    assert report["verdict"]["root_cause"] == "pcie_downtrain"


def test_report_json_is_stable_and_serialisable(make_bundle) -> None:
    report = Investigator(make_bundle("hbm_degradation"), checkpointer=InMemorySaver()).run()
    text = json.dumps(report)
    assert json.loads(text)["incident"] == "unit-hbm_degradation"
    for key in (
        "schema",
        "incident",
        "status",
        "verdict",
        "alternatives",
        "chain",
        "findings",
        "evidence",
        "proposals",
        "budget",
        "planner",
    ):
        assert key in report


def test_a_thread_id_run_again_starts_afresh_with_one_ledger(make_bundle) -> None:
    """The state's lists grow by reducers; a second run on a saved thread replaces them, so the
    two investigations never share a ledger, a trace or a decision list."""
    inv = Investigator(make_bundle("pcie_downtrain"), checkpointer=InMemorySaver())
    first = inv.run(thread_id="again")
    second = inv.run(thread_id="again")
    assert [r["id"] for r in second["evidence"]] == [r["id"] for r in first["evidence"]]
    values = inv.driver.values("again")
    assert len(values["records"]) == len(first["evidence"])
    assert len(values["trace"]) == len(values["records"])  # one assessment per tool call
    assert second["verdict"] == first["verdict"]


def test_nodes_return_only_what_they_add(make_bundle) -> None:
    """Each run_tool step's update holds its one new record; the reducer appends it."""
    inv = Investigator(make_bundle("pcie_downtrain"), checkpointer=InMemorySaver())
    added = [
        update["records"]
        for node, phase, update in inv.driver.advance("steps")
        if node == "run_tool" and phase == "end"
    ]
    assert added and all(len(a) == 1 for a in added)
    assert [a[0]["id"] for a in added] == [r["id"] for r in inv.driver.values("steps")["records"]]
    assert inv.driver.position("steps") == "finished"
    assert list(inv.driver.advance("steps")) == []  # a finished thread is left as it is
