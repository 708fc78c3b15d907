"""Link errors seen from the switch side (``show interfaces counters`` RX_ERR / TX_ERR): the spec
names the switch port (evidence in the forms other sites record)."""

from __future__ import annotations

from pathlib import Path

import pytest
from forensic.harness.failure_graph import beliefs, default_graph, observe
from forensic.sandbox import Bundle
from forensic.tools import ToolContext, get_tool

G = default_graph()
HEAD = (
    "      IFACE    STATE       RX_OK        RX_BPS    RX_UTIL    RX_ERR    RX_DRP    RX_OVR       TX_OK        TX_BPS    TX_UTIL    TX_ERR    TX_DRP    TX_OVR\n"
    "-----------  -------  ----------  ------------  ---------  --------  --------  --------  ----------  ------------  ---------  --------  --------  --------\n"
)
#: The same table as ``show interfaces counters -a`` prints it (with the PPS columns).
HEAD_A = (
    "      IFACE    STATE       RX_OK        RX_BPS    RX_PPS    RX_UTIL    RX_ERR    RX_DRP    RX_OVR       TX_OK        TX_BPS    TX_PPS    TX_UTIL    TX_ERR    TX_DRP    TX_OVR\n"
    "-----------  -------  ----------  ------------  --------  ---------  --------  --------  --------  ----------  ------------  --------  ---------  --------  --------  --------\n"
)


def _table(errs: dict[int, tuple[int, int]], *, wide: bool = False, ports: int = 12) -> str:
    rows = []
    for i in range(ports):
        rx, tx = errs.get(i, (0, 0))
        pps = "  812,345/s " if wide else ""
        pps_tx = "  811,992/s " if wide else ""
        rows.append(
            f"  Ethernet{4 * i:<3}        U  {91_000_000_000 + i:,}    10.20 GB/s {pps}    20.40%  {rx:>8,}         0         0  "
            f"{91_000_077_123 + i:,}    10.10 GB/s {pps_tx}    20.20%  {tx:>8,}         0         0"
        )
    return (HEAD_A if wide else HEAD) + "\n".join(rows) + "\n"


def _fabric(root: Path, table: str):
    from tests.conftest import build_fabric_bundle

    build_fabric_bundle(root, None)
    p = root / "switches/leaf-1/cmd/show-interfaces-counters.txt"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(table)
    return get_tool("fabric")(ToolContext(Bundle(root)), {})


@pytest.mark.parametrize(
    "errs,wide,port",
    [
        ({4: (8_004_000, 0)}, False, "Ethernet16"),  # frames from the cabled NIC arrive corrupted
        ({1: (0, 25_000)}, False, "Ethernet4"),  # the switch's own transmit side
        ({7: (61_220, 12)}, True, "Ethernet28"),  # show interfaces counters -a
        ({2: (3, 0), 5: (1, 0), 9: (4_400_000, 0)}, False, "Ethernet36"),  # a few errors elsewhere are normal
    ],
)
def test_one_port_whose_errors_stand_out_is_named(tmp_path, errs, wide, port) -> None:
    res = _fabric(tmp_path / "b", _table(errs, wide=wide))
    got = [s for s in res.signals if s.name == "switch_port_errors"]
    assert [s.component for s in got] == [f"leaf-1/{port}"] and got[0].kind == "port"
    assert f"leaf-1/{port}" in res.covered


@pytest.mark.parametrize(
    "errs",
    [
        {},  # clean
        {3: (12, 0), 8: (40, 1)},  # a few errors on any healthy port
        {i: (50_000 + i, 0) for i in range(10)},  # most ports: not one link
    ],
)
def test_no_single_failing_link(tmp_path, errs) -> None:
    res = _fabric(tmp_path / "b", _table(errs))
    assert res.status == "ok" and not [s for s in res.signals if s.name == "switch_port_errors"]


