"""The mechanisms that keep a verdict honest on incidents nobody
here wrote. Each test states the expert rule and would fail on the mechanism before the fix."""

from __future__ import annotations

from forensic.harness.failure_graph import beliefs, default_graph, observe, score
from forensic.harness.planners.base import PlannerView, Stop, ToolCall
from forensic.harness.planners.graph_planner import GraphPlanner
from forensic.tools.gpu_health import Reading, assess

G = default_graph()


def _sig(name: str, comp: str, kind: str = "gpu") -> dict:
    return {"name": name, "component": comp, "kind": kind, "detail": f"{name} on {comp}", "values": {}}


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


# -- 1. normal power management is not a fault ----------------------------------------------------


def test_sw_power_cap_well_under_the_limit_is_not_power_throttling() -> None:
    # At its software cap, drawing 420 W of 700 W, clocks below the peers': how GPUs run.
    r = Reading(
        host="h", index=1, in_job=True, power_w=420.0, limit_w=700.0, sm=1700.0, sm_max=1980.0, reasons=0x4
    )
    assert "power_slowdown" not in {s.name for s in assess(r, peer_median=1980.0)}
    # ... and with no peers to compare against, the cap bit alone says nothing either.
    at_cap = Reading(
        host="h", index=1, in_job=True, power_w=699.0, limit_w=700.0, sm=1500.0, sm_max=1980.0, reasons=0x4
    )
    assert "power_slowdown" not in {s.name for s in assess(at_cap, peer_median=None)}
    # Held at the cap of its default limit, even far below its peers, is no power fault by itself:
    # it says the deficit (power_cap_clocks_low), which counts only with a straggler that explains.
    deep = {s.name for s in assess(at_cap, peer_median=1980.0)}
    assert "power_slowdown" not in deep and "power_cap_clocks_low" in deep
    # ... a few per cent below the peers at that cap is chip spread: not even that, and not a
    # clock reduction either (the cap is how it runs; clocks_reduced would feed clock faults).
    spread = Reading(
        host="h", index=1, in_job=True, power_w=693.0, limit_w=700.0, sm=1803.0, sm_max=1980.0, reasons=0x4
    )
    assert {s.name for s in assess(spread, peer_median=1955.0)} == set()
    # The same clock with no reason bit (or a thermal one) is a clock reduction to explain.
    spread.reasons = 0
    assert {s.name for s in assess(spread, peer_median=1955.0)} == {"clocks_reduced"}
    # A limit lowered below the board's default (or the peers') is a fault; the power brake always is.
    lowered = Reading(
        host="h", index=1, in_job=True, power_w=349.0, limit_w=350.0, sm=1134.0, sm_max=1980.0, reasons=0x4
    )
    # Nothing (no default limit, no peers' limit) says it was lowered:
    assert "power_slowdown" not in {s.name for s in assess(lowered, peer_median=1950.0)}
    assert "power_slowdown" in {s.name for s in assess(lowered, peer_median=1950.0, peer_limit=700.0)}
    lowered.default_limit_w = 700.0
    assert "power_slowdown" in {s.name for s in assess(lowered, peer_median=None)}
    brake = Reading(
        host="h", index=1, in_job=True, power_w=300.0, limit_w=700.0, sm=1200.0, sm_max=1980.0, reasons=0x80
    )
    assert "power_slowdown" in {s.name for s in assess(brake, peer_median=None)}


# -- 3. no confirmation without a causal tie ------------------------------------------------------


def test_a_throttled_gpu_not_tied_to_the_slowdown_is_probable_not_confirmed() -> None:
    comp = "h/gpu1"
    obs = observe(
        [_rec(1, "gpu_health", [_sig("power_slowdown", comp), _sig("clocks_reduced", comp)], [comp])]
    )
    h = score(G.root_causes["power_throttle"], comp, obs)
    assert h.required_met and not h.impact_shown and not h.confirmed
    tied = observe(
        [
            _rec(1, "gpu_health", [_sig("power_slowdown", comp), _sig("clocks_reduced", comp)], [comp]),
            _rec(2, "job_steps", [_sig("straggler", comp)], [comp]),
        ]
    )
    assert score(G.root_causes["power_throttle"], comp, tied).confirmed


def test_a_host_whose_ranks_straggle_together_ties_its_gpu() -> None:
    comp = "h/gpu1"
    obs = observe(
        [
            _rec(1, "gpu_health", [_sig("thermal_slowdown", comp)], [comp]),
            _rec(2, "job_steps", [_sig("host_stragglers", "h", "host")], ["h", comp]),
        ]
    )
    assert score(G.root_causes["thermal_throttle"], comp, obs).confirmed


# -- 2. premature closure -------------------------------------------------------------------------


def _thermal_and_an_xid_burst() -> list[dict]:
    a, b = "h/gpu1", "k/gpu5"
    return [
        _rec(1, "job_steps", [_sig("straggler", a)], [a, b]),
        _rec(2, "gpu_health", [_sig("thermal_slowdown", a), _sig("clocks_reduced", a)], [a, b]),
        _rec(3, "kernel_log", [_sig("xid_memory", b)], [a, b]),
    ]


