"""Healthy with noise: a spare host's idle GPUs in power-saving link states, a warm GPU with no
throttle reason, and a few correctable AER on a full-width link are no fault. The run says
``healthy`` with those reasons, not ``inconclusive`` leaning on an unrelated cause.

Two fleets: the unit fleet of tests/conftest.py (a spare host whose idle GPUs run at 2.5 GT/s
and a GPU at 83 C with no reason set), and a 256-host counter fleet (tests/counter_fleet.py)
with the same noise written into it, each with and without a slowdown-free per-rank telemetry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from forensic.harness.graph import Investigator

from tests.conftest import BUS, HOSTS, build_bundle
from tests.counter_fleet import write_fleet


def _aer_lines(bus: str, n: int, t0: float) -> list[str]:
    """``n`` correctable AER reports on one GPU (dmesg uptime stamps from ``t0``)."""
    out = []
    for i in range(n):
        t = t0 + 600 * i
        out += [
            f"[{t:.6f}] pcieport 0000:00:03.1: AER: Corrected error message received from 0000:{bus}:00.0",
            f"[{t:.6f}] nvidia 0000:{bus}:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)",
            f"[{t:.6f}] nvidia 0000:{bus}:00.0:   device [10de:2330] error status/mask=00000001/0000e000",
            f"[{t:.6f}] nvidia 0000:{bus}:00.0:    [ 0] RxErr                  (First)",
        ]
    return out


def _title(root: Path, title: str) -> None:
    inc = json.loads((root / "incident.json").read_text())
    inc["title"] = title
    (root / "incident.json").write_text(json.dumps(inc))


@pytest.mark.parametrize(
    "title", ["Weekly check: confirm the job is healthy", "Is node-a flaky? saw AER in dmesg"]
)
def test_the_unit_fleet_with_spare_warm_and_aer_noise_is_healthy(tmp_path: Path, title: str) -> None:
    root = build_bundle(tmp_path / "b", None)  # spare-c idle at 2.5 GT/s; node-a gpu1 at 83 C, no reason
    _title(root, title)
    dm = root / f"nodes/{HOSTS[0]}/cmd/dmesg.txt"
    up = 86400 * 3 + 900  # boot three days before the window: inside it
    dm.write_text(dm.read_text() + "\n".join(_aer_lines(BUS[0], 3, up)) + "\n")
    report = Investigator(root).run()
    assert report["status"] == "healthy", (report["status"], report["verdict"], report["notes"][:3])
    assert not report["proposals"] or all(p["action"] == "open_ticket" for p in report["proposals"])
    # the reasons: each piece of noise is named as what it is, in the status reason itself
    said = report["status_reason"]
    assert said.startswith("healthy:") and "seen and not a fault" in said
    assert "power saving" in said and "spare-c.example" in said
    assert "warm but not throttled" in said and f"{HOSTS[0]}/gpu1 at 83 C" in said
    assert "correctable AER on full-width links" in said and f"{HOSTS[0]}/gpu0 (3)" in said


def test_many_correctable_aer_on_a_downtrained_link_are_not_called_noise(tmp_path: Path) -> None:
    """The AER line alone never decides; on a link trained narrow the fault is the link."""
    root = build_bundle(tmp_path / "b", "pcie_downtrain")
    dm = root / f"nodes/{HOSTS[1]}/cmd/dmesg.txt"
    dm.write_text(dm.read_text() + "\n".join(_aer_lines(BUS[2], 3, 86400 * 3 + 900)) + "\n")
    report = Investigator(root).run()
    assert report["verdict"]["root_cause"] == "pcie_downtrain"
    assert report["verdict"]["component"] == f"{HOSTS[1]}/gpu2"


@pytest.mark.parametrize("presentation", ["snapshots", "series"])
def test_a_large_fleet_with_idle_spares_and_aer_noise_is_healthy(tmp_path: Path, presentation: str) -> None:
    root = tmp_path / "b"
    write_fleet(root, fault=None, presentation=presentation, steps="compute", hosts=256, decoys=80)
    # The last host is a spare: not in the job, its idle GPUs in a power-saving link state.
    topo = json.loads((root / "topology.json").read_text())
    spare = topo["hosts"][-1]["name"]
    inc = json.loads((root / "incident.json").read_text())
    inc["job"]["ranks"] = 255 * 8
    (root / "incident.json").write_text(json.dumps(inc))
    steps = root / "job/steps.csv.gz"
    import gzip

    rows = gzip.decompress(steps.read_bytes()).decode().splitlines()
    keep = [rows[0]] + [r for r in rows[1:] if int(r.split(",")[1]) < 255 * 8]
    steps.write_bytes(gzip.compress(("\n".join(keep) + "\n").encode()))
    for bus in ["18", "2a", "3a", "5d", "9a", "ab", "ba", "db"]:
        d = root / f"nodes/{spare}/sys/bus/pci/devices/0000:{bus}:00.0"
        d.mkdir(parents=True, exist_ok=True)
        (d / "current_link_speed").write_text("2.5 GT/s PCIe\n")
        (d / "max_link_speed").write_text("32.0 GT/s PCIe\n")
        (d / "current_link_width").write_text("16\n")
        (d / "max_link_width").write_text("16\n")
    busy = topo["hosts"][10]["name"]
    (root / f"nodes/{busy}/cmd").mkdir(parents=True, exist_ok=True)
    (root / f"nodes/{busy}/collected.json").write_text(
        json.dumps({"before": 1_780_282_800.0, "now": 1_780_286_400.0, "boot": 1_780_282_800.0 - 86400})
    )
    (root / f"nodes/{busy}/cmd").mkdir(parents=True, exist_ok=True)
    (root / f"nodes/{busy}/cmd/dmesg.txt").write_text("\n".join(_aer_lines("9a", 2, 86400 + 300)) + "\n")
    report = Investigator(root).run()
    assert report["status"] == "healthy", (report["status"], report["verdict"], report["notes"][:3])
