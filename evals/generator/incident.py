"""One evaluation incident: spec -> scenario -> fault and decoys -> steps -> bundle files + truth."""

from __future__ import annotations

import datetime as _dt
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import decoys as _decoys
from . import options as _options
from . import steps as _steps
from ._io import BundleWriter
from .baseline import build_scenario
from .faults import CAUSES
from .faults.fabric import init_pfcwd
from .fleet import build_fleet, permute_job_order
from .sim import JobSim, Scenario
from .writer import write_bundle

JOB_NAMES = [
    "llm-70b-pretrain",
    "moe-8x22b-sft",
    "gpt-13b-ablation-7",
    "llama-405b-cpt",
    "dense-34b-long-ctx",
    "mm-vit-22b",
    "code-15b-pretrain",
    "rm-70b-rlhf",
]


@dataclass
class IncidentSpec:
    """What to generate. Everything left ``None`` is drawn from ``seed``."""

    case: str
    cause: str
    seed: int
    hosts: int = 8
    variant: str | None = None
    decoys: list[str] | None = None
    opts: dict = field(default_factory=dict)


def _pick_decoys(scn: Scenario, rng: np.random.Generator, spec: IncidentSpec) -> list[str]:
    if spec.decoys is not None:
        return list(spec.decoys)
    pool = [
        "spare_low_gen",
        "old_xid",
        "warm_gpu",
        "static_link_errors",
        "static_sbe",
        "power_cap_blips",
        "spare_xid",
    ]
    if scn.fleet.link_layer == "Ethernet":
        pool.append("rx_pause_victims")
    n = scn.opts["decoy_count"] + (1 if spec.cause == "healthy" else 0)
    chosen = [str(x) for x in rng.choice(pool, size=min(n, len(pool)), replace=False)]
    if any(h.spare for h in scn.fleet.hosts) and "spare_low_gen" not in chosen:
        chosen.append("spare_low_gen")
    return chosen


