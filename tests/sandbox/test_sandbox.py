"""The replay sandbox: confinement, transparent gzip, allowlisted commands, bundle validation."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
from forensic.sandbox import (
    Bundle,
    ConfinedFS,
    CorruptInputError,
    NotABundleError,
    NotAllowedError,
    NotFoundError,
    PathEscapeError,
)


def write(root: Path, rel: str, text: str) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


@pytest.fixture
def case(tmp_path: Path) -> Path:
    """An evaluation case: bundle/ plus a truth.json that must stay unreachable."""
    b = tmp_path / "case" / "bundle"
    write(
        b,
        "incident.json",
        json.dumps(
            {
                "schema": "forensic.bundle/v1",
                "id": "t-1",
                "title": "MFU drop",
                "window": {"start": "2026-04-17T01:40:00Z", "end": 1776390600},
            }
        ),
    )
    write(b, "nodes/gpu-a/sys/bus/pci/devices/0000:18:00.0/current_link_width", "8\n")
    write(b, "nodes/gpu-a/cmd/lspci-vv.txt", "18:00.0 3D controller: NVIDIA\n")
    gz = b / "nodes/gpu-a/cmd/dmesg.txt.gz"
    gz.parent.mkdir(parents=True, exist_ok=True)
    gz.write_bytes(gzip.compress(b"[ 1.0] NVRM: hello\n"))
    write(tmp_path / "case", "truth.json", json.dumps({"root_cause": "pcie_downtrain"}))
    return tmp_path / "case"


def test_case_folder_opens_its_bundle_and_parses_times(case: Path) -> None:
    b = Bundle(case)
    assert b.root.name == "bundle"
    assert b.incident.id == "t-1"
    assert b.incident.window.start == 1776390000.0
    assert b.incident.window.end == 1776390600.0
    assert b.host_names() == ["gpu-a"]


def test_gzip_is_transparent(case: Path) -> None:
    host = Bundle(case).host("gpu-a")
    assert "NVRM: hello" in host.run(["dmesg"])
    assert host.command_source(["dmesg", "-T"]).endswith("dmesg.txt.gz")


@pytest.mark.parametrize(
    "path", ["../truth.json", "/../../truth.json", "nodes/../../truth.json", "a/../../x", "x\x00y"]
)
def test_escapes_are_refused(case: Path, path: str) -> None:
    fs = ConfinedFS(case / "bundle")
    with pytest.raises(PathEscapeError):
        fs.read_text(path)


def test_absolute_paths_stay_inside_the_root(case: Path) -> None:
    fs = ConfinedFS(case / "bundle")
    assert fs.read_text("/incident.json").startswith("{")
    with pytest.raises(NotFoundError):
        fs.read_text("/etc/passwd")


def test_symlink_out_of_the_bundle_is_refused(case: Path) -> None:
    os.symlink(case / "truth.json", case / "bundle" / "nodes" / "gpu-a" / "leak.json")
    os.symlink(case, case / "bundle" / "up")
    host = Bundle(case).host("gpu-a")
    with pytest.raises(PathEscapeError):
        host.read("/leak.json")
    with pytest.raises(PathEscapeError):
        ConfinedFS(case / "bundle").read_text("up/truth.json")


def test_symlink_inside_the_bundle_is_followed(case: Path) -> None:
    os.symlink("../../../nodes/gpu-a/cmd/lspci-vv.txt", case / "bundle" / "nodes" / "gpu-a" / "sys" / "lspci")
    assert "3D controller" in Bundle(case).host("gpu-a").read("/sys/lspci")


def test_host_reads_map_to_the_node_tree(case: Path) -> None:
    host = Bundle(case).host("gpu-a")
    assert host.read("/sys/bus/pci/devices/0000:18:00.0/current_link_width").strip() == "8"
    assert host.list("/sys/bus/pci/devices") == ["0000:18:00.0"]
    assert host.list("/sys/class/net") == []


@pytest.mark.parametrize(
    "argv",
    [
        ["rm", "-rf", "/"],
        ["sh", "-c", "cat /etc/passwd"],
        ["ethtool", "-S", "../../x"],
        ["nvidia-smi", "-r"],
        [],
        ["dmesg", "-c"],
    ],
)
def test_commands_off_the_allowlist_are_refused(case: Path, argv: list[str]) -> None:
    with pytest.raises(NotAllowedError):
        Bundle(case).host("gpu-a").run(argv)


def test_missing_recorded_output_is_not_found(case: Path) -> None:
    with pytest.raises(NotFoundError):
        Bundle(case).host("gpu-a").run(["nvidia-smi", "-q"])


def test_not_a_bundle(tmp_path: Path) -> None:
    with pytest.raises(NotABundleError):
        Bundle(tmp_path)
    with pytest.raises(NotABundleError):
        Bundle(tmp_path / "missing")


@pytest.mark.parametrize(
    "text", ["{not json", "[]", json.dumps({"schema": "other/v9", "id": "x"}), "\x00\x01\x02"]
)
def test_corrupt_incident_json(case: Path, text: str) -> None:
    (case / "bundle" / "incident.json").write_text(text)
    with pytest.raises(CorruptInputError):
        Bundle(case)


def test_truncated_gzip_is_refused_with_its_path(case: Path) -> None:
    gz = case / "bundle" / "nodes" / "gpu-a" / "cmd" / "dmesg.txt.gz"
    gz.write_bytes(gz.read_bytes()[:-12])
    with pytest.raises(CorruptInputError, match="dmesg.txt.gz"):
        Bundle(case)


def test_unreadable_topology_is_treated_as_absent(case: Path) -> None:
    write(case / "bundle", "topology.json", "{broken")
    b = Bundle(case)
    assert b.topology is None and b.host_names() == ["gpu-a"]


def test_default_rank_placement(case: Path) -> None:
    inc = json.loads((case / "bundle" / "incident.json").read_text())
    inc["job"] = {"ranks": 4, "gpus_per_node": 2}
    (case / "bundle" / "incident.json").write_text(json.dumps(inc))
    write(case / "bundle", "nodes/gpu-b/nvml.json", "{}")
    assert Bundle(case).rank_map() == {0: ("gpu-a", 0), 1: ("gpu-a", 1), 2: ("gpu-b", 0), 3: ("gpu-b", 1)}


def test_binary_file_reads_without_failing(case: Path) -> None:
    (case / "bundle" / "nodes" / "gpu-a" / "cmd" / "top.txt").write_bytes(b"\xff\xfe\x00top - 10:00\x80")
    assert "top - 10:00" in Bundle(case).host("gpu-a").run(["top", "-b", "-n", "1"])
