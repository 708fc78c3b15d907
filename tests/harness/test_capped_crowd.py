"""A crowd of GPUs at the normal SW power cap, end to end on fleets of tests/power_fleet.py.

In many fleets a large share of busy GPUs sit at the SW power cap of their default limit, drawing
it all, a few per cent below their uncapped peers' clock. Their ranks compute that much late from
the job's first step: the job's pace was always theirs. The per-rank steps name them late, and
the GPU readings show why; a healthy control carrying such a crowd must end ``healthy``, with the
reason said. A real fault beside the crowd is still found, and a crowd later than the capped
clocks account for is not explained away.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from forensic.harness.graph import Investigator
from forensic.tools._incident_text import stated_slowdown_ratio

from tests.power_fleet import write_power_fleet

CLOCK_FAULTS = {"clocks_reduced", "metric_clock_low", "thermal_slowdown", "power_slowdown"}


def _crowd(hosts: int, share: float, seed: int) -> list[tuple[int, int]]:
    """About ``share`` of the fleet's GPUs, spread over every host (no host wholly capped)."""
    import random

    rnd = random.Random(seed)
    parts = [(h, g) for h in range(hosts) for g in range(8)]
    rnd.shuffle(parts)
    picked: list[tuple[int, int]] = []
    per_host: dict[int, int] = {}
    for h, g in parts:
        if len(picked) >= round(share * len(parts)):
            break
        if per_host.get(h, 0) >= 5:  # at most 5 of 8 on one host: the crowd is fleet-wide
            continue
        per_host[h] = per_host.get(h, 0) + 1
        picked.append((h, g))
    return picked


def _run(root: Path, **kw: Any) -> tuple[dict, list[str]]:
    names = write_power_fleet(root, **kw)
    return Investigator(root).run(), names


PRESENTATIONS = [
    dict(
        style="short",
        readings="nvml",
        dcgm=False,
        hosts=4,
        share=0.4,
        seed=3,
        title="Step time spikes every 30 minutes; checkpoint every 500 steps",
    ),
    dict(
        style="fqdn",
        readings="smi",
        dcgm=True,
        hosts=5,
        share=0.45,
        seed=11,
        title="Throughput dashboard shows periodic dips, please confirm nothing is wrong",
    ),
    dict(
        style="ip",
        readings="both",
        dcgm=True,
        hosts=6,
        share=0.3,
        seed=29,
        title="Throughput dip around 10:40 after a planned restart",
    ),
]


@pytest.mark.parametrize("p", PRESENTATIONS, ids=lambda p: p["style"])
def test_a_crowd_at_the_normal_power_cap_leaves_a_healthy_job_healthy(tmp_path: Path, p: dict) -> None:
    p = dict(p)
    crowd = _crowd(p.pop("hosts"), p.pop("share"), p.pop("seed"))
    hosts = max(h for h, _ in crowd) + 1
    # Capped clocks sit ~8% below the peers': their ranks compute 7-8.5% late from the start.
    late = {part: 0.07 + 0.015 * (i % 3) / 2 for i, part in enumerate(crowd)}
    report, names = _run(tmp_path / "b", states=dict.fromkeys(crowd, "spread"), late=late, hosts=hosts, **p)
    assert report["status"] == "healthy", (report["verdict"], report["status_reason"])
    assert report["verdict"] == {
        "root_cause": "healthy",
        "component": None,
        "confidence": report["verdict"]["confidence"],
    }
    assert not report["proposals"]
    assert "normal SW power cap" in report["status_reason"]
    # The capped GPUs read as the cap, not as clock faults.
    for rec in report["evidence"]:
        for s in rec.get("signals") or []:
            assert s["name"] not in CLOCK_FAULTS, s


@pytest.mark.parametrize("p", PRESENTATIONS[:2], ids=lambda p: p["style"])
def test_a_lowered_limit_beside_the_crowd_is_still_found(tmp_path: Path, p: dict) -> None:
    p = dict(p)
    crowd = _crowd(p.pop("hosts"), p.pop("share"), p.pop("seed"))
    hosts = max(h for h, _ in crowd) + 1
    culprit = next((h, g) for h in range(hosts) for g in range(8) if (h, g) not in crowd)
    states = {**dict.fromkeys(crowd, "spread"), culprit: "lowered"}
    late = {**dict.fromkeys(crowd, 0.075), culprit: 0.45}
    report, names = _run(tmp_path / "b", states=states, late=late, hosts=hosts, **p)
    assert report["verdict"]["root_cause"] == "power_throttle", (report["verdict"], report["status_reason"])
    assert report["verdict"]["component"] == f"{names[culprit[0]]}/gpu{culprit[1]}"
    assert report["status"] in ("confirmed", "probable")


