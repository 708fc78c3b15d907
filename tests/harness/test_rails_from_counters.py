"""NCCL held to a few NICs with its debug lines off: only the hosts' counters show it, and the
leaves pause the busy job ports at load levels. Incidents from ``tests/fabric_incidents.py`` in
several presentations (RoCE and InfiniBand, 4 or 8 NICs, three naming styles, with and without the
leaves' PFC counters and per-rank compute, a bad NIC on a spare as decoy), titles that compare with
an earlier run in words and no number.

- The job on a quarter of its rails is never ``healthy``: ``nic_rails_idle`` weighs against it as
  the logged setting does, and names ``nccl_misconfiguration`` on the job, probable (the counters
  say where the bytes went, not which setting sent them there).
- A leaf that pauses every busy job port at a few hundred to a thousand frames, receiving none, is
  loaded: the one port that crossed the hot mark is the top of that spread, no storm's origin.
- Controls on every NIC stay ``healthy`` with the same switch load, and so does a text that asks
  ("Is the job slower than yesterday?") rather than states.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from forensic.harness.graph import Investigator
from forensic.tools._incident_text import slow_from_start, stated
from forensic.tools._switch_pause import PortPause, trace

from tests.fabric_incidents import RailCase, write_rails

FAULTS = [
    RailCase(
        "roce-2of8-leaf-load-no-compute",
        used=(0, 1),
        presentation="counters",
        link_layer="Ethernet",
        switch_load=True,
        compute=False,
        title="Restarted run is much slower than yesterday's on the same nodes",
        reported="Debug logging was turned off in the new image. No hardware alerts.",
        seed=21,
    ),
    RailCase(
        "ib-1of4-dotted",
        nics=4,
        presentation="counters",
        style="dotted",
        title="Throughput lower than last week's run, same recipe",
        reported="Nothing changed but the container image.",
        seed=22,
    ),
    RailCase(
        "roce-2of8-ip-bad-spare-nic-leaf-load",
        used=(2, 5),
        presentation="counters",
        link_layer="Ethernet",
        style="ip",
        switch_load=True,
        decoy_bad_nic=True,
        title="Job slower than last week on the same allocation",
        seed=23,
    ),
]


@pytest.mark.parametrize("case", FAULTS, ids=lambda c: c.name)
def test_nccl_on_few_nics_is_seen_in_the_counters_alone(tmp_path: Path, case: RailCase) -> None:
    root = tmp_path / case.name
    write_rails(root, case)
    report = Investigator(root).run()
    v = report["verdict"]
    assert (v["root_cause"], v["component"]) == ("nccl_misconfiguration", "job"), (
        report["status_reason"],
        report["alternatives"],
    )
    # the counters show where the bytes went, not the setting: never confirmed on them alone
    assert report["status"] == "probable", report["status_reason"]
    assert all(p["target"] == "job" for p in report["proposals"]), report["proposals"]
    assert not any(
        a["root_cause"] == "pfc_pause_storm" and a["confidence"] > 0.1 for a in report["alternatives"]
    )


CONTROLS = [
    RailCase(
        "roce-8-leaf-load-question",
        presentation="counters",
        link_layer="Ethernet",
        switch_load=True,
        control=True,
        title="Is the job slower than yesterday?",
        reported="Step time looks the same to me.",
        seed=31,
    ),
    RailCase(
        "ib-4-dotted-plain",
        nics=4,
        presentation="counters",
        style="dotted",
        control=True,
        seed=32,
    ),
    RailCase(
        "roce-8-ip-leaf-load-asked",
        presentation="counters",
        link_layer="Ethernet",
        style="ip",
        switch_load=True,
        control=True,
        compute=False,
        title="Dashboard: PFC pauses on the leaf ports",
        reported="Ops: is training degraded? Throughput seems the same as last week.",
        seed=33,
    ),
]


@pytest.mark.parametrize("case", CONTROLS, ids=lambda c: c.name)
def test_a_job_on_every_nic_with_leaf_load_is_healthy(tmp_path: Path, case: RailCase) -> None:
    root = tmp_path / case.name
    write_rails(root, case)
    report = Investigator(root).run()
    assert report["status"] == "healthy", (report["status"], report["verdict"], report["status_reason"])
    assert not report["proposals"] or all(p["action"] == "open_ticket" for p in report["proposals"])


@pytest.mark.parametrize(
    "text",
    [
        "Is the job degraded? Step time looks the same as yesterday to me.",
        "Are we below plan?",
        "Ops: is training throughput degraded? nothing in the alerts",
        "Could the run be slower than last week?",
    ],
)
def test_a_yes_no_question_states_no_shortfall(text: str) -> None:
    assert not slow_from_start(text), stated(text)


@pytest.mark.parametrize(
    "text",
    [
        "Why is the job slow since launch?",
        "Restarted run is much slower than yesterday's on the same nodes",
        "We are below plan. Is it the network?",
        "Training throughput degraded, nothing in the alerts",
        "Job slower than last week",
    ],
)
def test_a_statement_or_a_why_question_still_states_it(text: str) -> None:
    assert slow_from_start(text)


def _leaf(counts: dict[str, float]) -> list[PortPause]:
    ports = [
        PortPause("leaf-1", f"Ethernet{4 * i}", counts.get(f"Ethernet{4 * i}", 0.0), 0.0, "sonic")
        for i in range(52)
    ]
    return ports + [PortPause("spine-1", f"Ethernet{4 * i}", 0.0, 0.0, "sonic") for i in range(32)]


def test_a_leaf_pausing_every_busy_port_at_load_levels_is_no_origin() -> None:
    counts = {f"Ethernet{4 * i}": 400.0 + 60.0 * i for i in range(12)}  # 400 .. 1060
    counts["Ethernet96"] = 1125.0
    assert trace(_leaf(counts), {}) == []


def test_one_port_far_above_the_rest_is_still_an_origin() -> None:
    counts = {f"Ethernet{4 * i}": 40.0 + 5.0 * i for i in range(12)}  # a little background
    counts["Ethernet96"] = 250_000.0
    got = trace(_leaf(counts), {})
    assert [o.component for o in got] == ["leaf-1/Ethernet96"]


@pytest.mark.parametrize(
    "text", ["", "?", "\n" * 100_000 + "is it?", "is " * 50_000, "\x00\xff" * 50_000, "Ops:" * 20_000 + "?"]
)
def test_hostile_texts_are_read_without_error(text: str) -> None:
    assert isinstance(slow_from_start(text), bool)
    assert len(stated(text)) <= len(text)
