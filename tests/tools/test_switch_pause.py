"""Switch ports as pause origins: from `show pfc counters` and from per-port
PFC series; a switch passing on pauses it receives is not the origin."""

from __future__ import annotations

from pathlib import Path

from forensic.harness.failure_graph import beliefs, default_graph, observe
from forensic.sandbox import Bundle
from forensic.tools import ToolContext, get_tool
from forensic.tools._switch_pause import PortPause, origins, trace

G = default_graph()


def _ports(
    tx: dict[str, float], rx: dict[str, float] | None = None, sw: str = "leaf-1", n: int = 8
) -> list[PortPause]:
    rx = rx or {}
    return [
        PortPause(
            sw, f"Ethernet{4 * i}", tx.get(f"Ethernet{4 * i}", 20.0), rx.get(f"Ethernet{4 * i}", 10.0), "t"
        )
        for i in range(n)
    ]


def test_one_port_sending_pauses_with_nothing_pausing_its_switch_is_the_origin() -> None:
    got = origins(_ports({"Ethernet12": 4_500_000}))
    assert [(p.switch, p.port) for p, _ in got] == [("leaf-1", "Ethernet12")]


def test_a_switch_that_receives_a_storm_only_passes_it_on() -> None:
    assert origins(_ports({"Ethernet12": 4_500_000}, rx={"Ethernet4": 3_000_000})) == []


def test_general_congestion_names_no_origin() -> None:
    assert origins(_ports({f"Ethernet{4 * i}": 900_000 + i for i in range(6)}, n=16)) == []
    assert origins(_ports({}, n=8)) == []


def _pfc_table(tx_hot: str | None, rx_hot: str | None = None) -> str:
    head = (
        "  Port Rx    PFC0    PFC1    PFC2    PFC3    PFC4    PFC5    PFC6    PFC7\n"
        "---------  ------  ------  ------  ------  ------  ------  ------  ------\n"
    )
    rows = "".join(
        f"Ethernet{4 * i}       0       0       0  {3_100_000 if rx_hot == f'Ethernet{4 * i}' else 12:>6}       0       0       0       0\n"
        for i in range(8)
    )
    head2 = (
        "\n  Port Tx    PFC0    PFC1    PFC2    PFC3    PFC4    PFC5    PFC6    PFC7\n"
        "---------  ------  ------  ------  ------  ------  ------  ------  ------\n"
    )
    rows2 = "".join(
        f"Ethernet{4 * i}       0       0       0  {4_200_000 if tx_hot == f'Ethernet{4 * i}' else 30:>6}       0       0       0       0\n"
        for i in range(8)
    )
    return head + rows + head2 + rows2


def _with_pfc(root: Path, text: str) -> Path:
    pfcwd = root / "switches/leaf-1/cmd/show-pfcwd-stats.txt"
    if pfcwd.exists():
        pfcwd.unlink()
    (root / "switches/leaf-1/cmd").mkdir(parents=True, exist_ok=True)
    (root / "switches/leaf-1/cmd/show-pfc-counters.txt").write_text(text)
    return root


def test_fabric_names_the_switch_port_from_show_pfc_counters(make_fabric_bundle) -> None:
    root = _with_pfc(make_fabric_bundle(None), _pfc_table("Ethernet4"))
    res = get_tool("fabric")(ToolContext(Bundle(root)), {})
    sig = [s for s in res.signals if s.name == "switch_port_pause_origin"]
    assert [s.component for s in sig] == ["leaf-1/Ethernet4"] and sig[0].kind == "port"
    # the switch port, not the NIC behind it, is the lead; a confirmed storm on it needs no host origin
    slow = [
        {"name": n, "component": "job", "kind": "job", "detail": n, "values": {}}
        for n in ("job_slowdown", "slowdown_in_comm")
    ]
    obs = observe(
        [
            {
                "id": "ev-1",
                "tool": "job_steps",
                "status": "ok",
                "covered": ["job"],
                "summary": "s",
                "args": {},
                "signals": slow,
            },
            {
                "id": "ev-2",
                "tool": "fabric",
                "status": "ok",
                "covered": res.covered,
                "summary": "f",
                "args": {},
                "signals": [s.model_dump() for s in res.signals],
            },
        ]
    )
    top = beliefs(G, obs)[0]
    assert (top.root_cause, top.component, top.confirmed) == ("pfc_pause_storm", "leaf-1/Ethernet4", True)


def test_fabric_names_no_switch_port_when_a_nic_sends_the_pauses(make_fabric_bundle) -> None:
    root = _with_pfc(make_fabric_bundle(None), _pfc_table("Ethernet4", rx_hot="Ethernet0"))
    res = get_tool("fabric")(ToolContext(Bundle(root)), {})
    assert not [s for s in res.signals if s.name == "switch_port_pause_origin"]