def test_an_in_window_fault_the_verdict_does_not_explain_blocks_confirmation() -> None:
    hyps = beliefs(G, observe(_thermal_and_an_xid_burst()))
    top = hyps[0]
    assert (top.root_cause, top.component) == ("thermal_throttle", "h/gpu1")
    assert top.unexplained == ["hbm_degradation@k/gpu5"] and not top.confirmed


def test_a_fault_with_no_tie_is_ruled_out_and_does_not_block() -> None:
    a, b = "h/gpu1", "k/gpu5"
    recs = [
        _rec(1, "job_steps", [_sig("straggler", a)], [a, b]),
        _rec(2, "gpu_health", [_sig("thermal_slowdown", a), _sig("power_slowdown", b)], [a, b]),
    ]
    top = beliefs(G, observe(recs))[0]
    # power on gpu5 is real but nothing ties it to the slowdown: ruled out as the cause
    assert top.component == a and top.unexplained == [] and top.confirmed


def _view(records: list[dict], executed: list[tuple[str, str | None]]) -> PlannerView:
    obs = observe(records)
    return PlannerView(
        graph=G,
        observation=obs,
        hypotheses=beliefs(G, obs),
        executed=executed,
        tools={"job_steps": 1.0, "gpu_health": 1.0, "kernel_log": 1.0, "metrics": 1.0, "pcie_link": 1.0},
        host_scoped=["gpu_health", "kernel_log", "metrics", "pcie_link"],
        hosts=["h", "k"],
        records=records,
    )


def test_the_planner_does_not_stop_on_a_leader_with_an_unexplained_fault() -> None:
    recs = _thermal_and_an_xid_burst()
    d = GraphPlanner().decide(_view(recs, [("job_steps", None), ("gpu_health", "h"), ("kernel_log", None)]))
    assert isinstance(d, ToolCall)


def test_the_planner_runs_a_refuting_test_before_stopping() -> None:
    comp = "h/gpu1"
    # Thermal confirmed and tied; metrics (which carries no refuting test) not needed; but pcie_link
    # is not a refuting test of thermal either: with gpu_health done, nothing is left to refute.
    recs = [
        _rec(1, "job_steps", [_sig("straggler", comp)], [comp]),
        _rec(
            2,
            "gpu_health",
            [_sig("thermal_slowdown", comp), _sig("clocks_reduced", comp), _sig("gpu_hot", comp)],
            [comp],
        ),
        _rec(3, "metrics", [_sig("metric_thermal_violation", comp), _sig("metric_clock_low", comp)], [comp]),
    ]
    view = _view(recs, [("job_steps", None), ("gpu_health", "h"), ("metrics", "h")])
    assert view.hypotheses[0].confirmed and view.hypotheses[0].probability >= 0.9
    assert isinstance(GraphPlanner().decide(view), Stop)
    # Power confirmed from metrics alone: gpu_health could refute it (a thermal bit) and has not run.
    precs = [
        _rec(1, "job_steps", [_sig("straggler", comp)], [comp]),
        _rec(2, "metrics", [_sig("metric_power_violation", comp), _sig("metric_clock_low", comp)], [comp]),
    ]
    pview = _view(precs, [("job_steps", None), ("metrics", "h")])
    top = pview.hypotheses[0]
    assert top.root_cause == "power_throttle" and top.confirmed
    d = GraphPlanner._refuting_test(pview, top, set(pview.executed))
    assert isinstance(d, ToolCall) and d.tool == "gpu_health" and d.args == {"host": "h"}
    # Dominant enough to stop: the planner still runs the refuting test first.
    forced = pview.model_copy(
        update={"hypotheses": [top.model_copy(update={"probability": 0.95}), *pview.hypotheses[1:]]}
    )
    d = GraphPlanner().decide(forced)
    assert isinstance(d, ToolCall) and d.tool == "gpu_health" and d.args == {"host": "h"}


# -- absence of evidence is not health -------------------------------------------


def test_a_tool_that_read_nothing_is_not_evidence_of_absence() -> None:
    from forensic.harness.failure_graph import RootCauseSpec

    # A job-wide test whose absence weighs against the cause (match "job" counts every run of the tool).
    rc = RootCauseSpec(
        id="input_pipeline_stall",
        title="t",
        kinds=["job"],
        mechanisms=["data_starvation"],
        prior=0.05,
        tests=[
            {"tool": "job_steps", "signal": "slowdown_in_gaps", "weight": 5.0, "absent": -3.0, "match": "job"}
        ],
    )
    nothing = score(rc, "job", observe([]))
    no_data = score(rc, "job", observe([_rec(1, "job_steps", [], [], status="no_data")]))
    assert no_data.score == nothing.score
    looked = score(rc, "job", observe([_rec(1, "job_steps", [], ["job"])]))
    assert looked.score < nothing.score  # a tool that read the job and saw no gaps is evidence


