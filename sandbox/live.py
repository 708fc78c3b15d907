"""The live side of the Host seam: the machine forensic runs on, read-only.

Reads are confined to the sysfs and procfs folders the tools need; commands are the same fixed
allowlist the replay side serves, run without a shell, with a timeout and an output cap; NVML
readings come from pynvml in the ``nvml.json`` shape, so tools cannot tell a live host from a
recorded one. Nothing here writes.
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Any

from forensic.sandbox.errors import NotFoundError, PathEscapeError, ToolError
from forensic.sandbox.host import HOST_COMMANDS, command_file

#: The only trees (and single files) a live read may touch, after symlinks are resolved too.
#: ``/proc/uptime`` places dmesg's seconds-since-boot on the clock when no collected.json exists.
READ_ROOTS = ("/sys", "/proc/pressure", "/proc/uptime")
#: Bytes one read or one command may return.
MAX_OUTPUT = 4 * 1024 * 1024
#: Seconds one command may run.
COMMAND_TIMEOUT_S = 10.0


def _inside(path: str, roots: Sequence[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


class LiveHost:
    """This machine, as a :class:`sandbox.host.Host`."""

    def __init__(
        self, name: str | None = None, *, timeout_s: float = COMMAND_TIMEOUT_S, max_output: int = MAX_OUTPUT
    ) -> None:
        self.name = name or socket.gethostname()
        self.timeout_s = timeout_s
        self.max_output = max_output

    def _path(self, path: str) -> str:
        if "\x00" in path:
            raise PathEscapeError(f"path {path!r} contains a NUL byte")
        pure = PurePosixPath("/" + path.lstrip("/"))
        if ".." in pure.parts:
            raise PathEscapeError(f"path {path!r} climbs ('..' is refused)")
        text = str(pure)
        if not _inside(text, READ_ROOTS):
            raise PathEscapeError(f"path {path!r} is outside the readable trees {', '.join(READ_ROOTS)}")
        # sysfs links devices across /sys (class -> devices); a link out of the readable trees is refused.
        real = os.path.realpath(text)
        if not _inside(real, READ_ROOTS):
            raise PathEscapeError(f"path {path!r} resolves outside the readable trees")
        return real

    def read(self, path: str) -> str:
        real = self._path(path)
        try:
            with open(real, "rb") as fh:
                data = fh.read(self.max_output + 1)
        except FileNotFoundError:
            raise NotFoundError(f"{path}: no such file") from None
        except OSError as exc:  # sysfs attributes can refuse a read (EIO on a lost device)
            raise ToolError(f"{path}: {exc.strerror or exc}") from None
        return data[: self.max_output].decode("utf-8", errors="replace")

    def list(self, path: str) -> list[str]:
        real = self._path(path)
        try:
            return sorted(os.listdir(real))
        except (FileNotFoundError, NotADirectoryError):
            return []

    def exists(self, path: str) -> bool:
        try:
            return os.path.exists(self._path(path))
        except PathEscapeError:
            return False

    def run(self, argv: Sequence[str]) -> str:
        command_file(argv, HOST_COMMANDS)  # refuses anything off the allowlist before it can start
        try:
            done = subprocess.run(
                list(argv),
                shell=False,
                capture_output=True,
                timeout=self.timeout_s,
                check=False,
                env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C"},
                stdin=subprocess.DEVNULL,
            )
        except FileNotFoundError:
            raise NotFoundError(f"{argv[0]}: not installed on {self.name}") from None
        except subprocess.TimeoutExpired:
            raise ToolError(f"{' '.join(argv)}: no answer within {self.timeout_s:g} s") from None
        if done.returncode != 0 and not done.stdout:
            raise ToolError(
                f"{' '.join(argv)} exited {done.returncode}: {done.stderr[:200].decode(errors='replace').strip()}"
            )
        return done.stdout[: self.max_output].decode("utf-8", errors="replace")

    def nvml(self) -> dict[str, Any] | None:
        """NVML readings keyed by the NVML function names (the nvml.json shape); None without a driver."""
        try:
            import pynvml
        except ImportError:
            return None
        try:
            pynvml.nvmlInit()
        except pynvml.NVMLError:
            return None
        try:
            return {
                "driver_version": _text(pynvml.nvmlSystemGetDriverVersion()),
                "devices": [_device(pynvml, i) for i in range(pynvml.nvmlDeviceGetCount())],
            }
        finally:
            pynvml.nvmlShutdown()


def _text(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _device(nv: Any, index: int) -> dict[str, Any]:
    """One device's readings; a reading NVML refuses is left out, a lost device carries ``error``."""
    try:
        h = nv.nvmlDeviceGetHandleByIndex(index)
    except nv.NVMLError as exc:
        return {"index": index, "error": str(exc)}
    out: dict[str, Any] = {"index": index}

    def take(key: str, fn: Any, *args: Any) -> None:
        try:
            out[key] = fn(h, *args)
        except nv.NVMLError as exc:
            if "lost" in str(exc).lower():
                out["error"] = str(exc)

    take("uuid", nv.nvmlDeviceGetUUID)
    take("name", nv.nvmlDeviceGetName)
    try:
        out["pci_bus_id"] = _text(nv.nvmlDeviceGetPciInfo(h).busId)
    except nv.NVMLError:
        pass
    for key in (
        "nvmlDeviceGetCurrPcieLinkGeneration",
        "nvmlDeviceGetMaxPcieLinkGeneration",
        "nvmlDeviceGetCurrPcieLinkWidth",
        "nvmlDeviceGetMaxPcieLinkWidth",
        "nvmlDeviceGetPcieReplayCounter",
        "nvmlDeviceGetPowerUsage",
        "nvmlDeviceGetEnforcedPowerLimit",
        "nvmlDeviceGetCurrentClocksEventReasons",
    ):
        take(key, getattr(nv, key))
    take("nvmlDeviceGetTemperature", nv.nvmlDeviceGetTemperature, nv.NVML_TEMPERATURE_GPU)
    for key, fn in (
        ("nvmlDeviceGetClockInfo", nv.nvmlDeviceGetClockInfo),
        ("nvmlDeviceGetMaxClockInfo", nv.nvmlDeviceGetMaxClockInfo),
    ):
        try:
            out[key] = {"sm": fn(h, nv.NVML_CLOCK_SM), "mem": fn(h, nv.NVML_CLOCK_MEM)}
        except nv.NVMLError:
            pass
    try:
        out["nvmlDeviceGetTotalEccErrors"] = {
            "corrected_volatile": nv.nvmlDeviceGetTotalEccErrors(
                h, nv.NVML_MEMORY_ERROR_TYPE_CORRECTED, nv.NVML_VOLATILE_ECC
            ),
            "uncorrected_volatile": nv.nvmlDeviceGetTotalEccErrors(
                h, nv.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nv.NVML_VOLATILE_ECC
            ),
        }
    except nv.NVMLError:
        pass
    try:
        corr, unc, pending, failure = nv.nvmlDeviceGetRemappedRows(h)
        out["nvmlDeviceGetRemappedRows"] = {
            "corrected": corr,
            "uncorrected": unc,
            "pending": bool(pending),
            "failure": bool(failure),
        }
    except nv.NVMLError:
        pass
    for k in ("uuid", "name"):
        if k in out:
            out[k] = _text(out[k])
    return out