def test_fabric_reads_per_port_pfc_series(make_fabric_bundle) -> None:
    root = make_fabric_bundle(None)
    import json

    inc = json.loads((root / "incident.json").read_text())
    from datetime import datetime

    t0 = datetime.fromisoformat(inc["window"]["start"].replace("Z", "+00:00")).timestamp()
    lines = ["# TYPE ieee8021PfcRequests counter"]
    for i in range(8):
        for k in range(6):
            v = k * 900_000 if i == 3 else k * 5
            lines.append(
                f'ieee8021PfcRequests{{instance="leaf-1",ifName="Ethernet{4 * i}",ieee8021PfcPriority="3"}} {v} {t0 + 600 * k:.0f}'
            )
    lines.append("# TYPE ieee8021PfcIndications counter")
    for i in range(8):
        for k in range(6):
            lines.append(
                f'ieee8021PfcIndications{{instance="leaf-1",ifName="Ethernet{4 * i}"}} {k * 2} {t0 + 600 * k:.0f}'
            )
    (root / "metrics").mkdir(exist_ok=True)
    (root / "metrics/switch-pfc.om").write_text("\n".join(lines) + "\n# EOF\n")
    pfcwd = root / "switches/leaf-1/cmd/show-pfcwd-stats.txt"
    if pfcwd.exists():
        pfcwd.unlink()
    res = get_tool("fabric")(ToolContext(Bundle(root)), {})
    assert [s.component for s in res.signals if s.name == "switch_port_pause_origin"] == ["leaf-1/Ethernet12"]


def test_a_switch_port_verdict_is_not_proposed_for_a_node_drain() -> None:
    from forensic.harness.models import EvidenceRecord, Finding, Report, Verdict
    from forensic.harness.proposals import make_proposals
    from forensic.tools.base import Signal

    def report(comp: str, kind: str) -> Report:
        sig = Signal(
            name="switch_port_pause_origin" if kind == "port" else "pfc_origin",
            component=comp,
            kind=kind,
            detail="d",
            values={},
        )
        rec = EvidenceRecord(id="ev-1", tool="fabric", args={}, status="ok", summary="s", signals=[sig])
        return Report(
            incident="i",
            status="probable",
            verdict=Verdict(root_cause="pfc_pause_storm", component=comp, confidence=0.8),
            findings=[Finding(claim="d", evidence=["ev-1"])],
            evidence=[rec],
        )

    port = {p.action: p.target for p in make_proposals(G, report("leaf-1/Ethernet4", "port"))}
    nic = {p.action: p.target for p in make_proposals(G, report("node-b.example/mlx5_0", "nic"))}
    assert port == {"disable_port": "leaf-1/Ethernet4"}
    assert nic == {"disable_port": "node-b.example/mlx5_0", "drain_node": "node-b.example"}


# -- across tiers: the graph of who pauses whom ------------------------------------------------

_LINKS = {
    ("leaf-a", "Ethernet256"): ("spine-1", "Ethernet0"),
    ("spine-1", "Ethernet0"): ("leaf-a", "Ethernet256"),
    ("leaf-b", "Ethernet256"): ("spine-1", "Ethernet8"),
    ("spine-1", "Ethernet8"): ("leaf-b", "Ethernet256"),
}


def _fabric(tx: dict, rx: dict) -> list[PortPause]:
    ports = [
        ("leaf-a", "Ethernet256"),
        ("leaf-b", "Ethernet256"),
        ("spine-1", "Ethernet0"),
        ("spine-1", "Ethernet8"),
    ]
    ports += [(sw, f"Ethernet{4 * i}") for sw in ("leaf-a", "leaf-b") for i in range(6)]
    return [PortPause(s, p, tx.get((s, p), 30.0), rx.get((s, p), 20.0), "t") for s, p in ports]


def test_a_leaf_uplink_that_pauses_the_spine_is_found_from_the_far_leaf_victims() -> None:
    # leaf-a pauses spine-1; spine-1 pauses leaf-b; leaf-b pauses its six hosts (victims)
    tx = {("leaf-a", "Ethernet256"): 5e6, ("spine-1", "Ethernet8"): 4e6}
    tx |= {("leaf-b", f"Ethernet{4 * i}"): 3e6 for i in range(6)}
    rx = {("spine-1", "Ethernet0"): 5e6, ("leaf-b", "Ethernet256"): 4e6}
    got = trace(_fabric(tx, rx), _LINKS)
    assert [(o.component, o.sender) for o in got] == [("leaf-a/Ethernet256", "switch")]
    assert got[0].reached == ("spine-1", "leaf-b") and len(got[0].victims) == 6
    # the same storm seen only from the receiving ends: spine-1's and leaf-b's counters
    only_far = [p for p in _fabric(tx, rx) if p.switch != "leaf-a"]
    assert trace(only_far, _LINKS) == []  # leaf-a was not read: it may be receiving pauses itself


