"""The headline must explain the symptom: a per-part anomaly that cannot account for the size and
breadth of a slowdown does not lead, and when nothing found explains it the run says so
(inconclusive, no remediation against an unrelated part).

The bundles here are the unit fleet of tests/conftest.py with a job-wide slowdown written into
steps.csv and a normal-looking local anomaly as a decoy, in several presentations."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from forensic.harness.failure_graph import Hypothesis, load_failure_graph
from forensic.harness.graph import Investigator
from forensic.harness.report import cannot_explain

from tests.conftest import HOSTS, START, build_bundle


def _steps(
    root: Path, *, comm_after: float, late_rank: int | None = None, late: float = 1.0, every: int = 30
) -> None:
    """120 logged steps (one in ``every``); from the 40th every step's communication is
    ``comm_after`` s (0.2 before), and ``late_rank`` computes ``late`` x slower."""
    rng = np.random.default_rng(3)
    rows, t = ["step,rank,start_unix,duration_s,compute_s"], START
    for s in range(120):
        comp = 1.0 + rng.normal(0, 0.01, 8)
        if s >= 40 and late_rank is not None:
            comp[late_rank] *= late
        dur = comp.max() + (0.2 if s < 40 else comm_after)
        for r in range(8):
            rows.append(f"{s * every},{r},{t:.3f},{dur + rng.normal(0, 0.001):.4f},{comp[r]:.4f}")
        t += every * dur
    (root / "job" / "steps.csv").write_text("\n".join(rows) + "\n")


def _decoy(root: Path, kind: str, host: int = 1, gpu: int = 2) -> None:
    p = root / f"nodes/{HOSTS[host]}/nvml.json"
    d = json.loads(p.read_text())
    g = d["devices"][gpu]
    if kind == "power_cap":  # at its limit under the SW power cap, a little below its peers' clock
        g.update(
            {
                "nvmlDeviceGetPowerUsage": 699000,
                "nvmlDeviceGetCurrentClocksEventReasons": 0x4,
                "nvmlDeviceGetClockInfo": {"sm": 1830, "mem": 2619},
            }
        )
    elif kind == "power_brake":
        g.update(
            {
                "nvmlDeviceGetPowerUsage": 699000,
                "nvmlDeviceGetCurrentClocksEventReasons": 0x80,
                "nvmlDeviceGetClockInfo": {"sm": 1750, "mem": 2619},
            }
        )
    elif kind == "thermal":
        g.update(
            {
                "nvmlDeviceGetTemperature": 88,
                "nvmlDeviceGetCurrentClocksEventReasons": 0x20,
                "nvmlDeviceGetClockInfo": {"sm": 1800, "mem": 2619},
            }
        )
    p.write_text(json.dumps(d))


def _bundle(tmp_path: Path, name: str, title: str) -> Path:
    root = build_bundle(tmp_path / name, None, n_steps=120)
    inc = json.loads((root / "incident.json").read_text())
    inc["title"] = title
    (root / "incident.json").write_text(json.dumps(inc))
    return root


@pytest.mark.parametrize(
    "decoy,title",
    [
        ("power_cap", "Step time doubled since 02:10"),
        ("power_brake", "MFU down by half since 02:10"),
        ("thermal", "Training throughput dropped sharply overnight"),
    ],
)
def test_a_local_anomaly_never_leads_a_job_wide_slowdown_with_no_late_rank(
    tmp_path: Path, decoy: str, title: str
) -> None:
    root = _bundle(tmp_path, decoy, title)
    _steps(root, comm_after=1.2)  # every rank's steps nearly 2x longer, in communication, nobody late
    _decoy(root, decoy)
    report = Investigator(root).run()
    part = f"{HOSTS[1]}/gpu2"
    assert report["verdict"]["component"] != part, report["verdict"]
    assert report["status"] == "inconclusive"
    assert not any(p["target"] in (part, HOSTS[1]) for p in report["proposals"])
    assert any(n.startswith("inconclusive: nothing found explains") for n in report["notes"]) or report[
        "status_reason"
    ].startswith("not healthy")
    assert all(lead["component"] != part for lead in report["leading"])


def test_a_part_late_by_far_less_than_the_slowdown_does_not_lead(tmp_path: Path) -> None:
    root = _bundle(tmp_path, "size", "Step time doubled since 02:10")
    _steps(root, comm_after=1.2, late_rank=6, late=1.04)  # node-b gpu2 computes 4% late; steps ~2x longer
    _decoy(root, "power_brake")
    report = Investigator(root).run()
    part = f"{HOSTS[1]}/gpu2"
    assert not (report["verdict"]["component"] == part and report["status"] in ("confirmed", "probable")), (
        report["verdict"]
    )
    assert not any(p["target"] in (part, HOSTS[1]) for p in report["proposals"])
    assert any("cannot explain the slowdown's size" in n for n in report["notes"]), report["notes"]


def test_a_part_that_is_late_by_as_much_as_the_job_still_leads(tmp_path: Path) -> None:
    """The rule is about explanation, not about blaming less: the same decoy GPU, now the late rank
    that makes the job slower, is named."""
    root = _bundle(tmp_path, "real", "Step time up since 02:10")
    _steps(root, comm_after=0.2, late_rank=6, late=1.25)
    _decoy(root, "power_brake")
    report = Investigator(root).run()
    assert report["verdict"] == {
        **report["verdict"],
        "root_cause": "power_throttle",
        "component": f"{HOSTS[1]}/gpu2",
    }
    assert report["status"] in ("confirmed", "probable") and report["proposals"]


def _rec(signals: list[dict], has_compute: bool = True) -> dict:
    return {
        "id": "ev-1",
        "tool": "job_steps",
        "status": "ok",
        "data": {"has_compute": has_compute},
        "signals": signals,
    }


def _hyp(rc: str, comp: str, kind: str) -> Hypothesis:
    return Hypothesis(root_cause=rc, component=comp, kind=kind, score=1.0, probability=0.5)


def test_the_rule_applies_only_to_causes_that_act_through_late_ranks() -> None:
    graph = load_failure_graph()
    slow = {"name": "job_slowdown", "component": "job", "values": {"ratio": 2.0}}
    late = {"name": "straggler", "component": "a/gpu1", "values": {"slowdown_pct": 90.0}}
    recs = [_rec([slow, late])]
    assert "not on b/gpu2" in cannot_explain(
        graph, _hyp("thermal_throttle", "b/gpu2", "gpu"), recs, "mfu_drop"
    )
    assert cannot_explain(graph, _hyp("thermal_throttle", "a/gpu1", "gpu"), recs, "mfu_drop") is None
    assert (
        cannot_explain(graph, _hyp("host_contention", "a", "host"), recs, "mfu_drop") is None
    )  # its host is late
    # Causes that slow communication, or a whole job, are not judged by late ranks.
    for rc, comp, kind in (
        ("nvlink_fault", "b/gpu2", "gpu"),
        ("link_degradation", "b/mlx5_0", "nic"),
        ("pcie_downtrain", "b/mlx5_0", "nic"),
        ("nccl_misconfiguration", "job", "job"),
    ):
        assert cannot_explain(graph, _hyp(rc, comp, kind), recs, "mfu_drop") is None
    # Without per-rank compute times nothing can be said.
    assert (
        cannot_explain(graph, _hyp("thermal_throttle", "b/gpu2", "gpu"), [_rec([slow], False)], "mfu_drop")
        is None
    )
    # A hang is not a slowdown.
    assert (
        cannot_explain(graph, _hyp("thermal_throttle", "b/gpu2", "gpu"), [_rec([])], "collective_timeout")
        is None
    )


def test_the_part_kind_comes_from_the_evidence_not_the_playbooks_first_kind() -> None:
    """pcie_downtrain can blame a GPU or a NIC; its hypothesis on a NIC must not be judged as a
    GPU's (a NIC's narrow link slows communication, not any rank's compute)."""
    graph = load_failure_graph()
    nic_seen = {
        "id": "ev-2",
        "tool": "pcie_link",
        "status": "ok",
        "data": {},
        "signals": [{"name": "pcie_degraded", "component": "b/mlx5_3", "kind": "nic"}],
    }
    recs = [_rec([{"name": "job_slowdown", "component": "job", "values": {"ratio": 1.3}}]), nic_seen]
    assert cannot_explain(graph, _hyp("pcie_downtrain", "b/mlx5_3", "gpu"), recs, "mfu_drop") is None
    # A GPU's narrow link slows its copies and its GPUDirect traffic (communication), not its
    # kernels: no late rank does not rule it out either.
    assert cannot_explain(graph, _hyp("pcie_downtrain", "b/gpu3", "gpu"), recs, "mfu_drop") is None
    assert cannot_explain(graph, _hyp("thermal_throttle", "b/gpu3", "gpu"), recs, "mfu_drop") is not None