def test_a_crowd_later_than_its_capped_clocks_explain_is_not_called_healthy(tmp_path: Path) -> None:
    crowd = _crowd(4, 0.4, 7)
    # Clocks 8% down cannot make ranks 25% late: something else slows them.
    report, _ = _run(
        tmp_path / "b",
        states=dict.fromkeys(crowd, "spread"),
        late=dict.fromkeys(crowd, 0.25),
        hosts=4,
        title="Step time up; job slower than planned",
    )
    assert report["status"] != "healthy", report["status_reason"]
    assert "normal SW power cap" not in report["status_reason"]


def test_a_lone_late_rank_on_an_uncapped_gpu_is_not_absorbed_by_the_crowd(tmp_path: Path) -> None:
    crowd = _crowd(4, 0.4, 5)
    lone = next((h, g) for h in range(4) for g in range(8) if (h, g) not in crowd)
    # The lone rank is late as the crowd is, but its GPU reads at full clock without the cap.
    report, _ = _run(
        tmp_path / "b",
        states=dict.fromkeys(crowd, "spread"),
        late={**dict.fromkeys(crowd, 0.075), lone: 0.075},
        hosts=4,
        title="Periodic throughput dips; please confirm nothing is wrong",
    )
    assert "normal SW power cap" not in report["status_reason"], report["status_reason"]


@pytest.mark.parametrize(
    ("text", "ratio"),
    [
        ("New job runs at 40% of the benchmark throughput from the first step", 2.5),
        ("we get half the benchmarked tokens/s", 2.0),
        ("runs at 50% of the expected throughput", 2.0),
    ],
)
def test_a_shortfall_against_a_benchmark_is_a_stated_slowdown(text: str, ratio: float) -> None:
    assert stated_slowdown_ratio(text) == pytest.approx(ratio)


def test_without_topology_a_crowd_is_read_by_the_gpus_recorded(tmp_path: Path) -> None:
    """No topology.json and node data for two of six hosts: the ranks' GPUs are a guess over the
    hosts recorded (which need not hold ranks 0-15). The crowd's lateness is still the cap the
    recorded GPUs show, not a fault on whichever GPU the guess puts a late rank on."""
    import shutil

    crowd = _crowd(6, 0.4, 13)
    root = tmp_path / "b"
    names = write_power_fleet(
        root,
        states=dict.fromkeys(crowd, "spread"),
        late=dict.fromkeys(crowd, 0.075),
        hosts=6,
        title="In-loop evaluation runs every 400 steps. Can someone confirm these dips are expected?",
    )
    (root / "topology.json").unlink()
    for name in names[:2] + names[4:]:
        shutil.rmtree(root / "nodes" / name)
    report = Investigator(root).run()
    assert report["status"] == "healthy", (report["verdict"], report["status_reason"])
    assert report["verdict"]["root_cause"] == "healthy"
    assert "normal SW power cap" in report["status_reason"]


@pytest.mark.parametrize(
    "title",
    [
        "New job is slow from the first step",
        "New job runs at 40% of the reference throughput from the first step",
        "Job runs 2x slower than on the old cluster",
    ],
)
def test_a_job_said_to_be_slow_all_along_is_not_answered_by_the_cap(tmp_path: Path, title: str) -> None:
    """The cap sets the job's pace all along; a person who says that pace is the problem is not
    answered by it (a shortfall of 2x is far more than 8% of clock explains)."""
    crowd = _crowd(4, 0.4, 7)
    report, _ = _run(
        tmp_path / "b",
        states=dict.fromkeys(crowd, "spread"),
        late=dict.fromkeys(crowd, 0.075),
        hosts=4,
        dcgm=True,
        title=title,
    )
    assert report["status"] != "healthy", report["status_reason"]
    assert report["verdict"]["root_cause"] != "healthy"
