"""A metric file whose compressed stream is cut short is read up to the damage, named as read only
in part, and never taken for absence: its samples before the cut count, what was lost withholds a
full ``healthy`` (capped at a probable's strength when per-rank step telemetry clears every rank),
and the series the cut went through is not read as a GPU whose series stopped.

The bundles are the unit fleet of tests/conftest.py with a DCGM file written here in several
presentations (samples grouped series by series or scrape by scrape, OpenMetrics or Prometheus
text, ``hostname`` or ``Hostname`` labels), then cut part way."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from forensic.harness.graph import Investigator
from forensic.harness.health import PARTIAL_CAP
from forensic.sandbox import Bundle
from forensic.tools import ToolContext, get_tool

from tests.conftest import BUS, END, HOSTS, START, build_bundle

_METRICS = {
    "DCGM_FI_DEV_SM_CLOCK": lambda h, g, k: 1980,
    "DCGM_FI_DEV_GPU_TEMP": lambda h, g, k: 55 + g,
    "DCGM_FI_DEV_POWER_USAGE": lambda h, g, k: 610.5 + 3 * g,
    "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL": lambda h, g, k: 40 * h + g,  # static decoy counts
    "DCGM_FI_DEV_XID_ERRORS": lambda h, g, k: 0,
}


def _dcgm(layout: str, label: str) -> str:
    """Samples every 60 s over the window for every GPU of the unit fleet: grouped by series (as a
    dump of each series) or by scrape (every series at each time, as appended scrapes)."""
    times = [START - 600 + 60 * k for k in range(int((END - START + 1200) / 60))]
    gpus = [(h, g) for h in range(len(HOSTS)) for g in range(4)]

    def line(name: str, h: int, g: int, k: int, t: float) -> str:
        labels = f'gpu="{g}",pci_bus_id="00000000:{BUS[g].upper()}:00.0",{label}="{HOSTS[h]}"'
        return f"{name}{{{labels}}} {_METRICS[name](h, g, k)} {int(t * 1000)}"

    out: list[str] = []
    if layout == "by_series":
        for name in _METRICS:
            out += [f"# TYPE {name} gauge"]
            out += [line(name, h, g, k, t) for h, g in gpus for k, t in enumerate(times)]
    else:
        out += [f"# TYPE {name} gauge" for name in _METRICS]
        out += [line(name, h, g, k, t) for k, t in enumerate(times) for name in _METRICS for h, g in gpus]
    return "\n".join(out) + "\n"


def _bundle(tmp_path: Path, *, layout: str, suffix: str, label: str, keep: float, **kw) -> Path:
    root = build_bundle(tmp_path / "b", kw.pop("fault", None), **kw)
    inc = json.loads((root / "incident.json").read_text())
    inc["title"] = "DCGM exporter restarted mid-window; is the job fine?"
    (root / "incident.json").write_text(json.dumps(inc))
    data = gzip.compress(_dcgm(layout, label).encode(), mtime=0)
    (root / "metrics").mkdir(exist_ok=True)
    (root / f"metrics/dcgm{suffix}.gz").write_bytes(data[: int(len(data) * keep)])
    return root


PRESENTATIONS = [
    ("by_series", ".om", "hostname"),
    ("by_scrape", ".prom", "Hostname"),
    ("by_series", ".prom", "Hostname"),
]


@pytest.mark.parametrize("keep", [0.05, 0.1, 0.5])
@pytest.mark.parametrize("layout,suffix,label", PRESENTATIONS)
def test_the_metrics_tool_reads_the_part_before_the_cut_and_names_it(
    tmp_path: Path, layout, suffix, label, keep
) -> None:
    # Cut early, the stream breaks inside the first metric's series: a GPU whose series the cut went
    # through would look as if it stopped mid-window.
    root = _bundle(tmp_path, layout=layout, suffix=suffix, label=label, keep=keep)
    got = get_tool("metrics")(ToolContext(Bundle(root, verify_gzip="lazy")), {})
    assert got.status == "ok", got.summary
    assert got.partial and f"metrics/dcgm{suffix}" in got.partial[0] and "lost" in got.partial[0]
    assert not got.unread
    # The series the cut went through ends where the reading ended: no GPU is said to have stopped.
    assert not [s for s in got.signals if s.name == "metric_series_stopped"], got.signals


@pytest.mark.parametrize("layout,suffix,label", PRESENTATIONS)
def test_a_healthy_control_with_a_cut_metrics_file_is_healthy_when_every_rank_is_cleared(
    tmp_path: Path, layout, suffix, label
) -> None:
    root = _bundle(tmp_path, layout=layout, suffix=suffix, label=label, keep=0.4, spare_idle_low_gen=False)
    report = Investigator(root).run()
    assert report["status"] == "healthy", (report["status"], report["status_reason"])
    assert report["verdict"]["component"] is None
    assert report["verdict"]["confidence"] <= PARTIAL_CAP
    assert report["status_reason"].startswith("healthy, at most probable")
    assert f"metrics/dcgm{suffix}" in report["status_reason"]


@pytest.mark.parametrize("layout,suffix,label", PRESENTATIONS[:2])
def test_without_per_rank_compute_times_a_cut_metrics_file_keeps_the_run_inconclusive(
    tmp_path: Path, layout, suffix, label
) -> None:
    root = _bundle(tmp_path, layout=layout, suffix=suffix, label=label, keep=0.4, compute=False)
    report = Investigator(root).run()
    assert report["status"] == "inconclusive", report["status_reason"]
    assert "read only in part" in report["status_reason"], report["status_reason"]


def test_a_metrics_file_unreadable_from_its_first_byte_is_unread_not_absent(tmp_path: Path) -> None:
    root = _bundle(tmp_path, layout="by_series", suffix=".om", label="hostname", keep=1.0)
    gz = root / "metrics/dcgm.om.gz"
    gz.write_bytes(gz.read_bytes()[:12])  # the gzip header and nothing that decompresses
    got = get_tool("metrics")(ToolContext(Bundle(root, verify_gzip="lazy")), {})
    assert got.status == "error" and got.unread and "dcgm.om.gz" in got.unread[0], got
    report = Investigator(root).run()
    assert report["status"] == "inconclusive"
    assert report["status_reason"].startswith("not healthy: evidence could not be read")


@pytest.mark.parametrize("layout,suffix,label", PRESENTATIONS[1:])
def test_a_fault_found_elsewhere_still_leads_with_a_cut_metrics_file(
    tmp_path: Path, layout, suffix, label
) -> None:
    root = _bundle(tmp_path, layout=layout, suffix=suffix, label=label, keep=0.5, fault="pcie_downtrain")
    report = Investigator(root).run()
    assert report["verdict"]["root_cause"] == "pcie_downtrain"
    assert report["verdict"]["component"] == f"{HOSTS[1]}/gpu2"
    assert report["status"] in ("confirmed", "probable")
