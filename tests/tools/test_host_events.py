"""The BMC event log and memory pressure, read and judged in the window."""

from __future__ import annotations

from forensic.harness.failure_graph import beliefs, default_graph, observe
from forensic.tools.parsers.ipmi import parse_sel_elist

from tests.tools.test_fabric_tools import by_name, run

SEL = """   1 | Pre-Init   | 00000012 | System Event #0x01 | Timestamp Clock Sync | Asserted
   2 | 04/10/2026 | 11:00:00 | Power Supply #0x51 | Power Supply AC lost | Asserted
   3 | 04/17/2026 | 02:11:09 | Power Supply #0x52 | Failure detected () | Asserted
  4a | 04/17/2026 | 02:12:40 | Fan #0x30 | Lower Critical going low  | Asserted
   5 | 04/17/2026 | 02:20:00 | Fan #0x30 | Lower Critical going low  | Deasserted
"""


def test_sel_lines_parse_with_their_times_and_types() -> None:
    e = parse_sel_elist(SEL)
    assert [x.sensor_type for x in e] == ["other", "power", "power", "cooling", "cooling"]
    assert e[0].time_unix is None and e[2].time_unix == 1776391869.0 and not e[4].asserted


def test_in_window_bmc_events_only(make_fabric_bundle) -> None:
    root = make_fabric_bundle(None)
    (root / "nodes" / "node-b.example" / "cmd" / "ipmitool-sel-elist.txt").write_text(SEL)
    res = run(root, "host_events")
    assert by_name(res, "bmc_power_event") == ["node-b.example"]  # the 04/10 AC loss is history
    assert "02:11:09" in next(s.detail for s in res.signals if s.name == "bmc_power_event")
    assert by_name(res, "bmc_cooling_event") == ["node-b.example"]
    history_only = make_fabric_bundle("link_degradation")
    (history_only / "nodes" / "node-b.example" / "cmd" / "ipmitool-sel-elist.txt").write_text(
        SEL.splitlines()[1] + "\n"
    )
    assert not run(history_only, "host_events").signals


def test_memory_pressure_against_peers(make_fabric_bundle) -> None:
    root = make_fabric_bundle(None)
    hosts = sorted(p.name for p in (root / "nodes").iterdir())
    for h in hosts:
        full = 22.5 if h == "node-b.example" else 0.3
        (root / "nodes" / h / "cmd").mkdir(parents=True, exist_ok=True)
        (root / "nodes" / h / "cmd" / "pressure-memory.txt").write_text(
            f"some avg10=30.00 avg60={full + 5:.2f} avg300=10.00 total=123456\nfull avg10=20.00 avg60={full:.2f} avg300=8.00 total=65432\n"
        )
    res = run(root, "host_events")
    assert by_name(res, "host_memory_pressure") == ["node-b.example"]
    g = default_graph()
    rec = {
        "id": "ev-1",
        "tool": "host_events",
        "status": "ok",
        "covered": hosts,
        "signals": [s.model_dump() for s in res.signals],
    }
    stragglers = {
        "id": "ev-2",
        "tool": "job_steps",
        "status": "ok",
        "covered": hosts,
        "signals": [
            {
                "name": "host_stragglers",
                "component": "node-b.example",
                "kind": "host",
                "detail": "",
                "values": {},
            }
        ],
    }
    top = beliefs(g, observe([stragglers, rec]))[0]
    assert (top.root_cause, top.component, top.confirmed) == ("host_contention", "node-b.example", True)
