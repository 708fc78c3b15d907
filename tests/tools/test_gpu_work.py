"""Without the trainer's lines: the steps and the GPUs' counters across a relaunch.

A relaunch with more work per step: a pause in the steps, the counter restarts, each step is longer,
all of it compute on every rank alike, and the GPUs stay as busy at the same clock. Each variant
below breaks one of those, and then nothing is claimed.
"""

from __future__ import annotations

import pytest
from forensic.harness.failure_graph import beliefs, default_graph, observe
from forensic.harness.health import check_healthy

from tests.conftest import BUS, HOSTS, START
from tests.tools.test_fabric_tools import run

PAUSE = 600.0
PERIOD = 10.0
N = 60  # logged steps on each side


def _write(
    root,
    *,
    after_compute=1.3,
    after_gap=0.2,
    slow_host: int | None = None,
    pause=PAUSE,
    restart="zero",
    tensor_after=0.42,
    clock_after=1980.0,
    dcgm=True,
) -> None:
    rows = ["step,rank,start_unix,duration_s,compute_s"]
    relaunch = START + N * PERIOD + pause
    for side in (0, 1):
        for s in range(N):
            t = (START if side == 0 else relaunch) + s * PERIOD
            # before: steps 1000..; after: a fresh count from 0, a resume 10 steps back, or the count going on
            step = (
                1000 + s
                if side == 0
                else {"zero": s, "resume": 1000 + N - 10 + s, "continue": 1000 + N + s}[restart]
            )
            for r in range(8):
                comp = 0.8 if side == 0 else after_compute
                if side == 1 and slow_host is not None and r // 4 == slow_host:
                    comp *= 1.3
                dur = (
                    0.8 + 0.2
                    if side == 0
                    else max(after_compute * (1.3 if slow_host is not None else 1.0), comp) + after_gap
                )
                rows.append(f"{step},{r},{t:.3f},{dur + 0.0001 * r:.4f},{comp + 0.0001 * r:.4f}")
    (root / "job" / "steps.csv").write_text("\n".join(rows) + "\n")
    if not dcgm:
        return
    lines = ["# TYPE DCGM_FI_PROF_PIPE_TENSOR_ACTIVE gauge", "# TYPE DCGM_FI_DEV_SM_CLOCK gauge"]
    end = relaunch + N * PERIOD
    for host in HOSTS:
        for g in range(4):
            lab = f'gpu="{g}",Hostname="{host}",pci_bus_id="00000000:{BUS[g].upper()}:00.0"'
            t = START
            while t <= end:
                running_before, running_after = t < START + N * PERIOD, t >= relaunch
                tensor = 0.42 if running_before else tensor_after if running_after else 0.0
                clock = 1980.0 if running_before else clock_after if running_after else 345.0
                lines.append(f"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{{{lab}}} {tensor} {int(t)}")
                lines.append(f"DCGM_FI_DEV_SM_CLOCK{{{lab}}} {clock} {int(t)}")
                t += 30.0
    (root / "metrics").mkdir(exist_ok=True)
    (root / "metrics" / "dcgm.om").write_text("\n".join(lines) + "\n# EOF\n")


def test_a_relaunch_with_more_work_per_step_at_the_same_gpu_work_is_the_jobs_own_doing(make_bundle) -> None:
    root = make_bundle(None)
    _write(root)
    res = run(root, "gpu_work")
    assert res.status == "ok" and [s.name for s in res.signals] == ["gpu_work_held"], res.summary
    sig = res.signals[0]
    assert sig.values["step_ratio"] == pytest.approx(1.5, rel=0.01) and sig.values[
        "work_ratio"
    ] == pytest.approx(1.0)
    assert "counter restarted" in sig.detail and "0.42 -> 0.42" in sig.detail and "1980 -> 1980" in sig.detail
    # the same through a checkpoint resume: the last steps before the stop are logged again
    resumed = make_bundle("resumed")
    _write(resumed, restart="resume")
    res = run(resumed, "gpu_work")
    assert [s.name for s in res.signals] == ["gpu_work_held"] and "resumed from a checkpoint" in res.signals[
        0
    ].detail


@pytest.mark.parametrize(
    "variant",
    [
        dict(
            clock_after=1650.0
        ),  # every GPU clocked down after the relaunch: a cap or a thermal limit, less work per second
        dict(tensor_after=0.30),  # the GPUs are less busy: starved or waiting, not more work
        dict(slow_host=1),  # one host's ranks slowed more: a part, not the work, changed
        dict(
            after_compute=0.8, after_gap=0.7
        ),  # the step grew between compute phases (input or communication)
        dict(pause=30.0),  # no relaunch: an onset in a running job
        dict(restart="continue"),  # a pause but the counter goes on: the job stalled, it was not relaunched
        dict(dcgm=False),  # no GPU counters: absence of evidence is not health
    ],
)
def test_nothing_is_claimed_when_one_condition_fails(make_bundle, variant: dict) -> None:
    root = make_bundle(None)
    _write(root, **variant)
    res = run(root, "gpu_work")
    assert not res.signals, (variant, res.summary)
    if not variant.get("dcgm", True):
        assert res.status == "no_data" and not res.covered


def test_gpu_work_held_earns_healthy_and_weighs_against_an_input_stall() -> None:
    g = default_graph()

    def rec(i: int, tool: str, names: list[str]) -> dict:
        return {
            "id": f"ev-{i}",
            "tool": tool,
            "status": "ok",
            "covered": ["job"],
            "signals": [
                {"name": n, "component": "job", "kind": "job", "detail": n, "values": {}} for n in names
            ],
        }

    quiet = [
        rec(3, "nic_counters", []),
        rec(4, "input_pipeline", []),
        rec(5, "metrics", []),
        rec(6, "gpu_health", []),
        rec(7, "job_logs", []),
    ]
    slow = rec(1, "job_steps", ["job_slowdown", "slowdown_in_compute"])
    without = observe([slow, *quiet, rec(2, "gpu_work", [])])
    assert not check_healthy(g, without, "Step time up 35% after the restart").earned
    held = observe([slow, *quiet, rec(2, "gpu_work", ["gpu_work_held"])])
    hyps = beliefs(g, held)
    assert (
        hyps[0].root_cause == "healthy"
        and check_healthy(g, held, "Step time up 35% after the restart").earned
    )
    stall = {h.root_cause: h.score for h in beliefs(g, without)}["input_pipeline_stall"]
    assert {h.root_cause: h.score for h in hyps}["input_pipeline_stall"] < stall