def test_garbage_evidence_is_inconclusive_not_healthy(tmp_path) -> None:
    from pathlib import Path

    from forensic.harness.graph import Investigator
    from forensic.sandbox import Bundle
    from forensic.tools import ToolContext, get_tool

    from tests.conftest import build_bundle

    root = build_bundle(Path(tmp_path) / "b", None) or Path(tmp_path) / "b"
    for p in sorted(root.rglob("*")):
        if p.is_file() and p.name != "incident.json":
            p.write_text("garbage {{{ not a thing\n\x00\x01\n")
    # a kernel log with no kernel line in it says nothing, rather than "no fault"
    res = get_tool("kernel_log")(ToolContext(Bundle(root)), {})
    assert res.status == "error" and not res.covered
    report = Investigator(root).run()
    assert report["status"] == "inconclusive"
    assert report["verdict"]["confidence"] <= G.root_causes["healthy"].prior


# -- 4. the part that holds the fault ---------------------------------------------------------


def test_every_gpu_of_one_host_power_braked_names_the_host(tmp_path) -> None:
    import json
    from pathlib import Path

    from forensic.harness.graph import Investigator
    from forensic.sandbox import Bundle
    from forensic.tools import ToolContext, get_tool

    from tests.conftest import build_bundle

    root = build_bundle(Path(tmp_path) / "b", None) or Path(tmp_path) / "b"
    p = root / "nodes" / "node-a.example" / "nvml.json"
    doc = json.loads(p.read_text())
    for d in doc["devices"]:
        d.update(
            {
                "nvmlDeviceGetCurrentClocksEventReasons": 0x80,
                "nvmlDeviceGetClockInfo": {"sm": 1300, "mem": 2619},
            }
        )
    p.write_text(json.dumps(doc))
    # node-a's four ranks (0-3) compute 20% slower from step 40 on: the host's ranks straggle together
    import numpy as np

    from tests.conftest import START

    rng = np.random.default_rng(3)
    rows = ["step,rank,start_unix,duration_s,compute_s"]
    for step in range(120):
        comp = 1.0 + rng.normal(0, 0.01, 8)
        if step >= 40:
            comp[:4] *= 1.2
        for r in range(8):
            rows.append(f"{step},{r},{START + 45.0 * step:.3f},{comp.max() + 0.2:.4f},{comp[r]:.4f}")
    (root / "job" / "steps.csv").write_text("\n".join(rows) + "\n")
    res = get_tool("gpu_health")(ToolContext(Bundle(root)), {})
    assert [s.component for s in res.signals if s.name == "host_power_slowdown"] == ["node-a.example"]
    assert len([s for s in res.signals if s.name == "power_slowdown"]) == 4  # every part is still reported
    report = Investigator(root).run()
    assert (report["verdict"]["root_cause"], report["verdict"]["component"]) == (
        "power_throttle",
        "node-a.example",
    )
    assert report["status"] == "confirmed"  # tied: the host's ranks straggle together


def test_one_braked_gpu_still_names_the_gpu() -> None:
    comp = "h/gpu1"
    recs = [
        _rec(1, "job_steps", [_sig("straggler", comp)], [comp, "h/gpu0"]),
        _rec(2, "gpu_health", [_sig("power_slowdown", comp), _sig("clocks_reduced", comp)], [comp, "h/gpu0"]),
    ]
    top = beliefs(G, observe(recs))[0]
    assert (top.root_cause, top.component, top.confirmed) == ("power_throttle", comp, True)


def test_a_refuting_test_that_failed_is_not_asked_again() -> None:
    comp = "h/gpu1"
    precs = [
        _rec(1, "job_steps", [_sig("straggler", comp)], [comp]),
        _rec(2, "metrics", [_sig("metric_power_violation", comp), _sig("metric_clock_low", comp)], [comp]),
        {**_rec(3, "gpu_health", [], [], status="error"), "args": {"host": "h"}},
    ]
    view = _view(precs, [("job_steps", None), ("metrics", "h")])
    assert GraphPlanner._refuting_test(view, view.hypotheses[0], set(view.executed)) is None


def test_power_capped_peers_do_not_steal_a_real_fault(tmp_path) -> None:
    """End to end: several GPUs at their SW power cap, drawing well under the
    limit with clocks a few percent under max, while the slowdown is a downtrained link elsewhere."""
    import json
    from pathlib import Path

    from forensic.harness.graph import Investigator

    from tests.conftest import build_bundle

    root = build_bundle(Path(tmp_path) / "b", "pcie_downtrain")
    p = root / "nodes" / "node-a.example" / "nvml.json"
    doc = json.loads(p.read_text())
    for d in doc["devices"][:3]:
        d.update(
            {
                "nvmlDeviceGetCurrentClocksEventReasons": 0x4,
                "nvmlDeviceGetPowerUsage": 450000,
                "nvmlDeviceGetClockInfo": {"sm": 1890, "mem": 2619},
            }
        )
    p.write_text(json.dumps(doc))
    report = Investigator(root).run()
    assert (report["verdict"]["root_cause"], report["verdict"]["component"]) == (
        "pcie_downtrain",
        "node-b.example/gpu2",
    )
    assert not any(
        a["root_cause"] == "power_throttle" and a["confidence"] > 0.05 for a in report["alternatives"]
    )