def _narrow(root: Path, host: str, gpu: int, how: str) -> None:
    """Train ``host``'s ``gpu`` below its link's capability, as sysfs and NVML both say."""
    p = root / f"nodes/{host}/nvml.json"
    d = json.loads(p.read_text())
    g = d["devices"][gpu]
    sysdir = root / f"nodes/{host}/sys/bus/pci/devices/0000:{g['pci_bus_id'][9:11].lower()}:00.0"
    if how == "width":
        g["nvmlDeviceGetCurrPcieLinkWidth"] = 4
        (sysdir / "current_link_width").write_text("4\n")
    else:  # Gen5 -> Gen3
        g["nvmlDeviceGetCurrPcieLinkGeneration"] = 3
        (sysdir / "current_link_speed").write_text("8.0 GT/s PCIe\n")
    p.write_text(json.dumps(d))


@pytest.mark.parametrize(
    "host,gpu,how,decoy,title",
    [
        (1, 3, "speed", None, "Step time up ~30% since 02:10"),
        (0, 1, "width", "power_cap", "MFU down by a third since 02:10"),
        (1, 0, "speed", "thermal", "Training throughput dropped overnight"),
    ],
)
def test_a_gpus_downtrained_link_explains_a_communication_slowdown_with_no_late_rank(
    tmp_path: Path, host: int, gpu: int, how: str, decoy: str | None, title: str
) -> None:
    """The slowdown is all in communication and no rank computes late: a GPU whose PCIe link
    trained below its capability still explains it (its collectives cross that link), so it leads
    rather than being set aside as a straggler cause; the spare host's idle GPUs at Gen1 (power
    saving) and a normal local anomaly elsewhere stay decoys."""
    root = _bundle(tmp_path, f"{how}-{host}{gpu}", title)
    _steps(root, comm_after=0.55)
    _narrow(root, HOSTS[host], gpu, how)
    if decoy:
        _decoy(root, decoy, host=1 - host, gpu=2)
    report = Investigator(root).run()
    part = f"{HOSTS[host]}/gpu{gpu}"
    assert report["verdict"]["root_cause"] == "pcie_downtrain", (report["verdict"], report["notes"])
    assert report["verdict"]["component"] == part
    assert report["status"] in ("probable", "confirmed"), report["status_reason"]
    assert not any("cannot explain" in n and part in n for n in report["notes"]), report["notes"]
    assert not any(p["target"].startswith("spare") for p in report["proposals"])
