"""Link errors seen from the switch side (``show interfaces counters`` RX_ERR / TX_ERR): the spec
names the switch port (issue 11, evidence in the forms other sites record)."""

from __future__ import annotations

from pathlib import Path

import pytest

from forensic.harness.failure_graph import beliefs, default_graph, observe
from forensic.sandbox import Bundle
from forensic.tools import ToolContext, get_tool

G = default_graph()
HEAD = ("      IFACE    STATE       RX_OK        RX_BPS    RX_UTIL    RX_ERR    RX_DRP    RX_OVR       TX_OK        TX_BPS    TX_UTIL    TX_ERR    TX_DRP    TX_OVR\n"
        "-----------  -------  ----------  ------------  ---------  --------  --------  --------  ----------  ------------  ---------  --------  --------  --------\n")
#: The same table as ``show interfaces counters -a`` prints it (with the PPS columns).
HEAD_A = ("      IFACE    STATE       RX_OK        RX_BPS    RX_PPS    RX_UTIL    RX_ERR    RX_DRP    RX_OVR       TX_OK        TX_BPS    TX_PPS    TX_UTIL    TX_ERR    TX_DRP    TX_OVR\n"
          "-----------  -------  ----------  ------------  --------  ---------  --------  --------  --------  ----------  ------------  --------  ---------  --------  --------  --------\n")


def _table(errs: dict[int, tuple[int, int]], *, wide: bool = False, ports: int = 12) -> str:
    rows = []
    for i in range(ports):
        rx, tx = errs.get(i, (0, 0))
        pps = "  812,345/s " if wide else ""
        pps_tx = "  811,992/s " if wide else ""
        rows.append(f"  Ethernet{4 * i:<3}        U  {91_000_000_000 + i:,}    10.20 GB/s {pps}    20.40%  {rx:>8,}         0         0  "
                    f"{91_000_077_123 + i:,}    10.10 GB/s {pps_tx}    20.20%  {tx:>8,}         0         0")
    return (HEAD_A if wide else HEAD) + "\n".join(rows) + "\n"


def _fabric(root: Path, table: str):
    from tests.conftest import build_fabric_bundle

    build_fabric_bundle(root, None)
    p = root / "switches/leaf-1/cmd/show-interfaces-counters.txt"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(table)
    return get_tool("fabric")(ToolContext(Bundle(root)), {})


@pytest.mark.parametrize("errs,wide,port", [
    ({4: (8_004_000, 0)}, False, "Ethernet16"),            # frames from the cabled NIC arrive corrupted
    ({1: (0, 25_000)}, False, "Ethernet4"),                # the switch's own transmit side
    ({7: (61_220, 12)}, True, "Ethernet28"),               # show interfaces counters -a
    ({2: (3, 0), 5: (1, 0), 9: (4_400_000, 0)}, False, "Ethernet36"),  # a few errors elsewhere are normal
])
def test_one_port_whose_errors_stand_out_is_named(tmp_path, errs, wide, port) -> None:
    res = _fabric(tmp_path / "b", _table(errs, wide=wide))
    got = [s for s in res.signals if s.name == "switch_port_errors"]
    assert [s.component for s in got] == [f"leaf-1/{port}"] and got[0].kind == "port"
    assert f"leaf-1/{port}" in res.covered


@pytest.mark.parametrize("errs", [
    {},                                               # clean
    {3: (12, 0), 8: (40, 1)},                         # a few errors on any healthy port
    {i: (50_000 + i, 0) for i in range(10)},          # most ports: not one link
])
def test_no_single_failing_link(tmp_path, errs) -> None:
    res = _fabric(tmp_path / "b", _table(errs))
    assert res.status == "ok" and not [s for s in res.signals if s.name == "switch_port_errors"]


def test_switch_port_errors_lead_but_do_not_confirm_alone() -> None:
    """One snapshot cannot place the errors in the window: the port leads, probable at most."""
    sig = {"name": "switch_port_errors", "component": "leaf-1/Ethernet16", "kind": "port", "detail": "d", "values": {}}
    slow = {"name": "slowdown_in_comm", "component": "job", "kind": "job", "detail": "d", "values": {}}
    recs = [{"id": "ev-1", "tool": "job_steps", "status": "ok", "covered": ["job"], "summary": "s", "args": {}, "signals": [slow]},
            {"id": "ev-2", "tool": "fabric", "status": "ok", "covered": ["leaf-1", "leaf-1/Ethernet16"], "summary": "s", "args": {},
             "signals": [sig]}]
    top = next(h for h in beliefs(G, observe(recs)) if h.root_cause != "healthy")
    assert (top.root_cause, top.component, top.confirmed) == ("link_degradation", "leaf-1/Ethernet16", False)
