"""What the shape of a job-wide slowdown says about its cause.

- A slowdown that begins inside one run (no restart in the steps) cannot come from settings read at
  start-up: NCCL's configuration is fixed when the communicators are created.
- Time outside compute that rises in a minority of long steps (the median step barely moves) is
  waits that come and go (an input pipeline running dry), not a slower path every collective pays.
"""

from __future__ import annotations

import numpy as np
import pytest
from forensic.harness.failure_graph import beliefs, default_graph, observe
from forensic.sandbox import Bundle
from forensic.tools import ToolContext, get_tool
from forensic.tools.detectors import uniform_slowdown

G = default_graph()
RANKS = 8
START = 1776390000.0  # 2026-04-17T01:40:00Z, the window of tests.conftest.build_bundle


def _series(kind: str, *, n: int = 400, every: int = 1, seed: int = 3, restart_at: int | None = None):
    """(step, start, duration, compute) arrays, steps x ranks, for one slowdown shape from n // 2 on.

    kind: ``bursty`` (a quarter of the late steps wait 2-10 s, the rest up to 0.3 s), ``uniform``
    (every late step's collective 40% longer), ``flat`` (no change).
    """
    rng = np.random.default_rng(seed)
    step, start, dur, comp = [], [], [], []
    t = START - 1800
    s = 1000
    for i in range(n):
        if restart_at is not None and i == restart_at:
            t += 900.0  # a resubmit: the job is gone for 15 minutes and resumes from its checkpoint
            s -= 20
        c = 0.6 * (1 + 0.01 * rng.standard_normal(RANKS))
        comm = 0.3 * (1 + 0.03 * rng.standard_normal())
        extra = 0.0
        if i >= n // 2:
            if kind == "uniform":
                comm *= 1.4
            elif kind == "bursty":
                extra = rng.uniform(2.0, 10.0) if rng.random() < 0.25 else rng.uniform(0.0, 0.3)
        d = c.max() + comm + extra
        step.append(np.full(RANKS, s))
        start.append(np.full(RANKS, t))
        dur.append(np.full(RANKS, d))
        comp.append(c)
        t += (d - extra) * every + extra
        s += every
    return tuple(np.array(a) for a in (step, start, dur, comp))


@pytest.mark.parametrize("every", [1, 10])
def test_bursty_waits_keep_the_median_step_while_the_mean_rises(every: int) -> None:
    step, start, dur, comp = _series("bursty", every=every)
    sd = uniform_slowdown(dur, start[:, 0], comp, steps=step[:, 0])
    assert sd.restarted is False
    assert sd.outside_rise_s is not None and sd.outside_rise_s > 1.0
    assert sd.outside_median_share is not None and sd.outside_median_share < 0.3


def test_bursty_waits_without_compute_are_seen_in_the_step_time() -> None:
    step, start, dur, _ = _series("bursty")
    sd = uniform_slowdown(dur, start[:, 0], None, steps=step[:, 0])
    assert sd.outside_rise_s > 1.0 and sd.outside_median_share < 0.3


def test_a_slower_collective_moves_every_step() -> None:
    step, start, dur, comp = _series("uniform")
    sd = uniform_slowdown(dur, start[:, 0], comp, steps=step[:, 0])
    assert sd.regressed and sd.where == "communication"
    assert sd.outside_median_share is not None and sd.outside_median_share > 0.8


def test_a_resubmit_in_the_steps_is_a_restart() -> None:
    step, start, dur, comp = _series("uniform", restart_at=200)
    sd = uniform_slowdown(dur, start[:, 0], comp, steps=step[:, 0])
    assert sd.regressed and sd.restarted is True


def _steps_csv(step, start, dur, comp, *, compute: bool = True) -> str:
    rows = ["step,rank,start_unix,duration_s" + (",compute_s" if compute else "")]
    for i in range(step.shape[0]):
        for r in range(RANKS):
            rows.append(
                f"{step[i, r]},{r},{start[i, r]:.3f},{dur[i, r]:.4f}"
                + (f",{comp[i, r]:.4f}" if compute else "")
            )
    return "\n".join(rows) + "\n"


