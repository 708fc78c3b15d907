"""Incidents written for these tests: a job that stalls in bursts from an onset (every rank stops
for tens of seconds every minute or two and runs at full speed in between), and one host whose
memory thrashes (swap full, reclaim, memory pressure) so that its ranks, and the job, slow down;
each in several presentations (fleet names, the stall inside the step or between steps, with or
without compute_s, a blocked task in the kernel log or none, decoys), with healthy controls.

The hosts come from ``tests.conftest.build_bundle`` (real sysfs, NVML and dmesg formats), renamed
and, where a fleet needs more than two hosts, copied under new names; the steps, the hosts'
``top``/PSI/dmesg and the incident text are written here. Nothing in the investigator knows these
names, counts or wordings.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

from tests.conftest import END, HOSTS, START, build_bundle

#: Fleets: host names (4 GPUs per host, as in conftest).
FLEETS = {
    "dc": [
        "gpu-q017.dc2.internal",
        "gpu-q018.dc2.internal",
        "gpu-q019.dc2.internal",
        "gpu-q020.dc2.internal",
    ],
    "ip": ["10-77-3-21", "10-77-3-22", "10-77-3-23", "10-77-3-24", "10-77-3-25"],
    "short": ["n0412", "n0413", "n0414", "n0415"],
}
GPUS = 4


def _fleet(root: Path, names: list[str], fault: str | None = None) -> None:
    """conftest's two hosts under the fleet's first two names, copied for the rest of the names."""
    build_bundle(root, fault, steps=False, spare_idle_low_gen=False)
    topo = json.loads((root / "topology.json").read_text())
    hosts = []
    for k, name in enumerate(names):
        if k >= 2:  # copies of the first host, which holds no fault
            shutil.copytree(root / "nodes" / HOSTS[0], root / "nodes" / name)
        h = json.loads(json.dumps(topo["hosts"][min(k, 1)] if k < 2 else topo["hosts"][0]))
        h["name"] = name
        for nic in h.get("nics", []):
            nic["switch_port"] = f"Ethernet{4 * k}"
        hosts.append(h)
    for k, old in enumerate(HOSTS):
        (root / "nodes" / old).rename(root / "nodes" / names[k])
    topo["hosts"] = hosts
    topo["ranks"] = [{"rank": r, "host": names[r // GPUS], "gpu": r % GPUS} for r in range(GPUS * len(names))]
    (root / "topology.json").write_text(json.dumps(topo))
    inc = json.loads((root / "incident.json").read_text())
    inc["job"]["ranks"] = GPUS * len(names)
    (root / "incident.json").write_text(json.dumps(inc))


def _incident(root: Path, title: str, reported: str = "") -> None:
    inc = json.loads((root / "incident.json").read_text())
    inc.update({"title": title, "reported": reported, "id": f"stall-{root.name}"})
    (root / "incident.json").write_text(json.dumps(inc))


def _write_steps(
    root: Path,
    n_ranks: int,
    *,
    compute: bool,
    seed: int,
    stall_onset: float | None = None,
    stall_in: str = "step",
    checkpoint_every: int | None = None,
    slow_ranks: tuple[int, ...] = (),
    slow_onset: float | None = None,
    slow_factor: float = 1.0,
) -> None:
    """Every step logged, ~2 s each. From ``stall_onset`` (seconds into the window) every rank stops
    for 20-40 s every 60-120 s: inside the step (its duration) or between steps (the next start).
    ``checkpoint_every``: a 12 s step every N steps from the start, the job's own work.
    ``slow_ranks`` compute ``slow_factor`` times longer from ``slow_onset``: the barrier makes every
    step that long."""
    rng = np.random.default_rng(seed)
    rows = ["step,rank,start_unix,duration_s" + (",compute_s" if compute else "")]
    t = START + 60
    s = 1000
    next_stall = None if stall_onset is None else START + stall_onset
    while True:
        comp = 1.6 + rng.normal(0, 0.004, n_ranks)
        if slow_onset is not None and t >= START + slow_onset:
            comp[list(slow_ranks)] *= slow_factor
        dur = float(comp.max()) + 0.4 + abs(rng.normal(0, 0.01))
        gap = 0.0
        if checkpoint_every and s % checkpoint_every == 0:
            dur += 10.0
        if next_stall is not None and t >= next_stall:
            wait = float(rng.uniform(20, 40))
            if stall_in == "step":
                dur += wait
            else:
                gap = wait
            next_stall = t + float(rng.uniform(60, 120))
        if t + dur > END:
            break
        for r in range(n_ranks):
            rows.append(
                f"{s},{r},{t:.3f},{dur + rng.normal(0, 0.0005):.4f}" + (f",{comp[r]:.4f}" if compute else "")
            )
        t += dur + gap + 0.002
        s += 1
    (root / "job").mkdir(parents=True, exist_ok=True)
    (root / "job" / "steps.csv").write_text("\n".join(rows) + "\n")


def bursty_stalls(
    root: Path, *, fleet: str, stall_in: str = "step", compute: bool = False, decoy: str | None = None
) -> Path:
    """Every rank stalls 20-40 s every minute or two from a third of the way into the window, and
    nothing on any host says why (no logs, no I/O pressure): the typical step is unchanged, the
    throughput is not. ``decoy``: "checkpoint" (a long step every 150 steps from the start, the
    job's own work) or "power" (one GPU power-capped)."""
    names = FLEETS[fleet]
    _fleet(root, names, "power_throttle" if decoy == "power" else None)
    _incident(root, "Step time wildly uneven since 02:10")
    _write_steps(
        root,
        GPUS * len(names),
        compute=compute,
        seed=len(fleet) + (7 if stall_in == "gap" else 0),
        stall_onset=1800.0,
        stall_in=stall_in,
        checkpoint_every=150 if decoy == "checkpoint" else None,
    )
    return root


def steady_with_checkpoints(root: Path, *, fleet: str, compute: bool = False) -> Path:
    """A healthy control: a long checkpoint step every 150 steps for the whole window, nothing else."""
    names = FLEETS[fleet]
    _fleet(root, names)
    _incident(
        root, "Routine check: step time spikes every few minutes", "The spikes line up with checkpoints."
    )
    _write_steps(root, GPUS * len(names), compute=compute, seed=11, checkpoint_every=150)
    return root


def _top(load: float, wa: float, swap_free: float, kswapd: bool) -> str:
    return (
        f"top - 02:55:00 up 3 days,  1:01,  2 users,  load average: {load}, {load}, {load}\n"
        "Tasks: 900 total,   9 running, 891 sleeping,   0 stopped,   0 zombie\n"
        f"%Cpu(s): 12.0 us,  2.0 sy,  0.0 ni, {85.5 - wa:.1f} id, {wa:.1f} wa,  0.0 hi,  0.5 si,  0.0 st\n"
        "MiB Mem : 2063741.2 total,   "
        + ("2101.3 free" if kswapd else "512339.9 free")
        + ",  511188.6 used, 1040212.7 buff/cache\n"
        f"MiB Swap:   8192.0 total,   {swap_free:.1f} free,   {8192.0 - swap_free:.1f} used. 1531022.1 avail Mem\n\n"
        "    PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND\n"
        + "".join(
            f"  {4100 + i} train     20   0   62.1g   9.8g   1.2g R 100.0   2.6 999:00.00 python3\n"
            for i in range(4)
        )
        + (
            "    201 root      20   0       0      0      0 R  97.0   0.0  45:12.01 kswapd0\n"
            "    202 root      20   0       0      0      0 R  90.0   0.0  44:02.77 kswapd1\n"
            if kswapd
            else ""
        )
    )


def _psi(some: float, full: float) -> str:
    return (
        f"some avg10={some:.2f} avg60={some * 0.9:.2f} avg300={some * 0.5:.2f} total={int(some * 1e8)}\n"
        f"full avg10={full:.2f} avg60={full * 0.9:.2f} avg300={full * 0.5:.2f} total={int(full * 1e8)}\n"
    )


def memory_pressure_host(root: Path, *, fleet: str, culprit: int, blocked: str | None = "python3") -> Path:
    """Host ``culprit`` thrashes (swap full, kswapd busy, memory PSI, iowait) from 40 minutes into
    the window; its ranks compute 35% slower, so every step is (no compute_s). ``blocked``: the name
    of a task its kernel reports blocked in D state (None: no such line), a decoy for a shared
    input stall."""
    names = FLEETS[fleet]
    _fleet(root, names)
    bad = names[culprit]
    _incident(
        root,
        "Step time up about a third since 02:20",
        f"Nothing deployed on the fabric. {bad}'s GPUs look less busy.",
    )
    _write_steps(
        root,
        GPUS * len(names),
        compute=False,
        seed=5 + culprit,
        slow_ranks=tuple(range(GPUS * culprit, GPUS * culprit + GPUS)),
        slow_onset=2400.0,
        slow_factor=1.35,
    )
    for name in names:
        cmd = root / "nodes" / name / "cmd"
        hot = name == bad
        (cmd / "top.txt").write_text(_top(17.5, 14.0 if hot else 0.1, 180.6 if hot else 8192.0, hot))
        (cmd / "pressure-memory.txt").write_text(_psi(38.0, 29.0) if hot else _psi(0.0, 0.0))
        (cmd / "pressure-cpu.txt").write_text(_psi(0.2, 0.0))
        if hot and blocked:
            up = 86400 * 3 + 2400 + 400
            dmesg = cmd / "dmesg.txt"
            dmesg.write_text(
                dmesg.read_text()
                + f"[{up:.6f}] INFO: task {blocked}:2211901 blocked for more than 120 seconds.\n"
            )
    return root


def shared_storage_hang(root: Path, *, fleet: str) -> Path:
    """A control for the breadth rule: every host's data-loader tasks block in D state (the shared
    input hangs, the kernels name no file system) and every step waits for it from an onset."""
    names = FLEETS[fleet]
    _fleet(root, names)
    _incident(root, "Step time up about a third since 02:20")
    _write_steps(
        root,
        GPUS * len(names),
        compute=False,
        seed=9,
        slow_ranks=tuple(range(GPUS * len(names))),
        slow_onset=2400.0,
        slow_factor=1.35,
    )
    for k, name in enumerate(names):
        dmesg = root / "nodes" / name / "cmd" / "dmesg.txt"
        up = 86400 * 3 + 2400 + 300 + 7 * k
        dmesg.write_text(
            dmesg.read_text()
            + f"[{up:.6f}] INFO: task pt_data_worker:{5100 + k} blocked for more than 120 seconds.\n"
        )
    return root