def test_a_host_port_storm_that_ended_is_history_not_an_origin() -> None:
    rx = {("leaf-b", "Ethernet4"): 2e6}
    assert [o.component for o in trace(_fabric({}, rx), _LINKS)] == ["leaf-b/Ethernet4"]
    assert trace(_fabric({}, rx), _LINKS, history={("leaf-b", "Ethernet4")}) == []
    # ... unless the watchdog holds it stormed now
    live = trace(
        _fabric({}, rx), _LINKS, history={("leaf-b", "Ethernet4")}, stormed={("leaf-b", "Ethernet4")}
    )
    assert [o.component for o in live] == ["leaf-b/Ethernet4"]


def test_a_propagating_switch_lends_its_spread_to_its_strongest_cause_only() -> None:
    tx = {("leaf-a", "Ethernet256"): 5e6, ("spine-1", "Ethernet8"): 4e6}
    tx |= {("leaf-b", f"Ethernet{4 * i}"): 3e6 for i in range(2, 6)}
    # an unrelated, weaker receive on a host port of the propagating leaf
    rx = {("spine-1", "Ethernet0"): 5e6, ("leaf-b", "Ethernet256"): 4e6, ("leaf-b", "Ethernet4"): 9e5}
    got = {o.component: o for o in trace(_fabric(tx, rx), _LINKS)}
    assert got["leaf-a/Ethernet256"].victims and not got["leaf-b/Ethernet4"].reached
    assert next(iter(got)) == "leaf-a/Ethernet256"  # the one that explains the spread leads


def test_a_host_outside_the_job_behind_the_origin_port_is_cordoned_and_no_job_node_is_touched() -> None:
    from forensic.harness.models import EvidenceRecord, Finding, Report, Verdict
    from forensic.harness.proposals import make_proposals
    from forensic.tools.base import Signal

    sig = Signal(
        name="switch_port_pause_origin",
        component="leaf-3/Ethernet64",
        kind="port",
        detail="d",
        values={"origin_host": "spare-9", "cabled_to": "spare-9/mlx5_0"},
    )
    rec = EvidenceRecord(id="ev-1", tool="fabric", args={}, status="ok", summary="s", signals=[sig])
    report = Report(
        incident="i",
        status="confirmed",
        verdict=Verdict(root_cause="pfc_pause_storm", component="leaf-3/Ethernet64", confidence=0.9),
        findings=[Finding(claim="d", evidence=["ev-1"])],
        evidence=[rec],
    )
    got = {(p.action, p.target) for p in make_proposals(G, report)}
    assert got == {("disable_port", "leaf-3/Ethernet64"), ("cordon_node", "spare-9")}
    assert not any("no cordon_node proposed" in n for n in report.notes)


def _cleared_leaf(uplink_tx: float, busy_host_tx: float = 0.0, busy: int = 0) -> list[PortPause]:
    """A leaf whose counters were cleared: host ports sending a light 1,000-3,000 frames each (over
    the absolute floor), ``busy`` of them ``busy_host_tx``, its uplink ``uplink_tx`` to a spine that
    passes them on to its other leaf."""
    leaf = [
        PortPause("leaf-1", f"Ethernet{4 * i}", busy_host_tx if i < busy else 1_000.0 + 70 * i, 0.0, "t")
        for i in range(30)
    ]
    leaf.append(PortPause("leaf-1", "Ethernet256", uplink_tx, 0.0, "t"))
    spine = [
        PortPause("spine-1", "Ethernet0", 0.0, uplink_tx, "t"),
        PortPause("spine-1", "Ethernet8", uplink_tx * 0.8, 0.0, "t"),
    ]
    other = [PortPause("leaf-2", "Ethernet256", 0.0, uplink_tx * 0.8, "t")]
    other += [PortPause("leaf-2", f"Ethernet{4 * i}", uplink_tx * 0.2, 0.0, "t") for i in range(4)]
    return leaf + spine + other


_CLEARED_LINKS = {
    ("leaf-1", "Ethernet256"): ("spine-1", "Ethernet0"),
    ("spine-1", "Ethernet0"): ("leaf-1", "Ethernet256"),
    ("leaf-2", "Ethernet256"): ("spine-1", "Ethernet8"),
    ("spine-1", "Ethernet8"): ("leaf-2", "Ethernet256"),
}


def test_ports_far_below_the_strongest_are_background_however_many_cross_the_floor() -> None:
    # the quiet level is 0 (cleared counters), so all 30 light host ports cross the 1,000 floor;
    # they stay more than 10x below the uplink's 90M, which is one origin
    got = trace(_cleared_leaf(90_000_000), _CLEARED_LINKS)
    assert [(o.switch, o.port, o.sender) for o in got] == [("leaf-1", "Ethernet256", "switch")]
    assert set(got[0].reached) == {"spine-1", "leaf-2"} and len(got[0].victims) == 4


def test_a_leaf_pausing_several_ports_at_its_strongest_level_is_congested() -> None:
    # six host ports within 10x of the uplink: the leaf pauses widely, no one port starts it
    assert trace(_cleared_leaf(90_000_000, busy_host_tx=20_000_000, busy=6), _CLEARED_LINKS) == []
