"""`top -b -n 1` and `/proc/pressure/cpu`."""

from __future__ import annotations

import numpy as np

from ..sim import HostSim
from ._time import utc


def top(hs: HostSim, t: float, rng: np.random.Generator) -> str:
    d = utc(t)
    up = t - hs.boot
    days = int(up // 86400)
    hh, mm = int(up % 86400 // 3600), int(up % 3600 // 60)
    l1 = hs.load1.sample(t, rng)
    l5 = hs.load1.mean(t - 300) * 0.97
    l15 = hs.load1.mean(t - 900) * 0.93
    busy = sum(p.cpu for p in hs.procs) / hs.ncpu
    us = min(99.0, busy * 0.9)
    sy = min(99.0 - us, busy * 0.06 + 0.5)
    idle = max(0.0, 100 - us - sy - 0.4)
    running = sum(1 for p in hs.procs if p.state == "R")
    total = 900 + int(rng.integers(0, 200))
    lines = [
        f"top - {d.strftime('%H:%M:%S')} up {days} days, {hh:2d}:{mm:02d},  0 users,  load average: {l1:.2f}, {l5:.2f}, {l15:.2f}",
        f"Tasks: {total} total, {running:3d} running, {total - running} sleeping,   0 stopped,   0 zombie",
        f"%Cpu(s): {us:4.1f} us, {sy:4.1f} sy,  0.0 ni, {idle:4.1f} id,  0.3 wa,  0.0 hi,  0.1 si,  0.0 st",
        "MiB Mem : 2063731.0 total, 1401221.4 free, 412873.2 used, 249636.4 buff/cache",
        "MiB Swap:      0.0 total,      0.0 free,      0.0 used. 1638812.9 avail Mem",
        "",
        "    PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND",
    ]
    for p in sorted(hs.procs, key=lambda p: -p.cpu):
        res = p.res_kb
        res_s = f"{res / 1048576:.1f}g" if res > 10 * 1048576 else str(res)
        virt = f"{max(res, 1) / 1048576 * 5.3:.1f}g" if res > 1048576 else str(res * 3)
        lines.append(
            f"{p.pid:7d} {p.user:<9} 20   0 {virt:>7} {res_s:>6} {int(res * 0.05) if res < 1e7 else '1.1g':>6} "
            f"{p.state} {p.cpu:5.1f} {p.mem:5.1f} {p.time:>9} {p.command}"
        )
    return "\n".join(lines) + "\n"


def pressure_cpu(hs: HostSim, t: float, rng: np.random.Generator) -> str:
    a10 = max(0.0, hs.cpu_some_avg10.sample(t, rng))
    a60 = max(0.0, hs.cpu_some_avg10.mean(t - 60))
    a300 = max(0.0, hs.cpu_some_avg10.mean(t - 300))
    total = int((t - hs.boot) * (a300 / 100.0) * 1e6)
    return (
        f"some avg10={a10:.2f} avg60={a60:.2f} avg300={a300:.2f} total={total}\n"
        "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
    )
