"""Kernel log as `dmesg`, `dmesg -T`, `journalctl -k`, raw `/dev/kmsg`, or dmesg with caller ids."""

from __future__ import annotations

import zlib

import numpy as np

from ..sim import HostSim
from ._time import utc

STYLES = ("dmesg", "ctime", "journal", "kmsg", "caller")


def _uptime(u: float) -> str:
    us = int(round(u * 1e6))
    return f"[{us // 1000000:5d}.{us % 1000000:06d}]"


def render(hs: HostSim, host: str, now: float, rng: np.random.Generator, since: float | None = None) -> str:
    lines = sorted(
        (k for k in hs.kernel if k.t <= now and (since is None or k.t >= since)), key=lambda k: k.t
    )
    style = hs.dmesg_style
    out: list[str] = []
    seq = int(rng.integers(800, 1600))
    for k in lines:
        parts = k.text.split("\n")
        if style == "kmsg":
            usec = int(round((k.t - hs.boot) * 1e6))
            text = "\\x0a".join(parts)
            out.append(f"{k.prio},{seq},{usec},-;{text}")
            seq += 1
            continue
        if style == "dmesg":
            prefix = _uptime(k.t - hs.boot) + " "
        elif style == "caller":
            # one printk burst comes from one thread: key the caller id on the second it was printed
            tid = zlib.crc32(f"{host}:{int(k.t)}".encode()) % 90000 + 1
            caller = f"T{tid}" if "NVRM" in k.text or "mlx5" in k.text else f"C{tid % 96}"
            prefix = _uptime(k.t - hs.boot) + f" [{caller:>6}] "
        elif style == "ctime":
            d = utc(k.t)
            prefix = "[" + d.strftime("%a %b ") + f"{d.day:2d}" + d.strftime(" %H:%M:%S %Y") + "] "
        elif style == "journal":
            d = utc(k.t)
            prefix = d.strftime("%b %d %H:%M:%S") + f" {host} kernel: "
        else:
            raise ValueError(style)
        out.append(prefix + parts[0])
        pad = " " * len(prefix) if style != "journal" else prefix
        for p in parts[1:]:
            out.append(pad + p)
    return "\n".join(out) + "\n"
