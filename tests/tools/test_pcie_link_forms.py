"""`lspci -vv` alone tells pcie_link everything the sysfs link files do (the committed examples rely on it).

One generated incident is written with both forms; two copies keep one form each (and no NVML, which
would fill the gaps), and the tool must read the same links, idle devices and signals from either.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from forensic.evals.generator import IncidentSpec, generate
from forensic.sandbox import Bundle
from forensic.tools import ToolContext, get_tool

CASES = [
    ("pcie_downtrain", "x8", "pcie_degraded"),  # a GPU link at half width
    ("pcie_downtrain", "gen", "pcie_degraded"),  # a GPU link a generation low
    ("pcie_downtrain", "nic-speed", "pcie_degraded"),  # a NIC's link slow
    ("gpu_fell_off_bus", "xid79", "device_lost"),  # all ones: Unknown / 63 in sysfs, rev ff in lspci
]


def _one_form(bundle: Path, dest: Path, keep: str) -> Path:
    shutil.copytree(bundle, dest)
    for node in (dest / "nodes").iterdir():
        for p in node.glob("nvml.json*"):
            p.unlink()
        if keep == "sysfs":
            for p in (node / "cmd").glob("lspci-vv.txt*"):
                p.unlink()
        else:
            shutil.rmtree(node / "sys")
    return dest


def _pcie_link(bundle: Path):
    return get_tool("pcie_link")(ToolContext(Bundle(bundle)), {})


@pytest.mark.parametrize("cause, variant, signal", CASES, ids=lambda v: str(v))
def test_lspci_reads_as_fully_as_the_sysfs_link_files(
    tmp_path: Path, cause: str, variant: str, signal: str
) -> None:
    spec = IncidentSpec(
        case="c",
        cause=cause,
        seed=11,
        hosts=4,
        variant=variant,
        decoys=["spare_low_gen"],
        opts={"n_spares": 1, "lspci": True, "before": False, "sysfs_hosts": "all"},
    )
    generate(spec, tmp_path / "gen")
    bundle = tmp_path / "gen" / "c" / "bundle"
    component = json.loads((tmp_path / "gen" / "c" / "truth.json").read_text())["component"]
    by_sysfs = _pcie_link(_one_form(bundle, tmp_path / "sysfs", "sysfs"))
    by_lspci = _pcie_link(_one_form(bundle, tmp_path / "lspci", "lspci"))

    assert by_sysfs.status == by_lspci.status == "ok"
    assert all("/sys/" in s for s in by_sysfs.source) and all("lspci" in s for s in by_lspci.source)
    # 5 hosts x (8 GPUs + 8 NICs), every one read
    assert len(by_sysfs.data["links"]) == len(by_lspci.data["links"]) == 80
    assert by_lspci.data["links"] == by_sysfs.data["links"]
    assert by_lspci.data["idle_low_generation"] == by_sysfs.data["idle_low_generation"]
    assert by_lspci.data["idle_low_generation"], "the spare's idle GPUs at a low generation are seen"
    got = [(s.name, s.component, s.values) for s in by_lspci.signals]
    assert got == [(s.name, s.component, s.values) for s in by_sysfs.signals]
    assert (signal, component) in {(name, comp) for name, comp, _ in got}