def _job_steps(tmp_path, kind: str, **kw) -> set[str]:
    from tests.conftest import build_bundle

    compute = kw.pop("compute", True)
    root = build_bundle(tmp_path / kind, None, steps=False)
    (root / "job").mkdir(exist_ok=True)
    (root / "job/steps.csv").write_text(_steps_csv(*_series(kind, **kw), compute=compute))
    res = get_tool("job_steps")(ToolContext(Bundle(root)), {})
    assert res.status == "ok"
    return {s.name for s in res.signals}


@pytest.mark.parametrize("compute", [True, False])
def test_job_steps_names_the_shape(tmp_path, compute: bool) -> None:
    got = _job_steps(tmp_path, "bursty", every=10, compute=compute)
    assert {"job_slowdown", "slowdown_mid_run", "slowdown_bursty"} <= got


def test_job_steps_a_uniform_slowdown_is_not_bursty(tmp_path) -> None:
    got = _job_steps(tmp_path, "uniform")
    assert {"slowdown_in_comm", "slowdown_mid_run"} <= got and "slowdown_bursty" not in got


def test_job_steps_a_slowdown_from_a_restart_is_not_mid_run(tmp_path) -> None:
    got = _job_steps(tmp_path, "uniform", restart_at=200)
    assert "job_slowdown" in got and "slowdown_mid_run" not in got


def test_job_steps_a_flat_job_has_no_shape(tmp_path) -> None:
    got = _job_steps(tmp_path, "flat")
    assert not got & {"slowdown_mid_run", "slowdown_bursty"}


# --- weighing --------------------------------------------------------------------------------


def _rec(i: int, tool: str, names: list[str], status: str = "ok", covered=("job",)) -> dict:
    return {
        "id": f"ev-{i}",
        "tool": tool,
        "status": status,
        "covered": list(covered),
        "summary": "s",
        "args": {},
        "signals": [{"name": n, "component": "job", "kind": "job", "detail": n, "values": {}} for n in names],
    }


def _top_fault(records: list[dict]) -> str:
    return next(h.root_cause for h in beliefs(G, observe(records)) if h.root_cause != "healthy")


QUIET = [_rec(5, "nic_counters", [], covered=("h/mlx5_0", "h")), _rec(6, "input_pipeline", [])]


def test_a_comm_slowdown_inside_one_run_with_no_config_evidence_is_not_nccl() -> None:
    """No job logs (no_data): nothing shows a setting; the slowdown began mid-run, with the same
    settings as before it. Before the fix NCCL led on the communication slowdown alone."""
    recs = [
        _rec(1, "job_steps", ["job_slowdown", "slowdown_in_comm", "slowdown_mid_run"]),
        _rec(2, "job_logs", [], status="no_data"),
        *QUIET,
    ]
    hyps = beliefs(G, observe(recs))
    nccl = next(h for h in hyps if h.root_cause == "nccl_misconfiguration")
    assert nccl.probability < 0.05


@pytest.mark.parametrize("logs", ["no_data", "ok"])
def test_bursty_time_outside_compute_points_at_input_not_nccl(logs: str) -> None:
    recs = [
        _rec(1, "job_steps", ["job_slowdown", "slowdown_in_comm", "slowdown_mid_run", "slowdown_bursty"]),
        _rec(2, "job_logs", [], status=logs),
        *QUIET,
    ]
    assert _top_fault(recs) == "input_pipeline_stall"


@pytest.mark.parametrize(
    "config", ["nccl_socket_transport", "nccl_rails_reduced", "nccl_gdr_disabled", "nccl_p2p_disabled"]
)
def test_a_setting_brought_in_by_a_restart_still_leads(config: str) -> None:
    recs = [
        _rec(1, "job_steps", ["job_slowdown", "slowdown_in_comm"]),
        _rec(2, "job_logs", [config, "nccl_env_changed"]),
        *QUIET,
    ]
    assert _top_fault(recs) == "nccl_misconfiguration"
