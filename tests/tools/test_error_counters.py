"""Evidence only in counters, at scale: one part's error counters growing inside the window among
hundreds of hosts whose old, static counts are larger, with no XID and no per-rank timing.

The fleets come from tests/counter_fleet.py in several presentations (DCGM series as OpenMetrics
or Prometheus text with ``Hostname``/``hostname``/``instance`` labels, window-start and ``now``
snapshots of ``nvidia-smi nvlink -e``, ``nvml.json`` or ``nvidia-smi -q`` and ``ethtool
--show-fec``), fleet naming styles, and steps absent, without ``compute_s`` or with it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from forensic.harness.graph import Investigator
from forensic.sandbox import Bundle
from forensic.tools import ToolContext, get_tool
from forensic.tools._growth import outliers, snapshot_growth, z_cut
from forensic.tools.parsers.nvlink import parse_nvlink_errors

from tests.counter_fleet import write_fleet

# --- the peer test itself ---------------------------------------------------------------------


def test_a_large_static_count_has_no_growth_and_is_never_an_outlier() -> None:
    now = np.array([2_000_000, 5, 0, 0, 7, 3_000_000] + [0] * 500, dtype=float)
    before = now.copy()  # nothing moved: the millions are history
    found, med, n = outliers(snapshot_growth(now, before), floor=50)
    assert found == [] and med == 0 and n == now.size


def test_growth_far_beyond_the_peers_is_found_and_noise_is_not() -> None:
    rng = np.random.default_rng(1)
    growth = rng.integers(0, 6, 2048).astype(float)  # a few errors here and there
    growth[1234] = 900.0
    found, med, _ = outliers(growth, floor=50)
    assert [o.index for o in found] == [1234] and med < 5


def test_busy_links_that_all_correct_errors_are_judged_on_relative_growth() -> None:
    rng = np.random.default_rng(2)
    growth = rng.integers(20_000, 60_000, 2048).astype(float)
    assert outliers(growth, floor=10_000)[0] == []  # every link corrects: nobody stands out
    growth[7] = 4_000_000
    assert [o.index for o in outliers(growth, floor=10_000)[0]] == [7]


def test_a_part_with_one_reading_is_not_judged() -> None:
    g = snapshot_growth(np.array([9e6, 1.0, 2.0]), np.array([np.nan, 1.0, 2.0]))
    assert np.isnan(g[0])
    found, _, n = outliers(g, floor=1)
    assert found == [] and n == 2


def test_a_reset_counts_from_zero() -> None:
    assert snapshot_growth(np.array([40.0]), np.array([9000.0]))[0] == 40.0


def test_the_cut_tightens_with_the_number_of_parts() -> None:
    assert z_cut(10) == pytest.approx(3.5) and z_cut(16_384) > 4.8 > z_cut(1_000)


def test_nvlink_e_parser_keeps_every_counter_and_sums_the_error_ones() -> None:
    text = (
        "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\n\t Link 0: Replay Errors: 2\n\t Link 0: Recovery Errors: 1\n"
        "\t Link 0: CRC Errors: 5\n\t Link 1: CRC Errors: 40\n\t Link 1: Data Latency: 999\n"
        "GPU 1: NVIDIA H100 80GB HBM3\n\t Link 0: CRC Flit Errors: N/A\n\t Link 0: CRC Data Errors (Lane 2): 3\n"
        "garbage line\n" + "x" * 10_000 + "\n"
    )
    gpus = parse_nvlink_errors(text)
    assert [(g.index, g.errors, g.worst_link) for g in gpus] == [(0, 48, 1), (1, 3, 0)]
    assert gpus[0].counters["data latency"] == 999 and gpus[0].uuid == "GPU-1"
    assert parse_nvlink_errors("") == [] and parse_nvlink_errors("\x00\xff" * 1000) == []


# --- whole investigations on 256-host fleets ----------------------------------------------------

CASES = [
    # (fault, presentation options, expected root cause)
    ("nvlink", {"presentation": "snapshots", "gpu_readings": "nvml"}, "nvlink_fault"),
    (
        "nvlink",
        {"presentation": "series", "host_label": "hostname", "naming": "fqdn", "culprit": (3, 0)},
        "nvlink_fault",
    ),
    (
        "nvlink",
        {"presentation": "snapshots", "gpu_readings": "smi", "steps": "duration", "naming": "ip"},
        "nvlink_fault",
    ),
    (
        "ecc",
        {"presentation": "snapshots", "gpu_readings": "smi", "naming": "fqdn", "culprit": (201, 2)},
        "hbm_degradation",
    ),
    (
        "ecc",
        {"presentation": "series", "metric_format": "prometheus", "host_label": "instance"},
        "hbm_degradation",
    ),
    (
        "rows",
        {"presentation": "series", "host_label": "Hostname", "naming": "ip", "culprit": (17, 7)},
        "hbm_degradation",
    ),
    (
        "rows",
        {"presentation": "snapshots", "gpu_readings": "nvml", "steps": "compute", "culprit": (255, 1)},
        "hbm_degradation",
    ),
    ("fec", {"presentation": "snapshots", "culprit": (90, 3)}, "link_degradation"),
    (
        "fec_corrected",
        {"presentation": "snapshots", "naming": "ip", "culprit": (250, 6), "steps": "duration"},
        "link_degradation",
    ),
]


@pytest.mark.parametrize("fault,opts,root_cause", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_a_fault_seen_only_as_counter_growth_is_named(
    tmp_path: Path, fault: str, opts: dict, root_cause: str
) -> None:
    part = write_fleet(tmp_path / "b", fault=fault, seed=len(str(opts)), **opts)
    report = Investigator(tmp_path / "b").run()
    assert report["verdict"]["root_cause"] == root_cause, (
        report["status"],
        report["verdict"],
        report["notes"][:3],
    )
    assert report["verdict"]["component"] == part
    assert report["status"] in ("confirmed", "probable")
    # the counters that stood out are cited, with the peers' growth beside them
    assert any("rose by" in f["claim"] and "median" in f["claim"] for f in report["findings"]), report[
        "findings"
    ]


@pytest.mark.parametrize(
    "opts",
    [
        {"presentation": "snapshots", "gpu_readings": "nvml", "steps": "compute"},
        {
            "presentation": "series",
            "metric_format": "prometheus",
            "host_label": "hostname",
            "steps": "compute",
            "naming": "fqdn",
        },
    ],
)
def test_large_static_decoy_counts_never_make_a_fault(tmp_path: Path, opts: dict) -> None:
    write_fleet(tmp_path / "b", fault=None, decoys=120, **opts)
    report = Investigator(tmp_path / "b").run()
    assert report["status"] == "healthy", (report["verdict"], report["notes"][:3])


def test_a_static_uncorrectable_count_is_history_but_a_new_one_is_not(tmp_path: Path) -> None:
    """gpu_health: rows remapped for uncorrectable errors before the window (same count in the
    window-start snapshot) are no finding; the same count appearing in the window is."""
    write_fleet(tmp_path / "b", fault=None, presentation="snapshots", decoys=80)
    ctx = ToolContext(Bundle(tmp_path / "b", verify_gzip="lazy"))
    result = get_tool("gpu_health")(ctx, {})
    assert result.status == "ok" and not [s for s in result.signals if s.name == "ecc_uncorrectable"]
    assert "unchanged since the window start" in result.summary
    # Now one of those GPUs' window-start snapshot had fewer: the rows were remapped in the window.
    import json

    for p in sorted((tmp_path / "b/nodes").glob("*/before/nvml.json")):
        doc = json.loads(p.read_text())
        hit = [d for d in doc["devices"] if d["nvmlDeviceGetRemappedRows"]["uncorrected"] > 0]
        if hit:
            hit[0]["nvmlDeviceGetRemappedRows"]["uncorrected"] = 0
            p.write_text(json.dumps(doc))
            host, gpu = p.parent.parent.name, hit[0]["index"]
            break
    ctx = ToolContext(Bundle(tmp_path / "b", verify_gzip="lazy"))
    result = get_tool("gpu_health")(ctx, {})
    assert [s.component for s in result.signals if s.name == "ecc_uncorrectable"] == [f"{host}/gpu{gpu}"]


def test_the_tool_reads_every_host_and_scopes_its_findings(tmp_path: Path) -> None:
    part = write_fleet(tmp_path / "b", fault="nvlink", presentation="snapshots", culprit=(40, 4))
    ctx = ToolContext(Bundle(tmp_path / "b", verify_gzip="lazy"))
    tool = get_tool("error_counters")
    whole = tool(ctx, {})
    assert [s.component for s in whole.signals] == [part]
    assert whole.data["judged"]["nvlink_errors_rising"] == 256 * 8
    other = tool(ctx, {"host": "hgx-b0041"})
    assert other.status == "ok" and other.signals == []  # judged against the fleet, named only in scope
    mine = tool(ctx, {"host": "hgx-b0040"})
    assert [s.component for s in mine.signals] == [part]
