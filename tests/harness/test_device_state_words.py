"""An incident whose words say a *part* is degraded ("PCIe degraded alert", "link degraded") reports
a device state, often an alert's name, not a job below its level. Flat steps then answer it: the run
is ``healthy`` when nothing else is wrong. Said of the job ("job degraded", "throughput degraded")
with no onset, the word still withholds "no regression" as evidence of health."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from forensic.harness.graph import Investigator
from forensic.tools._incident_text import degraded_job, slow_from_start

from tests.conftest import build_bundle
from tests.counter_fleet import write_fleet

DEVICE = [
    (
        "PCIe degraded alert and step-time jitter, please check",
        "Alert fired for {spare}. Step time looks noisy.",
    ),
    ("GPU link degraded warning on {spare}", ""),
    ("{spare}: NIC port degraded, is the job affected?", "Saw it in the dashboard."),
    ("Degraded PCIe link reported by the exporter", "Only the spare, I think."),
]
JOB = [
    "Tensor-parallel job degraded; no XIDs reported by the alerting",
    "Training throughput degraded, nothing in the alerts",
]


@pytest.mark.parametrize(
    "text", [t for t, _ in DEVICE] + ["GPUPcieLinkDegraded fired", "degraded link on leaf-2"]
)
def test_a_part_said_degraded_is_not_the_job_below_its_level(text: str) -> None:
    assert not degraded_job(text.format(spare="h1")) and not slow_from_start(text.format(spare="h1"))


@pytest.mark.parametrize("text", JOB + ["job degraded; no XIDs"])
def test_the_job_said_degraded_is(text: str) -> None:
    assert degraded_job(text) and slow_from_start(text)


def _words(root: Path, title: str, reported: str, spare: str) -> None:
    inc = json.loads((root / "incident.json").read_text())
    inc["title"], inc["reported"] = title.format(spare=spare), reported.format(spare=spare)
    inc["alerts"] = [
        {
            "status": "firing",
            "labels": {"alertname": "GPUPcieLinkDegraded", "severity": "warning", "hostname": spare},
            "annotations": {"summary": "GPU PCIe link below max generation"},
            "startsAt": inc["window"]["start"],
        }
    ]
    (root / "incident.json").write_text(json.dumps(inc))


@pytest.mark.parametrize("words", DEVICE, ids=lambda w: w[0][:24])
def test_the_unit_fleet_with_a_degraded_alert_on_its_idle_spare_is_healthy(tmp_path: Path, words) -> None:
    root = build_bundle(tmp_path / "b", None)  # spare-c's idle GPUs at 2.5 GT/s (power saving)
    _words(root, *words, spare="spare-c.example")
    report = Investigator(root).run()
    assert report["status"] == "healthy", (report["status"], report["verdict"], report["status_reason"])
    assert "power saving" in report["status_reason"]


@pytest.mark.parametrize(
    ("naming", "steps"), [("fqdn", "compute"), ("ip", "duration"), ("dash", "compute")], ids=str
)
def test_a_large_fleet_with_a_degraded_alert_is_healthy(tmp_path: Path, naming: str, steps: str) -> None:
    root = tmp_path / "b"
    write_fleet(root, fault=None, naming=naming, steps=steps, hosts=64, decoys=20)
    spare = json.loads((root / "topology.json").read_text())["hosts"][-1]["name"]
    _words(root, *DEVICE[0], spare=spare)
    report = Investigator(root).run()
    assert report["status"] == "healthy", (report["status"], report["verdict"], report["status_reason"])


@pytest.mark.parametrize("title", JOB)
def test_flat_steps_do_not_answer_a_job_said_degraded_with_no_onset(tmp_path: Path, title: str) -> None:
    root = build_bundle(tmp_path / "b", None)
    _words(root, title, "", spare="spare-c.example")
    report = Investigator(root).run()
    assert report["status"] != "healthy"
    assert not any(
        s["name"] in ("steps_clean", "job_steady")
        for e in report["evidence"]
        if e["tool"] == "job_steps"
        for s in e.get("signals") or []
    )
