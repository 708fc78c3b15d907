"""The live host: confined reads of this machine's sysfs, the same command allowlist, no writes."""

from __future__ import annotations

import os

import pytest
from forensic.sandbox import Host, LiveHost, NotAllowedError, PathEscapeError


def test_it_is_a_host() -> None:
    assert isinstance(LiveHost(), Host)


@pytest.mark.parametrize(
    "path",
    [
        "/etc/passwd",
        "/proc/self/environ",
        "/proc/uptime/../self/environ",
        "/proc/uptimex",
        "/sys/../etc/shadow",
        "/root",
        "sys\x00",
    ],
)
def test_reads_outside_sysfs_are_refused(path: str) -> None:
    with pytest.raises(PathEscapeError):
        LiveHost().read(path)


def test_sysfs_reads_and_lists() -> None:
    host = LiveHost()
    if not os.path.isdir("/sys/class/net"):
        pytest.skip("no sysfs here")
    names = host.list("/sys/class/net")
    assert "lo" in names
    assert host.read("/sys/class/net/lo/operstate").strip() in {"unknown", "up", "down"}
    assert host.list("/sys/class/nope") == []


@pytest.mark.parametrize(
    "argv", [["rm", "-rf", "/tmp/x"], ["sh", "-c", "id"], ["nvidia-smi", "-r"], ["ethtool", "-S", "lo;id"]]
)
def test_commands_off_the_allowlist_never_start(argv: list[str], tmp_path) -> None:
    with pytest.raises(NotAllowedError):
        LiveHost().run(argv)


def test_an_allowlisted_command_runs_without_a_shell() -> None:
    if not os.path.exists("/proc/pressure/cpu"):
        pytest.skip("no PSI on this kernel")
    assert "avg10=" in LiveHost().run(["cat", "/proc/pressure/cpu"])


def test_no_gpu_no_driver_means_no_nvml_readings() -> None:
    readings = LiveHost().nvml()
    assert readings is None or "devices" in readings


def test_uptime_is_readable_to_place_kernel_times() -> None:
    # dmesg prints seconds since boot; with no collected.json, /proc/uptime is the only way to place them.
    assert float(LiveHost().read("/proc/uptime").split()[0]) > 0