def build(spec: IncidentSpec) -> Scenario:
    if spec.cause not in CAUSES:
        raise ValueError(f"unknown cause {spec.cause!r}; one of {sorted(CAUSES)}")
    rng = np.random.default_rng(spec.seed)
    o = _options.resolve(spec.cause, spec.variant, spec.hosts, rng, spec.opts)
    eth = o["link_layer"] == "Ethernet"
    fleet = build_fleet(
        rng,
        spec.hosts,
        o["n_spares"],
        o["host_scheme"],
        o["switch_scheme"],
        o["link_layer"],
        o["bus_layout"],
        o["netdev_style_eth"] if eth else o["netdev_style_ib"],
        o["hosts_per_rack"],
        o["hosts_per_leaf"],
        shuffle_file_order=o["shuffle_hosts"],
    )
    if o["permute_job"]:
        permute_job_order(fleet, rng)

    # job timing: enough wall time to log the wanted number of steps
    base_c = float(rng.uniform(1.2, 5.0))
    base_comm = base_c * float(rng.uniform(0.06, 0.2))
    base_gap = float(rng.uniform(0.012, 0.06))
    noise = float(rng.uniform(0.003, 0.006))
    step_t = base_c * (1 + 2.5 * noise) + base_comm + base_gap
    L = o["logged_steps"]
    every = 1
    for n in (1, 2, 5, 10, 20, 25, 50, 100):
        every = n
        if L * n * step_t >= 3000:
            break
    span = L * every * step_t
    day = _dt.datetime(2026, 1, 5, tzinfo=_dt.UTC) + _dt.timedelta(days=int(rng.integers(0, 320)))
    t0 = day.timestamp() + float(int(rng.integers(0, 86400 - 6 * 3600)))
    t0 = float(int(t0 // 60) * 60)
    pre = span * float(rng.uniform(0.0, 0.15))
    tf = t0 + span * float(rng.uniform(0.3, 0.55))
    t1 = t0 + span
    job = JobSim(
        name=str(rng.choice(JOB_NAMES)),
        base_compute=base_c,
        base_comm=base_comm,
        base_gap=base_gap,
        t_start=t0 - pre,
        t_end=t1,
        tp=o["tp"],
        noise=noise,
        rack_jitter=noise * 0.4,
        first_step=int(rng.integers(2000, 90000)) // every * every,
        log_every=every,
        nccl_version=o["nccl_version"],
        torch_style=o["torch_style"],
        timeout_ms=o["timeout_ms"],
        mfu_base=float(rng.uniform(0.38, 0.55)),
    )
    job.nccl_env = [
        "NCCL_SOCKET_IFNAME set by environment to " + o["oob_if"],
        "NCCL_IB_HCA set by environment to " + ",".join(f"mlx5_{k}" for k in range(8)),
    ]
    if rng.random() < 0.5:
        job.nccl_env.append("NCCL_IB_TIMEOUT set by environment to 22.")
    if eth:
        job.nccl_env.append("NCCL_IB_GID_INDEX set by environment to 3.")
        job.nccl_env.append("NCCL_IB_TC set by environment to 106.")
    o["ref_step"] = step_t
    o["scrape"] = float(min(600.0, max(30.0, round(span * 1.2 / o["samples"] / 15.0) * 15.0)))
    o["metrics_pre"] = float(rng.uniform(0, 900))
    scn = build_scenario(rng, spec.seed, fleet, o, t0, t1, tf, job)
    if eth:
        init_pfcwd(scn, rng)

    CAUSES[spec.cause](scn, rng, spec.variant)
    sym = scn.opts.get("symptom", {"kind": "none"})
    if sym["kind"] == "hang":
        scn.t1 = tf + job.timeout_ms / 1000.0 + float(rng.uniform(300, 1200))
        scn.now = scn.t1 + float(rng.uniform(20, 240))
        job.t_end = scn.t1
    if sym["kind"] in ("crash", "restart_slow"):
        assert job.crash_at is not None, "a crash or restart fault sets when the job crashed"
        # room after the relaunch to see the new behaviour
        scn.t1 = max(t1, job.crash_at + job.restart_after + span * 0.35)
        scn.now = scn.t1 + float(rng.uniform(20, 240))
        job.t_end = scn.t1
    if o["benign_restart"] and job.crash_at is None and job.hang_at is None:
        job.crash_at = t0 + (tf - t0) * float(rng.uniform(0.2, 0.7))
        job.restart_after = float(rng.uniform(240, 600))
        job.crash_message = ""
        scn.t1 = t1 + job.restart_after
        scn.now = scn.t1 + float(rng.uniform(20, 240))
        job.t_end = scn.t1
    chosen = _pick_decoys(scn, rng, spec)
    for d in chosen:
        _decoys.DECOYS[d](scn, rng)
    scn.opts["decoys"] = chosen
    scn.steps_result = _steps.simulate(scn)
    _compose_text(scn, rng)
    return scn


def _hhmm(t: float) -> str:
    return _dt.datetime.fromtimestamp(t, tz=_dt.UTC).strftime("%H:%M")


def _compose_text(scn: Scenario, rng: np.random.Generator) -> None:
    res, job, o = scn.steps_result, scn.job, scn.opts
    assert res is not None, "build simulates the steps before it composes the text"
    sym = o.get("symptom", {"kind": "none"})
    kind = sym["kind"]
    style = o["title_style"]
    mfu0 = job.mfu_base * 100
    t_ref = scn.tf
    if kind == "restart_slow" or kind == "crash":
        t_ref = job.crash_at or scn.tf
    pre = res.mean_step(job.t_start, min(t_ref, job.crash_at or t_ref)) or o["ref_step"]
    if kind in ("crash", "restart_slow"):
        assert job.crash_at is not None, "a crash or restart fault sets when the job crashed"
        post_start = job.crash_at + job.restart_after + 60
    else:
        post_start = scn.tf + 300
    post = res.mean_step(post_start, scn.t1) or pre
    ratio = post / pre
    mfu1 = mfu0 / ratio
    when = _hhmm(t_ref)
    name = job.name
    reported = ""
    alert = None
    if kind == "slow":
        pct = (ratio - 1) * 100
        titles = [
            f"MFU down from {mfu0:.0f}% to {mfu1:.0f}% since {when}, no alerts firing",
            f"{name}: step time up {pct:.0f}% since ~{when} UTC",
            f"Throughput regression on {name} after {when}: tokens/s down {100 * (1 - 1 / ratio):.0f}%",
            f"{name} slower than yesterday, MFU {mfu1:.0f}% (was {mfu0:.0f}%)",
        ]
        reported = str(
            rng.choice(
                [
                    f"Noticed on the MFU panel around {when}. Dashboards for GPUs and fabric look green. {scn.fleet.n_ranks} ranks.",
                    "Loss curve looks normal, just slower. Nobody changed the job config as far as I know.",
                    "Seen by the on-call during the handover. No hardware alerts. Please find what slowed it down.",
                    "",
                ]
            )
        )
        alert = ("TrainingThroughputDrop", "warning", f"{name} tokens/s below 7-day p10")
        if ratio < 1.12:
            titles[0] = f"MFU dipped from {mfu0:.0f}% to {mfu1:.0f}% around {when} - noise or real?"
    elif kind == "restart_slow":
        titles = [
            f"{name} {ratio:.1f}x slower since the {when} resubmit",
            f"Step time {pre:.2f}s -> {post:.2f}s after relaunch at {when}",
            f"MFU down from {mfu0:.0f}% to {mfu1:.0f}% after the job was restarted at {when}",
            f"{name}: throughput collapsed after {when} restart",
        ]
        reported = str(
            rng.choice(
                [
                    "Job was resubmitted by the platform team after a maintenance window.",
                    "Relaunched from the last checkpoint, now much slower.",
                    "",
                ]
            )
        )
        alert = ("TrainingThroughputDrop", "warning", f"{name} tokens/s below 7-day p10")
    elif kind == "hang":
        titles = [
            f"{name} hung at step {res.hang_step}",
            f"No progress on {name} since {when}; all ranks timed out",
            f"{name} stuck at step {res.hang_step} since {when} UTC",
            f"Job {name} stopped logging at {when}, NCCL watchdog fired",
        ]
        reported = str(
            rng.choice(
                [
                    "Every rank printed a watchdog timeout. Needs a root cause before we relaunch.",
                    "Paged by the no-progress alert.",
                    "",
                ]
            )
        )
        alert = ("TrainingJobNoProgress", "critical", f"{name} made no progress for 15m")
    elif kind == "crash":
        assert res.crash_step is not None, "the simulated job crashed"
        lost = (
            job.restart_after + (res.crash_step - (res.resume_step or res.crash_step)) * o["ref_step"]
        ) / 60
        titles = [
            f"{name} crashed at {when} and restarted from checkpoint, ~{lost:.0f} min lost",
            f"Unplanned restart of {name} at {when}",
            f"{name} restarted at {when}; want to know why before it happens again",
            f"Job {name} died at step {res.crash_step}, auto-resumed",
        ]
        reported = str(
            rng.choice(["torchrun restarted the job on its own.", "Auto-resume worked but we lost time.", ""])
        )
        alert = ("TrainingJobRestarted", "warning", f"{name} restarted")
    elif kind == "sdc":
        step = next((r.step for r in res.records if r.t >= scn.tf), res.records[-1].step)
        if sym.get("blip"):
            titles = [
                f"Loss spike at step {step} ({when}) on {name}, training continued",
                f"{name}: grad-norm spike around {when}, then normal",
                f"Loss jumped at step {step}, want to know if the run is still healthy",
                f"Odd loss blip on {name} at {when}",
            ]
        else:
            titles = [
                f"Replica consistency audit failed on {name} (checkpoint at {when})",
                f"{name}: checkpoint shards disagree between data-parallel replicas",
                f"Param checksum audit mismatch on {name} since about step {step}",
                f"{name} checkpoint validation failed at {when}",
            ]
        reported = str(
            rng.choice(["No errors anywhere in the logs.", "Found by the nightly checkpoint validator.", ""])
        )
        alert = None
    else:
        t = _hhmm(scn.tf)
        titles = [
            f"Step-time p99 alert flapped at {t} on {name}, please check",
            f"Is {name} slower than it should be? MFU {mfu0:.0f}%",
            f"Post-maintenance health check of {name}",
            f"{name}: a user reports the run 'feels slow' since {t}",
        ]
        reported = str(
            rng.choice(
                [
                    "Probably nothing, but please confirm the fleet is healthy.",
                    "Dashboards look fine to me.",
                    "",
                ]
            )
        )
        alert = (
            ("TrainingStepTimeP99High", "info", f"{name} step time p99 above threshold")
            if rng.random() < 0.5
            else None
        )
    scn.title = titles[style % len(titles)]
    scn.reported = reported
    if o["alerts"] and alert is not None:
        a_name, sev, summary = alert
        start = scn.tf + float(rng.uniform(120, 900))
        if kind == "hang":
            start = scn.tf + 900
        start = min(start, scn.t1 - 60)
        fp = "%016x" % int(rng.integers(0, 2**62))
        scn.alerts = [
            {
                "status": "firing",
                "labels": {
                    "alertname": a_name,
                    "severity": sev,
                    "job": name,
                    "cluster": str(rng.choice(["c1", "prod-east", "train-b"])),
                },
                "annotations": {"summary": summary},
                "startsAt": _dt.datetime.fromtimestamp(start, tz=_dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[
                    :-3
                ]
                + "Z",
                "endsAt": "0001-01-01T00:00:00Z",
                "generatorURL": f"http://prometheus.monitoring:9090/graph?g0.expr=job%3Atrain_tokens_per_second%7Bjob%3D%22{name}%22%7D",
                "fingerprint": fp,
            }
        ]


def generate(spec: IncidentSpec, out_dir: str | Path) -> dict:
    """Write ``out_dir/<case>/bundle/...`` and ``out_dir/<case>/truth.json``; return a summary."""
    scn = build(spec)
    case_dir = Path(out_dir) / spec.case
    if case_dir.exists():
        shutil.rmtree(case_dir)
    bundle = case_dir / "bundle"
    w = BundleWriter(bundle)
    write_bundle(scn, w, incident_id=spec.case)
    BundleWriter(case_dir).json("truth.json", scn.truth, indent=None)
    return {
        "case": spec.case,
        "cause": spec.cause,
        "variant": spec.variant,
        "seed": spec.seed,
        "hosts": spec.hosts,
        "truth": scn.truth,
        "title": scn.title,
        "notes": scn.notes,
        "files": len(w.written),
    }
