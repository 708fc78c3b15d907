"""ECMP polarization that starts inside the window is judged on the stretch where it lasts,
not diluted by the window average; a one-interval burst is not polarization (issue 11)."""

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
            om.append(f'ifHCOutOctets{{instance="leaf-1",ifName="Ethernet{64 + 4 * i}"}} {total:.0f} {START + k * 600:.0f}')
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
