"""Hosts: the one seam between tools and machines.

A :class:`Host` answers ``read(path)``, ``list(dir)``, ``run(argv)`` and ``nvml()``. The replay
implementation serves a bundle's recorded node tree: ``/sys/...`` reads come from
``nodes/<host>/sys/...`` (or ``before/sys/...`` for the window-start snapshot) and ``run`` returns
the recorded output of an allowlisted command. Nothing here writes, and no argv off the
allowlist is ever served, recorded or live.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from forensic.sandbox._fs import ConfinedFS
from forensic.sandbox.errors import CorruptInputError, NotAllowedError, NotFoundError

from forensic.names import is_host_name, is_netdev_name

#: argv (as a tuple) -> file name under ``cmd/``. Parametrised commands are matched below.
HOST_COMMANDS: dict[tuple[str, ...], str] = {
    ("nvidia-smi", "-q"): "nvidia-smi-q.txt",
    ("lspci", "-vv"): "lspci-vv.txt",
    ("dmesg",): "dmesg.txt",
    ("dmesg", "-T"): "dmesg.txt",
    ("journalctl", "-k"): "dmesg.txt",
    ("ibstat",): "ibstat.txt",
    ("top", "-b", "-n", "1"): "top.txt",
    ("cat", "/proc/pressure/cpu"): "pressure-cpu.txt",
    # the optional host evidence the spec names (read-only commands)
    ("cat", "/proc/pressure/memory"): "pressure-memory.txt",
    ("cat", "/proc/pressure/io"): "pressure-io.txt",
    ("ipmitool", "sel", "elist"): "ipmitool-sel-elist.txt",
    ("nvidia-smi", "nvlink", "-e"): "nvidia-smi-nvlink-e.txt",
}

SWITCH_COMMANDS: dict[tuple[str, ...], str] = {
    ("show", "pfc", "counters"): "show-pfc-counters.txt",
    ("show", "pfcwd", "stats"): "show-pfcwd-stats.txt",
    ("show", "interfaces", "counters"): "show-interfaces-counters.txt",
}


def command_file(argv: Sequence[str], table: dict[tuple[str, ...], str]) -> str:
    """The recorded-output file name for an allowlisted argv; NotAllowedError otherwise."""
    key = tuple(argv)
    if key in table:
        return table[key]
    if table is HOST_COMMANDS and len(key) == 3 and key[:2] == ("ethtool", "-S"):
        if not is_netdev_name(key[2]):
            raise NotAllowedError(f"ethtool -S: interface name {key[2]!r} is not a valid netdev name")
        return f"ethtool-S-{key[2]}.txt"
    if table is HOST_COMMANDS and len(key) == 4 and key[:3] == ("ethtool", "-I", "--show-fec"):
        if not is_netdev_name(key[3]):
            raise NotAllowedError(f"ethtool --show-fec: interface name {key[3]!r} is not a valid netdev name")
        return f"ethtool-I-show-fec-{key[3]}.txt"
    raise NotAllowedError(f"command {' '.join(map(repr, key)) or '(empty)'} is not on the allowlist")


@runtime_checkable
class Host(Protocol):
    """What a tool may ask of a machine. Read-only by construction."""

    name: str

    def read(self, path: str) -> str:
        """Contents of a file below the host's root (``/sys/...``)."""
        ...

    def list(self, path: str) -> list[str]:
        """Entry names of a folder below the host's root; [] when absent."""
        ...

    def exists(self, path: str) -> bool:
        """Whether the file or folder exists."""
        ...

    def run(self, argv: Sequence[str]) -> str:
        """Output of an allowlisted command (fixed argv, no shell)."""
        ...

    def nvml(self) -> dict[str, Any] | None:
        """NVML readings in the nvml.json shape, or None when there are none."""
        ...


class ReplayHost:
    """A host replayed from ``nodes/<name>/`` of a bundle."""

    def __init__(self, fs: ConfinedFS, name: str, snapshot: Literal["now", "before"] = "now") -> None:
        if not is_host_name(name):
            raise NotAllowedError(f"host name {name!r} is not a valid host name")
        self._fs = fs
        self.name = name
        self.snapshot = snapshot
        self._base = f"nodes/{name}" + ("/before" if snapshot == "before" else "")

    def _path(self, path: str) -> str:
        return f"{self._base}/{path.lstrip('/')}"

    def read(self, path: str) -> str:
        return self._fs.read_text(self._path(path))

    def list(self, path: str) -> list[str]:
        return self._fs.list(self._path(path))

    def exists(self, path: str) -> bool:
        return self._fs.exists(self._path(path))

    def source(self, path: str) -> str:
        """Bundle-relative path that holds ``path`` (for evidence citations)."""
        return self._fs.source_of(self._path(path))

    def run(self, argv: Sequence[str]) -> str:
        name = command_file(argv, HOST_COMMANDS)
        rel = f"{self._base}/cmd/{name}"
        if not self._fs.exists(rel):
            raise NotFoundError(f"{self.name}: no recorded output of {' '.join(argv)}")
        return self._fs.read_text(rel)

    def command_source(self, argv: Sequence[str]) -> str:
        return self._fs.source_of(f"{self._base}/cmd/{command_file(argv, HOST_COMMANDS)}")

    def has_command(self, argv: Sequence[str]) -> bool:
        return self._fs.exists(f"{self._base}/cmd/{command_file(argv, HOST_COMMANDS)}")

    def nvml(self) -> dict[str, Any] | None:
        rel = f"{self._base}/nvml.json"
        if not self._fs.exists(rel):
            return None
        try:
            data = json.loads(self._fs.read_text(rel))
        except json.JSONDecodeError as exc:
            raise CorruptInputError(f"{rel}: not valid JSON ({exc.msg})") from None
        if not isinstance(data, dict):
            raise CorruptInputError(f"{rel}: expected a JSON object")
        return data

    def nvml_source(self) -> str:
        return self._fs.source_of(f"{self._base}/nvml.json")


class ReplaySwitch:
    """A switch replayed from ``switches/<name>/cmd/``."""

    def __init__(self, fs: ConfinedFS, name: str) -> None:
        if not is_host_name(name):
            raise NotAllowedError(f"switch name {name!r} is not a valid switch name")
        self._fs = fs
        self.name = name

    def run(self, argv: Sequence[str]) -> str:
        rel = f"switches/{self.name}/cmd/{command_file(argv, SWITCH_COMMANDS)}"
        if not self._fs.exists(rel):
            raise NotFoundError(f"{self.name}: no recorded output of {' '.join(argv)}")
        return self._fs.read_text(rel)

    def command_source(self, argv: Sequence[str]) -> str:
        return self._fs.source_of(f"switches/{self.name}/cmd/{command_file(argv, SWITCH_COMMANDS)}")
