"""Stalls that come and go, and blocked tasks on one host.

- A job that stops for tens of seconds every minute or two from an onset, and runs at full speed
  between the stops, keeps its typical step: the regression is in what the stops cost, counted by
  the rate of steps several times the typical one after a split against before it.
- Long steps at the rate the job had from the start (a checkpoint every N steps) are its own work.
- Recurring long waits between steps, with the step counter running on, are stalls, not restarts.
- A task blocked in D state names no file system: on a minority of the hosts it is that host's
  trouble, not the job's shared input; a file system's own words still count from one host.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from forensic.sandbox import Bundle
from forensic.tools import ToolContext, get_tool
from forensic.tools.detectors import uniform_slowdown

from tests import stall_incidents as si

RANKS = 8


def _series(
    *, n: int = 1800, onset: int | None = 700, stall_in: str = "step", every: int | None = None, seed: int = 1
):
    """(step, start, duration, compute): ~2 s steps; from ``onset`` a 20-40 s stall every 30-60
    steps (inside the step or before the next one); ``every``: a 12 s step every N from the start."""
    rng = np.random.default_rng(seed)
    step, start, dur, comp = [], [], [], []
    t, nxt = 1.78e9, None if onset is None else onset
    for i in range(n):
        c = 1.6 * (1 + 0.003 * rng.standard_normal(RANKS))
        d, gap = c.max() + 0.4 + abs(rng.normal(0, 0.01)), 0.0
        if every and i % every == 0:
            d += 10.0
        if nxt is not None and i >= nxt:
            w = rng.uniform(20, 40)
            d, gap = (d + w, 0.0) if stall_in == "step" else (d, w)
            nxt = i + int(rng.integers(30, 60))
        step.append(np.full(RANKS, 5000 + i))
        start.append(np.full(RANKS, t))
        dur.append(np.full(RANKS, d))
        comp.append(c)
        t += d + gap
    return tuple(np.array(a) for a in (step, start, dur, comp))


@pytest.mark.parametrize("compute", [False, True])
def test_stalls_from_an_onset_are_a_regression_the_typical_step_hides(compute: bool) -> None:
    step, start, dur, comp = _series()
    sd = uniform_slowdown(dur, start[:, 0], comp if compute else None, steps=step[:, 0])
    assert sd.regressed and not sd.restarted
    assert sd.ratio > 1.2  # what the stops cost, not the typical step's 1.0x
    assert sd.onset_step is not None and abs(sd.onset_step - 5700) <= 40
    # The time went into the steps themselves: unsplittable without compute_s, after it with it.
    assert sd.where == ("communication" if compute else "unknown")
    assert sd.outside_median_share is not None and sd.outside_median_share < 0.2


def test_stalls_between_steps_are_gaps_not_restarts() -> None:
    step, start, dur, comp = _series(stall_in="gap", seed=4)
    sd = uniform_slowdown(dur, start[:, 0], comp, steps=step[:, 0])
    assert sd.regressed and not sd.restarted and sd.where == "gaps"


@pytest.mark.parametrize("every", [60, 150])
def test_long_steps_at_the_rate_the_job_always_had_are_no_regression(every: int) -> None:
    step, start, dur, comp = _series(onset=None, every=every)
    for c in (comp, None):
        sd = uniform_slowdown(dur, start[:, 0], c, steps=step[:, 0])
        assert not sd.regressed, (every, sd.ratio, sd.z)


def test_stalls_on_top_of_checkpoints_still_show() -> None:
    step, start, dur, comp = _series(every=300, seed=2)
    sd = uniform_slowdown(dur, start[:, 0], None, steps=step[:, 0])
    assert sd.regressed and sd.ratio > 1.2


def test_two_long_steps_late_in_the_run_are_no_regression() -> None:
    step, start, dur, _ = _series(onset=None)
    dur[-50, :] += 30.0
    dur[-10, :] += 30.0
    assert not uniform_slowdown(dur, start[:, 0], None, steps=step[:, 0]).regressed


def _signals(root: Path) -> dict[str, dict]:
    res = get_tool("input_pipeline")(ToolContext(Bundle(root)), {})
    assert res.status == "ok"
    return {s.name: s.values for s in res.signals}


@pytest.mark.parametrize("fleet,culprit", [("dc", 2), ("ip", 0)])
def test_a_blocked_task_on_one_host_of_many_is_not_the_shared_input(tmp_path: Path, fleet, culprit) -> None:
    root = si.memory_pressure_host(tmp_path / "b", fleet=fleet, culprit=culprit, blocked="pt_data_worker")
    res = get_tool("input_pipeline")(ToolContext(Bundle(root)), {})
    assert "storage_stall_kernel" not in {s.name for s in res.signals}
    assert res.data["blocked_on_few_hosts"] == [si.FLEETS[fleet][culprit]]


def test_blocked_tasks_on_every_host_are_the_shared_input(tmp_path: Path) -> None:
    root = si.shared_storage_hang(tmp_path / "b", fleet="short")
    got = _signals(root)
    assert got["storage_stall_kernel"]["hosts"] == 4


def test_a_file_systems_own_words_count_from_one_host(tmp_path: Path) -> None:
    root = si.memory_pressure_host(tmp_path / "b", fleet="short", culprit=1, blocked=None)
    dmesg = root / "nodes" / si.FLEETS["short"][1] / "cmd" / "dmesg.txt"
    dmesg.write_text(
        dmesg.read_text() + f"[{86400 * 3 + 2500:.6f}] nfs: server filer01 not responding, still trying\n"
    )
    assert "storage_stall_kernel" in _signals(root)
