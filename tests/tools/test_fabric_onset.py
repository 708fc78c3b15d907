"""ECMP polarization that starts inside the window is judged on the stretch where it lasts,
not diluted by the window average; a one-interval burst is not polarization."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import START
from tests.tools.test_fabric_tools import by_name, run


def _switch_om(root: Path, rates_of_interval) -> None:
    om = ["# TYPE ifHCOutOctets counter"]
    for i in range(4):
        total = 0.0
        for k in range(10):
            if k:
                total += rates_of_interval(k, i) / 8 * 600
            om.append(
                f'ifHCOutOctets{{instance="leaf-1",ifName="Ethernet{64 + 4 * i}"}} {total:.0f} {START + k * 600:.0f}'
            )
    om.append("# EOF")
    (root / "metrics" / "switch.om").write_text("\n".join(om) + "\n")


def test_polarization_that_starts_late_in_the_window_is_found(make_fabric_bundle) -> None:
    root = make_fabric_bundle(None)
    # balanced at 10 Gb/s, then the last three intervals put 30 Gb/s on one uplink and 3 on the others:
    # over the whole window the busiest uplink is only ~2x the median
    _switch_om(root, lambda k, i: (30e9 if i == 0 else 3e9) if k >= 7 else 10e9)
    res = run(root, "fabric")
    assert by_name(res, "switch_uplink_imbalance") == ["leaf-1"]
    assert "30.0 Gb/s" in next(s.detail for s in res.signals if s.name == "switch_uplink_imbalance")


def test_a_single_interval_burst_is_not_polarization(make_fabric_bundle) -> None:
    root = make_fabric_bundle(None)
    _switch_om(root, lambda k, i: (30e9 if i == 0 else 3e9) if k == 9 else 10e9)
    assert not by_name(run(root, "fabric"), "switch_uplink_imbalance")


def test_uplink_imbalance_from_show_interfaces_counters_alone(make_fabric_bundle) -> None:
    root = make_fabric_bundle(None)
    (root / "metrics" / "switch.om").unlink()  # no snmp series: only the SONiC snapshot
    head = (
        "      IFACE  STATE    RX_OK      RX_BPS  RX_UTIL  RX_ERR  RX_DRP  RX_OVR    TX_OK          TX_BPS  TX_UTIL  TX_ERR  TX_DRP  TX_OVR\n"
        "-----------  -----  -------  ----------  -------  ------  ------  ------  -------  --------------  -------  ------  ------  ------\n"
    )

    def row(port: str, tx: str) -> str:
        return f"{port:>11}      U  1,000  1.00 MB/s    0.01%       0       0     N/A    1,000  {tx:>14}   10.00%       0       0     N/A\n"

    out = root / "switches" / "leaf-1" / "cmd" / "show-interfaces-counters.txt"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        head
        + row("Ethernet0", "9.00 MB/s")
        + "".join(
            row(f"Ethernet{64 + 4 * i}", "27,004.73 MB/s" if i == 0 else "5,100.20 MB/s") for i in range(4)
        )
    )
    res = run(root, "fabric")
    assert by_name(res, "switch_uplink_imbalance") == ["leaf-1"]
    assert any(src.endswith("show-interfaces-counters.txt") for src in res.source)
    out.write_text(head + "".join(row(f"Ethernet{64 + 4 * i}", "5,100.20 MB/s") for i in range(4)))
    assert not by_name(run(root, "fabric"), "switch_uplink_imbalance")
