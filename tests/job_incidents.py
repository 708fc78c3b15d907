"""Job-level incidents written for these tests: an input pipeline that starves every rank, and an
NCCL setting that slows the job from its launch, each in several presentations (fleet names, with
or without compute_s, the wordings of different loaders and launchers, decoys).

The hosts come from ``tests.conftest.build_bundle`` (real sysfs, NVML and dmesg formats), renamed
to the fleet's names; the job's steps, its logs and the incident text are written here. Nothing in
the investigator knows these names or wordings: each presentation is a different way real trainers
and people say the same thing.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from tests.conftest import END, HOSTS, START, build_bundle

#: Fleets: (host names, the GPUs per host stay 4 as in conftest).
FLEETS = {
    "dc": ["gpu-q017.dc2.internal", "gpu-q018.dc2.internal"],
    "ip": ["10-77-3-21", "10-77-3-22"],
    "short": ["n0412", "n0413"],
}
LOG_EVERY = 20  # steps per logged step
PERIOD = 40.0  # seconds between logged steps before any wait (LOG_EVERY x 2 s)
N_STEPS = 100
ONSET = 40


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _rename(root: Path, names: list[str]) -> None:
    for old, new in zip(HOSTS, names, strict=True):
        (root / "nodes" / old).rename(root / "nodes" / new)
    topo = (root / "topology.json").read_text()
    for old, new in zip(HOSTS, names, strict=True):
        topo = topo.replace(old, new)
    (root / "topology.json").write_text(topo)


def _incident(root: Path, title: str, reported: str = "") -> None:
    inc = json.loads((root / "incident.json").read_text())
    inc.update({"title": title, "reported": reported, "id": f"job-{root.name}"})
    (root / "incident.json").write_text(json.dumps(inc))


def _steps(
    root: Path,
    *,
    extra: float,
    onset: int | None,
    compute: bool,
    base: float = 2.0,
    seed: int = 3,
    late_rank: int | None = None,
) -> None:
    """Every rank alike: ``extra`` seconds outside compute from step ``onset`` (None: from the start).
    Every LOG_EVERY-th step is logged, so the logged steps' start times advance by that many
    durations, until the end of the window."""
    rng = np.random.default_rng(seed)
    rows = ["step,rank,start_unix,duration_s" + (",compute_s" if compute else "")]
    t = START + 60
    s = 0
    while True:
        comp = base * 0.8 + rng.normal(0, 0.004, 8)
        if late_rank is not None:
            comp[late_rank] *= 1.015  # a decoy: a GPU a little late, far less than the job slowed
        wait = extra * (1.0 + 0.15 * rng.standard_normal()) if onset is None or s >= onset else 0.0
        dur = float(comp.max()) + base * 0.2 + max(wait, 0.0)
        if t + dur * LOG_EVERY > END:
            break
        for r in range(8):
            rows.append(
                f"{s * LOG_EVERY},{r},{t:.3f},{dur + rng.normal(0, 0.001):.4f}"
                + (f",{comp[r]:.4f}" if compute else "")
            )
        t += dur * LOG_EVERY
        s += 1
    (root / "job").mkdir(parents=True, exist_ok=True)
    (root / "job" / "steps.csv").write_text("\n".join(rows) + "\n")


def _log(root: Path, name: str, lines: list[str]) -> None:
    p = root / "job" / "logs" / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("\n".join(lines) + "\n")


def _train_log(root: Path, *, extra: float, onset: int | None, data_time: bool) -> list[str]:
    out = []
    for s in range(0, N_STEPS, 5):
        slow = onset is None or s >= onset
        step = 2.0 + (extra if slow else 0.0)
        dt = f" | data_time {extra if slow else 0.021:.3f}s" if data_time else ""
        out.append(
            f"{_iso(START + 60 + s * PERIOD)} [INFO] train: iteration {s} | step_time {step:.3f}s | "
            f"tokens/s {int(1.4e6 * 2.0 / step)} | loss 2.51{dt}"
        )
    return out


def _nccl_ok(names: list[str]) -> list[str]:
    return [f"{h}:{4100 + i}:{4200 + i} [0] NCCL INFO Using network IB" for i, h in enumerate(names)] + [
        f"{h}:{4100 + i}:{4200 + i} [0] NCCL INFO Channel 00/0 : 0[0] -> 4[0] [send] via NET/IB/0"
        for i, h in enumerate(names)
    ]


#: How each loader says a read of the training data was slow (one wording per presentation).
FETCH = {
    "s3": "{ts} [WARNING] data: shard fetch from s3://corpus/train/shard-{n:05d}.tar took {s:.1f}s (retries=1)",
    "gcs_ms": "{ts} W loader.py:88] GET gs://bucket/tokens/part-{n:05d}.bin took {ms}ms",
    "chunk": "{ts} dataset worker 3: fetching chunk {n} took {s:.1f} seconds",
}


def input_stall(
    root: Path, *, fleet: str, presentation: str, compute: bool = True, decoy: bool = False
) -> Path:
    """Every rank waits for its input from step ONSET: the step's time outside compute grows while
    the network is quiet; the loader says why in ``presentation``'s words (or its data_time does,
    or, for ``nfs_kernel``, only the hosts' kernels do). ``decoy``: one GPU power-capped, its rank
    1.5% late from the start."""
    names = FLEETS[fleet]
    build_bundle(root, "power_throttle" if decoy else None, steps=False, spare_idle_low_gen=False)
    _rename(root, names)
    _incident(root, "Tokens/s down a third since 02:05", "Storage team says the object store is fine.")
    extra = 1.2
    _steps(root, extra=extra, onset=ONSET, compute=compute, late_rank=6 if decoy else None)
    if presentation == "nfs_kernel":
        for host in names:
            dmesg = root / "nodes" / host / "cmd" / "dmesg.txt"
            up = 86400 * 3 + 60 + ONSET * PERIOD
            lines = [
                f"[{up + k * 240:.6f}] nfs: server filer01 not responding, still trying" for k in range(6)
            ]
            dmesg.write_text(dmesg.read_text() + "\n".join(lines) + "\n")
    _log(root, "train.log", _train_log(root, extra=extra, onset=ONSET, data_time=presentation == "data_time"))
    _log(root, "nccl.log", _nccl_ok(names))
    if presentation in FETCH:
        t0 = START + 60 + ONSET * PERIOD
        lines = [
            FETCH[presentation].format(
                ts=_iso(t0 + k * 170), n=1200 + k, s=8.0 + (k % 5), ms=7000 + 900 * (k % 4)
            )
            for k in range(10)
        ]
        _log(root, "dataloader.log", lines)
    return root


def healthy_with_a_slow_read(root: Path, *, fleet: str) -> Path:
    """A decoy: one slow shard read in a job whose steps never slowed."""
    names = FLEETS[fleet]
    build_bundle(root, None, steps=False, spare_idle_low_gen=False)
    _rename(root, names)
    _incident(root, "Routine check after the storage maintenance")
    _steps(root, extra=0.0, onset=None, compute=True)
    _log(root, "train.log", _train_log(root, extra=0.0, onset=None, data_time=True))
    _log(root, "nccl.log", _nccl_ok(names))
    _log(root, "dataloader.log", [FETCH["s3"].format(ts=_iso(START + 900), n=7, s=9.5, ms=0)])
    return root


#: The launcher's forcing setting, as different launchers print it.
NCCL_SETTING = {
    "p2p_info": "{h}:{pid}:{pid} [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 1",
    "ib_export": "export NCCL_IB_DISABLE=1",
}
#: How people state a slowdown against another cluster, as a factor.
RATIO_TITLE = {
    "x": "New 8-GPU job 3x slower than the same recipe on the old cluster",
    "times": "Allreduce-heavy job runs 2.5 times slower than on pool A",
}


def nccl_from_launch(root: Path, *, fleet: str, setting: str, title: str) -> Path:
    """A job slow from its first step (no onset in the window) whose launcher forces a slow NCCL
    path; the incident states the slowdown as a factor against another cluster."""
    names = FLEETS[fleet]
    build_bundle(root, None, steps=False, spare_idle_low_gen=False)
    _rename(root, names)
    _incident(root, RATIO_TITLE[title], "Launched with the migrated launcher scripts.")
    _steps(root, extra=3.0, onset=None, compute=True)
    nccl = [NCCL_SETTING[setting].format(h=h, pid=5000 + i) for i, h in enumerate(names)]
    if setting == "ib_export":
        _log(root, "launcher.log", nccl)
        nccl = []
    nccl += [
        f"{h}:{5000 + i}:{5000 + i} [0] NCCL INFO NCCL version 2.21.5+cuda12.4" for i, h in enumerate(names)
    ]
    _log(root, "nccl.log", nccl)
    _log(root, "train.log", _train_log(root, extra=3.0, onset=None, data_time=False))
    return root


#: How people state that a job runs short of a level it reached before, as a share of a rate or
#: the level as a multiple (no onset named: the job was slow from its launch).
SHORTFALL = {
    "half": ("New run at half the expected throughput", "Same config as last week's run."),
    "percent": ("pretrain job at 45% of baseline tokens/s", "Nothing changed in the recipe."),
    "multiple": (
        "Fine-tune much slower on the new pool",
        "Last week's run did 2x this with the same config.",
    ),
}
#: How a loader says a worker waited for its next sample or batch (one wording per presentation).
LOADER_WAIT = {
    "sample": "{ts} WARNING dataloader: DataLoader worker {w} waited {s:.1f}s for sample from https://obj.internal/b/part-{n:05d}.tar",
    "batch_ms": "{ts} [W] input reader {w} waited {ms} ms for the next batch",
    "data": "{ts} loader: prefetch thread {w} waited {s:.2f} seconds on data (shard {n})",
}


def input_stall_from_launch(root: Path, *, fleet: str, shortfall: str, wording: str | None) -> Path:
    """Every rank waits for input from the first step (no onset in the window); the incident states
    the shortfall against an earlier level in ``shortfall``'s words, and the loader logs its waits
    in ``wording``'s (None: the loader says nothing, so nothing explains the stated shortfall)."""
    names = FLEETS[fleet]
    build_bundle(root, None, steps=False, spare_idle_low_gen=False)
    _rename(root, names)
    _incident(root, *SHORTFALL[shortfall])
    extra = 2.0
    _steps(root, extra=extra, onset=None, compute=False)
    _log(root, "train.log", _train_log(root, extra=extra, onset=None, data_time=False))
    _log(root, "nccl.log", _nccl_ok(names))
    if wording is not None:
        lines = [
            LOADER_WAIT[wording].format(
                ts=_iso(START + 300 + k * 600), w=k % 4, s=1.2 + 0.1 * k, ms=1200 + 100 * k, n=400 + k
            )
            for k in range(6)
        ]
        _log(root, "dataloader.log", lines)
    return root


#: Incident texts that name a lasting state of something other than the job's speed (an alert,
#: an exporter, counters): no shortfall of the job is stated, so flat steps answer the question.
NOT_A_SHORTFALL = {
    "alerts": ("Throughput dips every half hour", "Power cap alerts fire all day on this pod. Related?"),
    "exporter": ("Check job after exporter issue", "The DCGM exporter was degraded; is the job fine?"),
    "counters": ("ECC question", "Correctable ECC counts on a few GPUs since yesterday. Anything to do?"),
}


def healthy_with_a_lasting_remark(root: Path, *, fleet: str, text: str) -> Path:
    """A steady job whose incident text says something has lasted (all day, since yesterday, degraded)
    of an alert, an exporter or counters, not of the job's speed."""
    names = FLEETS[fleet]
    build_bundle(root, None, steps=False, spare_idle_low_gen=False)
    _rename(root, names)
    _incident(root, *NOT_A_SHORTFALL[text])
    _steps(root, extra=0.0, onset=None, compute=True)
    _log(root, "train.log", _train_log(root, extra=0.0, onset=None, data_time=False))
    _log(root, "nccl.log", _nccl_ok(names))
    return root
