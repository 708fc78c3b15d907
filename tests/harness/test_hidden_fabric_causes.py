"""Causes that sit away from the job's own parts, on incidents generated in several presentations
(``tests/fabric_incidents.py``): the investigation names the part that starts the trouble, and no
proposal touches the job's own nodes when they are only victims.

- A PFC storm whose origin is a switch port (a leaf uplink, a spine or core port) or a host outside
  the job behind a leaf port, with every job NIC only receiving pauses; 2- and 3-tier fabrics,
  switch counters as ``show pfc counters`` or as IEEE8021-PFC series (both directions or one), with and without host
  counters, with an old static pause count and a genuinely bad NIC on a spare as decoys; with
  counters cleared at the window's start (every leaf's light host-port pausing over the absolute
  floor) and with PFC watchdogs calling victim ports stormed while they received no PFC frame.
- NCCL held to one or two NICs of four or eight from the first step, shown by an environment dump
  in several wordings or by NCCL's INFO lines only; the busy NICs sending pauses on every host.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from forensic.harness.graph import Investigator

from tests.fabric_incidents import RailCase, StormCase, write_rails, write_storm

STORMS = [
    StormCase("uplink-2tier", "leaf-uplink", seed=1),
    StormCase(
        "uplink-3tier-series-only",
        "leaf-uplink",
        style="dotted",
        tiers=3,
        switch_source="series",
        host_counters=False,
        seed=2,
    ),
    StormCase("spine-port-static-decoy", "spine-port", style="ip", decoy_static=True, seed=3),
    StormCase("core-port-switch-only", "core-port", tiers=3, host_counters=False, commas=False, seed=4),
    StormCase("outside-host-bad-spare-nic", "outside-host", decoy_bad_nic=True, seed=5),
    StormCase(
        "outside-host-series-4nic",
        "outside-host",
        style="ip",
        nics=4,
        switch_source="series",
        host_counters=False,
        seed=8,
    ),
    StormCase(
        "unlisted-port-3tier", "unlisted-port", style="dotted", tiers=3, nics=4, host_counters=False, seed=6
    ),
    StormCase(
        "spine-port-series-decoys",
        "spine-port",
        switch_source="series",
        decoy_static=True,
        decoy_bad_nic=True,
        compute=False,
        seed=9,
    ),
    StormCase("job-nic", "job-nic", seed=7),
    # an exporter set up for one direction only: the other end of each cable says the rest
    StormCase(
        "uplink-received-pauses-only", "leaf-uplink", switch_source="series-rx", host_counters=False, seed=31
    ),
    StormCase(
        "spine-sent-pauses-only",
        "spine-port",
        switch_source="series-tx",
        host_counters=False,
        style="dotted",
        seed=32,
    ),
]


@pytest.mark.parametrize("case", STORMS, ids=lambda c: c.name)
def test_a_pause_storm_is_named_where_it_starts(tmp_path: Path, case: StormCase) -> None:
    root = tmp_path / case.name
    truth = write_storm(root, case)
    report = Investigator(root).run()
    v = report["verdict"]
    assert (v["root_cause"], v["component"]) == (truth["root_cause"], truth["component"]), (
        report["status_reason"],
        report["leading"],
    )
    assert report["status"] in ("confirmed", "probable")
    job_hosts = {r["host"] for r in json.loads((root / "topology.json").read_text())["ranks"]}
    origin_host = truth["component"].split("/", 1)[0]
    for p in report["proposals"]:
        host = p["target"].split("/", 1)[0]
        # only the origin itself may be acted on: a victim job host never is
        assert host not in job_hosts or host == origin_host, p
    if case.origin == "outside-host":
        spare = json.loads((root / "topology.json").read_text())["hosts"][-1]["name"]
        assert ("cordon_node", spare) in {(p["action"], p["target"]) for p in report["proposals"]}


# Counters cleared at the window's start: the fabric's quiet level is 0, so every leaf's light
# pausing of its own host ports crosses the absolute floor; and PFC watchdogs that call victim
# ports stormed while those ports received no PFC frame at all.
CLEARED = [
    StormCase(
        "uplink-cleared-watchdog-on-victims", "leaf-uplink", cleared=True, watchdog_on_victims=2, seed=41
    ),
    StormCase(
        "uplink-3tier-cleared-no-commas",
        "leaf-uplink",
        style="dotted",
        tiers=3,
        cleared=True,
        watchdog_on_victims=2,
        commas=False,
        seed=42,
    ),
    StormCase(
        "uplink-cleared-series", "leaf-uplink", style="ip", cleared=True, switch_source="series", seed=43
    ),
    StormCase(
        "spine-port-cleared-watchdog-on-victims",
        "spine-port",
        cleared=True,
        watchdog_on_victims=3,
        style="ip",
        seed=44,
    ),
    StormCase("uplink-watchdog-on-victims", "leaf-uplink", watchdog_on_victims=2, seed=45),
    StormCase(
        "core-port-cleared-switch-only",
        "core-port",
        tiers=3,
        cleared=True,
        watchdog_on_victims=1,
        host_counters=False,
        seed=46,
    ),
]


@pytest.mark.parametrize("case", CLEARED, ids=lambda c: c.name)
def test_a_switch_ports_storm_stands_out_from_its_switchs_background_and_victims_watchdogs(
    tmp_path: Path, case: StormCase
) -> None:
    root = tmp_path / case.name
    truth = write_storm(root, case)
    report = Investigator(root).run()
    v = report["verdict"]
    assert (v["root_cause"], v["component"]) == (truth["root_cause"], truth["component"]), (
        report["status_reason"],
        report["leading"],
    )
    assert report["status"] in ("confirmed", "probable")
    # a victim's watchdog names no NIC: the job's NICs only receive the traced storm
    fabric = [e for e in report["evidence"] if e["tool"] == "fabric"]
    assert not [s for e in fabric for s in e.get("signals") or [] if s["name"] == "pfcwd_storm"]
    if case.watchdog_on_victims and case.switch_source == "sonic":
        assert any("victims" in e["summary"] for e in fabric)
    job_hosts = {r["host"] for r in json.loads((root / "topology.json").read_text())["ranks"]}
    assert not [p for p in report["proposals"] if p["target"].split("/", 1)[0] in job_hosts]


def test_light_pausing_on_every_leaf_after_a_counter_clear_is_no_storm(tmp_path: Path) -> None:
    root = tmp_path / "cleared-control"
    write_storm(root, StormCase("cleared-control", "none", cleared=True, seed=47))
    report = Investigator(root).run()
    assert (report["status"], report["verdict"]["root_cause"]) == ("healthy", "healthy"), report[
        "status_reason"
    ]


def test_an_old_static_pause_count_is_not_a_storm(tmp_path: Path) -> None:
    root = tmp_path / "static"
    write_storm(root, StormCase("static", "none", decoy_static=True, seed=11))
    report = Investigator(root).run()
    assert report["verdict"]["root_cause"] != "pfc_pause_storm", report["verdict"]
    assert not report["proposals"]


RAILS = [
    RailCase("env-export-1of8", seed=1),
    RailCase("info-only-1of8", presentation="info", style="dotted", seed=2),
    RailCase(
        "exclude-1of4-roce-busy-pauses",
        nics=4,
        env_form="exclude",
        link_layer="Ethernet",
        busy_pauses=True,
        seed=3,
    ),
    RailCase("dump-2of8-bad-spare-nic", used=(0, 4), env_form="dump", decoy_bad_nic=True, seed=4),
    RailCase(
        "info-only-1of4-roce-busy-pauses",
        nics=4,
        presentation="info",
        link_layer="Ethernet",
        busy_pauses=True,
        seed=5,
    ),
    RailCase("json-env-no-counters", env_form="json", counters=False, style="ip", seed=6),
    RailCase("nccl-line-and-info", env_form="nccl", presentation="both", compute=False, seed=7),
]


@pytest.mark.parametrize("case", RAILS, ids=lambda c: c.name)
def test_nccl_on_fewer_nics_than_the_hosts_have_is_the_jobs_setting(tmp_path: Path, case: RailCase) -> None:
    root = tmp_path / case.name
    write_rails(root, case)
    report = Investigator(root).run()
    v = report["verdict"]
    assert (v["root_cause"], v["component"]) == ("nccl_misconfiguration", "job"), (
        report["status_reason"],
        report["leading"],
    )
    assert report["status"] in ("confirmed", "probable")
    assert all(p["target"] == "job" for p in report["proposals"]), report["proposals"]


def test_every_nic_named_in_the_setting_is_no_misconfiguration(tmp_path: Path) -> None:
    root = tmp_path / "control"
    write_rails(root, RailCase("control", control=True, seed=12))
    report = Investigator(root).run()
    assert report["verdict"]["root_cause"] == "healthy", report["verdict"]