def test_switch_port_errors_lead_but_do_not_confirm_alone() -> None:
    """One snapshot cannot place the errors in the window: the port leads, probable at most."""
    sig = {
        "name": "switch_port_errors",
        "component": "leaf-1/Ethernet16",
        "kind": "port",
        "detail": "d",
        "values": {},
    }
    slow = {"name": "slowdown_in_comm", "component": "job", "kind": "job", "detail": "d", "values": {}}
    recs = [
        {
            "id": "ev-1",
            "tool": "job_steps",
            "status": "ok",
            "covered": ["job"],
            "summary": "s",
            "args": {},
            "signals": [slow],
        },
        {
            "id": "ev-2",
            "tool": "fabric",
            "status": "ok",
            "covered": ["leaf-1", "leaf-1/Ethernet16"],
            "summary": "s",
            "args": {},
            "signals": [sig],
        },
    ]
    top = next(h for h in beliefs(G, observe(recs)) if h.root_cause != "healthy")
    assert (top.root_cause, top.component, top.confirmed) == ("link_degradation", "leaf-1/Ethernet16", False)


# --- the host side of a lossy link: RDMA transport retries (hw_counters) -----------------------


def _retries(root: Path, per_host: dict[str, dict[str, tuple[int, int]]]) -> object:
    """Write hw_counters before/now for each fabric host's mlx5_0; per_host: counter -> (before, now)."""
    for host, counters in per_host.items():
        for snap, idx in (("before/", 0), ("", 1)):
            base = root / f"nodes/{host}/{snap}sys/class/infiniband/mlx5_0/ports/1/hw_counters"
            base.mkdir(parents=True, exist_ok=True)
            for name, vals in counters.items():
                (base / name).write_text(f"{vals[idx]}\n")
    return get_tool("nic_counters")(ToolContext(Bundle(root)), {})


HOSTS4 = ("node-a.example", "node-b.example", "node-c.example", "node-d.example")


@pytest.mark.parametrize(
    "bad",
    [
        {
            "out_of_sequence": (12, 175_000),
            "packet_seq_err": (1, 40_000),
        },  # go-back-N after corrupted packets
        {
            "local_ack_timeout_err": (0, 1_600),
            "packet_seq_err": (2, 8_100),
        },  # ACK timeouts: packets never arrive
    ],
)
def test_retries_at_one_nic_mark_its_path(tmp_path, bad) -> None:
    from tests.conftest import build_fabric_bundle

    root = build_fabric_bundle(tmp_path / "b", None)
    quiet = {k: (5, 9) for k in bad}
    res = _retries(root, {h: (bad if h == "node-b.example" else quiet) for h in HOSTS4})
    assert [s.component for s in res.signals if s.name == "rdma_retransmits"] == ["node-b.example/mlx5_0"]


def test_retries_everywhere_are_congestion_not_one_link(tmp_path) -> None:
    from tests.conftest import build_fabric_bundle

    root = build_fabric_bundle(tmp_path / "b", None)
    res = _retries(
        root,
        {
            h: {"out_of_sequence": (10, 9_000 + 500 * i), "packet_seq_err": (1, 800)}
            for i, h in enumerate(HOSTS4)
        },
    )
    assert not [s for s in res.signals if s.name == "rdma_retransmits"]


def test_retries_lift_the_nic_with_fec_errors() -> None:
    def rec(i, tool, name, comp):
        return {
            "id": f"ev-{i}",
            "tool": tool,
            "status": "ok",
            "covered": [comp, comp.split("/")[0]],
            "summary": "s",
            "args": {},
            "signals": [{"name": name, "component": comp, "kind": "nic", "detail": "d", "values": {}}],
        }

    base = [rec(1, "nic_fec", "fec_uncorrectable", "h1/mlx5_1")]
    quiet = {**rec(2, "nic_counters", "x", "h1/mlx5_1"), "signals": []}  # read, found no link errors
    without = next(h for h in beliefs(G, observe([*base, quiet])) if h.root_cause == "link_degradation")
    with_rtx = next(
        h
        for h in beliefs(G, observe([*base, rec(2, "nic_counters", "rdma_retransmits", "h1/mlx5_1")]))
        if h.root_cause == "link_degradation"
    )
    assert with_rtx.score > without.score and with_rtx.component == "h1/mlx5_1"
