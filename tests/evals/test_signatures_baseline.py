"""The ``signatures`` baseline is an honest gpud/DCGM-style checker: in-window critical events,
hysteresis on reason bits, no alarm on history or on the normal SW power cap."""

from __future__ import annotations

import json
from pathlib import Path

from forensic.evals.baselines import _signatures
from forensic.sandbox import Bundle

from tests.conftest import START, build_bundle


def _nvml_edit(root: Path, host: str, index: int, **fields) -> None:
    p = root / "nodes" / host / "nvml.json"
    doc = json.loads(p.read_text())
    for d in doc["devices"]:
        if d.get("index") == index:
            d.update(fields)
    p.write_text(json.dumps(doc))


def test_no_alarm_on_a_healthy_fleet_with_history_and_power_capping(tmp_path: Path) -> None:
    root = build_bundle(tmp_path / "b", None)  # has an application XID from two days before the window
    old = "[  3600.000000] NVRM: Xid (PCI:0000:2a:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"
    dmesg = root / "nodes" / "node-b.example" / "cmd" / "dmesg.txt"
    dmesg.write_text(dmesg.read_text() + old)  # a critical XID, but three days old: history
    _nvml_edit(root, "node-a.example", 2, nvmlDeviceGetCurrentClocksEventReasons=0x4)  # SW power cap: normal
    assert _signatures(Bundle(root)) == ("healthy", None)


def test_an_in_window_critical_xid_alarms(tmp_path: Path) -> None:
    root = build_bundle(tmp_path / "b", "gpu_fell_off_bus")
    assert _signatures(Bundle(root)) == ("gpu_fell_off_bus", "node-b.example/gpu2")


def _reasons_om(root: Path, held: int) -> None:
    lines = ["# TYPE DCGM_FI_DEV_CLOCKS_EVENT_REASONS gauge"]
    for k in range(20):
        v = 0x40 if 5 <= k < 5 + held else 0
        lines.append(
            f'DCGM_FI_DEV_CLOCKS_EVENT_REASONS{{gpu="1",Hostname="node-a.example"}} {v} {START + 60 * k:.0f}'
        )
    lines.append("# EOF")
    (root / "metrics").mkdir(exist_ok=True)
    (root / "metrics" / "dcgm.om").write_text("\n".join(lines) + "\n")


def test_thermal_bits_alarm_only_when_held(tmp_path: Path) -> None:
    blip = build_bundle(tmp_path / "blip", None)
    _reasons_om(blip, held=2)
    assert _signatures(Bundle(blip)) == ("healthy", None)
    held = build_bundle(tmp_path / "held", None)
    _reasons_om(held, held=3)
    assert _signatures(Bundle(held)) == ("thermal_throttle", "node-a.example/gpu1")
