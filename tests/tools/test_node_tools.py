"""Node-level tools on hand-written bundles: the right signal on the right component, decoys ignored."""

from __future__ import annotations

from pathlib import Path

import pytest
from forensic.sandbox import Bundle, ToolArgumentError
from forensic.tools import ToolContext, get_tool


def run(bundle: Path, tool: str, **args):
    return get_tool(tool)(ToolContext(Bundle(bundle)), args)


def names(result, component=None):
    return {s.name for s in result.signals if component is None or s.component == component}


def test_pcie_link_finds_the_narrow_link_and_ignores_the_idle_spare(make_bundle) -> None:
    res = run(make_bundle("pcie_downtrain"), "pcie_link")
    assert res.status == "ok"
    degraded = [s for s in res.signals if s.name == "pcie_degraded"]
    assert [s.component for s in degraded] == ["node-b.example/gpu2"]
    assert degraded[0].values["cur_width"] == 8 and degraded[0].values["max_width"] == 16
    assert "spare-c.example/gpu0" in " ".join(res.data["idle_low_generation"])
    assert "node-b.example/gpu2" in res.covered


def test_pcie_link_healthy_fleet_has_no_signal(make_bundle) -> None:
    res = run(make_bundle(None), "pcie_link")
    assert res.status == "ok" and not res.signals


def test_pcie_link_reads_a_lost_device_as_lost_not_as_63_lanes(make_bundle) -> None:
    res = run(make_bundle("gpu_fell_off_bus"), "pcie_link", host="node-b.example")
    assert names(res, "node-b.example/gpu2") == {"device_lost"}
    assert "pcie_degraded" not in names(res)


@pytest.mark.parametrize(
    "fault,expected",
    [
        ("thermal_throttle", {"thermal_slowdown", "clocks_reduced", "gpu_hot"}),
        ("power_throttle", {"power_slowdown", "clocks_reduced"}),
        ("hbm_degradation", {"ecc_uncorrectable", "remap_pending"}),
        ("gpu_fell_off_bus", {"device_lost"}),
    ],
)
def test_gpu_health_signals(make_bundle, fault: str, expected: set[str]) -> None:
    res = run(make_bundle(fault), "gpu_health")
    assert names(res, "node-b.example/gpu2") == expected
    assert {s.component for s in res.signals} == {"node-b.example/gpu2"}


def test_gpu_health_warm_gpu_is_not_a_finding(make_bundle) -> None:
    res = run(make_bundle(None), "gpu_health")
    assert not res.signals
    assert "node-a.example/gpu1" in res.summary  # said, as warm but not throttled


def test_kernel_log_window_and_mapping(make_bundle) -> None:
    res = run(make_bundle("gpu_fell_off_bus"), "kernel_log")
    assert names(res) == {"xid_fell_off_bus"}
    assert res.signals[0].component == "node-b.example/gpu2"
    assert any("XID 13" in h for h in res.data["history"])  # two days old: history, not a symptom


def test_kernel_log_memory_xid(make_bundle) -> None:
    res = run(make_bundle("hbm_degradation"), "kernel_log", host="node-b.example")
    assert names(res) == {"xid_memory"}


def test_unknown_host_is_an_argument_error(make_bundle) -> None:
    with pytest.raises(ToolArgumentError):
        run(make_bundle(None), "pcie_link", host="nope")


@pytest.mark.parametrize("args", [{"host": "../etc"}, {"host": "a b"}, {"path": "/etc/passwd"}, {"host": 3}])
def test_invalid_arguments_are_refused_before_use(make_bundle, args) -> None:
    with pytest.raises(ToolArgumentError):
        get_tool("gpu_health").validate(args)


def test_missing_files_are_no_data(tmp_path: Path) -> None:
    (tmp_path / "incident.json").write_text('{"schema": "forensic.bundle/v1", "id": "empty"}')
    for tool in ("pcie_link", "gpu_health", "kernel_log", "metrics"):
        assert run(tmp_path, tool).status == "no_data"


def test_without_topology_or_nvml_gpus_are_numbered_by_pci_address(make_bundle) -> None:
    """NVML numbers GPUs in PCI order; lspci alone is enough to name the GPU an XID points at."""
    b = make_bundle("gpu_fell_off_bus")
    (b / "topology.json").unlink()
    for h in ("node-a.example", "node-b.example", "spare-c.example"):
        (b / "nodes" / h / "nvml.json").unlink()
    lspci = "".join(
        f"{bus}:00.0 3D controller: NVIDIA Corporation Device 2330 (rev a1)\n\n"
        for bus in ["5d", "18", "3a", "2a"]
    )
    (b / "nodes/node-b.example/cmd/lspci-vv.txt").write_text(lspci)
    res = run(b, "kernel_log", host="node-b.example")
    assert [s.component for s in res.signals] == ["node-b.example/gpu2"]


def _smi_block(bus: str, minor: int) -> str:
    return f"GPU 00000000:{bus.upper()}:00.0\n    Product Name                          : NVIDIA H100 80GB HBM3\n    Minor Number                          : {minor}\n\n"


@pytest.mark.parametrize("other_source", ["lspci", "smi_before"])
def test_a_gpu_gone_from_nvidia_smi_keeps_its_place_among_the_others(make_bundle, other_source: str) -> None:
    """A GPU off the bus leaves nvidia-smi with one line about its lost handle: numbering by that
    list alone made it gpu0. Its place comes from every GPU the host lists (lspci, or nvidia-smi
    at the window's start), so the lost one is named as NVML numbers it."""
    b = make_bundle("gpu_fell_off_bus")
    (b / "topology.json").unlink()
    for h in ("node-a.example", "node-b.example", "spare-c.example"):
        (b / "nodes" / h / "nvml.json").unlink()
    node = b / "nodes/node-b.example"
    (node / "cmd").mkdir(parents=True, exist_ok=True)
    (node / "cmd/nvidia-smi-q.txt").write_text(
        "Unable to determine the device handle for GPU00000000:3A:00.0: Unknown Error\n"
    )
    if other_source == "lspci":
        (node / "cmd/lspci-vv.txt").write_text(
            "".join(
                f"{bus}:00.0 3D controller: NVIDIA Corporation Device 2330 (rev a1)\n\n"
                for bus in ["5d", "18", "3a", "2a"]
            )
        )
    else:
        (node / "before/cmd").mkdir(parents=True, exist_ok=True)
        (node / "before/cmd/nvidia-smi-q.txt").write_text(
            "".join(_smi_block(bus, i) for i, bus in enumerate(["18", "2a", "3a", "5d"]))
        )
    res = run(b, "gpu_health", host="node-b.example")
    assert {s.component for s in res.signals if s.name == "device_lost"} == {"node-b.example/gpu2"}
