"""``forensic bench intake --db postgresql://...``: intake throughput with 1, 2, 4 ... API processes.

Each round starts ``n`` ``forensic serve --db URL --workers 0`` processes on free loopback ports
and spreads the client's connections over them evenly; the alerts of a round come from
``faults`` simulated faults and carry round-unique fingerprints, jobs and hosts, so rounds (and other users of the database) do not
collide and what was stored is counted exactly. ``lost``: alerts acknowledged with 202 but not
in the database, plus alerts refused. Use a scratch database: the alerts stay in it.

Where the CPU went during the posting, per alert and as a share of the machine (Linux ``/proc``):
the API processes, PostgreSQL (the postmaster and every child of it, found from the backends'
parent when the database runs on this machine; otherwise not measured), this process (the load
generator), and everything else on the machine; idle is what no one used. On a small machine these
say what bounds the curve: once the cores are busy, another API process only takes CPU from the
database and the client.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from forensic.harness.service.bench import (
    _cpu_s,
    _post_all,
    example_bundle,
    fault_alert,
    free_port,
    run_client,
    wait_healthy,
    webhook,
    write_config,
)


def _machine_cpu_s() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot, from /proc/stat; (0, 0) where unavailable."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    except (OSError, ValueError, IndexError):
        return 0.0, 0.0
    tck = os.sysconf("SC_CLK_TCK")
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    total = sum(fields[:8])  # guest time is already inside user
    return (total - idle) / tck, total / tck


def _ppid(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def postmaster_pid(db: str) -> int | None:
    """The local PostgreSQL server's postmaster pid (parent of this session's backend), or None if remote."""
    import psycopg

    try:
        with psycopg.connect(db, connect_timeout=10) as con:
            row = con.execute("SELECT pg_backend_pid()").fetchone()
            assert row is not None  # one row, always
            backend = row[0]
            ppid = _ppid(backend)  # the server's pid namespace is ours only when it runs here
            if ppid is None or Path(f"/proc/{ppid}/comm").read_text().strip() not in (
                "postgres",
                "postmaster",
            ):
                return None
            return ppid
    except (OSError, psycopg.Error):
        return None


def _tree_cpu(root: int | None) -> dict[int, float]:
    """CPU seconds of ``root`` and its children, by pid (PostgreSQL: the postmaster and its backends)."""
    if root is None:
        return {}
    out = {root: _cpu_s(root)}
    for d in Path("/proc").iterdir():
        if d.name.isdigit() and _ppid(int(d.name)) == root:
            out[int(d.name)] = _cpu_s(int(d.name))
    return out


def _self_cpu_s() -> float:
    t = os.times()
    return t.user + t.system


def cpu_split(before: dict[str, Any], after: dict[str, Any], alerts: int) -> dict[str, Any]:
    """CPU ms per alert and the share of the machine's CPU, per component, between two snapshots."""
    api = after["api"] - before["api"]
    pg = sum(v - before["pg"].get(pid, 0.0) for pid, v in after["pg"].items()) if after["pg"] else None
    client = after["client"] - before["client"]
    busy = after["machine"][0] - before["machine"][0]
    total = after["machine"][1] - before["machine"][1]
    other = max(0.0, busy - api - (pg or 0.0) - client)

    def share(x: float | None) -> float | None:
        return None if x is None or total <= 0 else round(100 * x / total, 1)

    def per(x: float | None) -> float | None:
        return None if x is None else round(1000 * x / max(1, alerts), 3)

    return {
        "ms_per_alert": {"api": per(api), "postgres": per(pg), "client": per(client), "other": per(other)},
        "percent_of_machine": {
            "api": share(api),
            "postgres": share(pg),
            "client": share(client),
            "other": share(other),
            "idle": share(max(0.0, total - busy)),
        },
    }


def _snapshot(procs: list[subprocess.Popen], postmaster: int | None) -> dict[str, Any]:
    return {
        "api": sum(_cpu_s(p.pid) for p in procs),
        "pg": _tree_cpu(postmaster),
        "client": _self_cpu_s(),
        "machine": _machine_cpu_s(),
    }


def _start(config: Path, db: str, port: int, log: Path) -> subprocess.Popen:
    fh = open(log, "ab")
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "forensic.harness.cli",
            "serve",
            "--config",
            str(config),
            "--db",
            db,
            "--workers",
            "0",
            "--port",
            str(port),
        ],
        stdout=fh,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def run_round(
    db: str,
    *,
    processes: int,
    alerts: int,
    concurrency: int,
    per_request: int,
    faults: int = 1,
    postmaster: int | None = None,
) -> dict[str, Any]:
    import psycopg

    token = secrets.token_hex(16)
    run = secrets.token_hex(3)
    job = f"bench-{run}"
    with tempfile.TemporaryDirectory(prefix="forensic-pgbench-") as tmp:
        folder = Path(tmp)
        bundle = example_bundle() or folder
        cfg = write_config(
            folder,
            port=0,
            tokens={"bench": ("webhook", token)},
            bundles=[{"path": bundle, "hosts": [f"{run}-*"]}],
        )
        ports = [free_port() for _ in range(processes)]
        procs = [_start(cfg, db, p, folder / f"server{i}.log") for i, p in enumerate(ports)]
        try:
            for p, proc in zip(ports, procs, strict=True):
                try:
                    wait_healthy(p, proc)
                except RuntimeError as exc:
                    tail = (
                        (folder / f"server{procs.index(proc)}.log")
                        .read_text(errors="replace")
                        .strip()
                        .splitlines()
                    )
                    raise RuntimeError(f"{exc}: {tail[-1] if tail else 'no output'}") from None
            t0 = time.time()
            items = []
            for i in range(alerts):
                f = i % faults  # alert i belongs to fault f: its own job and hosts, so one investigation each
                a = fault_alert(i, job=f"{job}-{f}", t0=t0)
                a["labels"]["Hostname"] = f"{run}-f{f}-h{(i // faults) % 16:02d}"
                a["fingerprint"] = f"{run}{i:010x}"
                items.append(a)
            bodies = [
                json.dumps(webhook(items[i : i + per_request])).encode()
                for i in range(0, alerts, per_request)
            ]
            per = max(1, concurrency // processes)

            async def all_ports() -> list[tuple[list[float], list[int]]]:
                return await asyncio.gather(
                    *(_post_all(port, token, bodies[k::processes], per) for k, port in enumerate(ports))
                )

            before = _snapshot(procs, postmaster)
            start = time.perf_counter()
            parts = run_client(all_ports())
            elapsed = time.perf_counter() - start
            cpu = cpu_split(before, _snapshot(procs, postmaster), alerts)
        finally:
            for proc in procs:
                proc.terminate()
            for proc in procs:
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
    lat: list[float] = [x for part in parts for x in part[0]]
    codes = [0] * len(bodies)
    for k, (_, c) in enumerate(parts):
        for j, code in enumerate(c):
            codes[k + j * processes] = code
    with psycopg.connect(db) as con:
        stored = {
            r[0]
            for r in con.execute("SELECT fingerprint FROM alerts WHERE fingerprint LIKE %s", (run + "%",))
        }
        counted = con.execute(
            "SELECT COUNT(*) FROM investigations WHERE job LIKE %s", (job + "-%",)
        ).fetchone()
        assert counted is not None  # COUNT(*) has one row, always
        investigations = counted[0]
    acked = {
        items[j]["fingerprint"]
        for b, code in enumerate(codes)
        if code == 202
        for j in range(b * per_request, min(alerts, (b + 1) * per_request))
    }
    ms = np.array(lat) * 1000
    return {
        "processes": processes,
        "faults": faults,
        "alerts": alerts,
        "requests": len(bodies),
        "per_request": per_request,
        "concurrency": per * processes,
        "accepted": len(acked),
        "stored": len(stored),
        "seconds": round(elapsed, 3),
        "alerts_per_s": round(len(acked) / elapsed, 1),
        "p50_ms": round(float(np.percentile(ms, 50)), 2),
        "p99_ms": round(float(np.percentile(ms, 99)), 2),
        "investigations": investigations,
        "lost": len(acked - stored) + (alerts - len(acked)),
        "server_cpu_ms_per_alert": cpu["ms_per_alert"]["api"],
        "cpu": cpu,
    }


def run_pg_intake_bench(
    db: str,
    *,
    processes: list[int],
    alerts: int = 2000,
    concurrency: int = 64,
    per_request: int = 1,
    faults: int = 1,
    repeat: int = 1,
) -> dict[str, Any]:
    """One round per entry of ``processes``, the whole sequence ``repeat`` times (interleaved, so
    load from others drifts over every process count alike).

    A round's ``scaling`` is its alerts/s over the first round of its own pass; ``summary`` gives
    per process count the median alerts/s and p99 over the passes and the scaling of the medians,
    and ``ceiling_alerts_per_s``: what the measured CPU per alert would allow if the machine were
    this benchmark's alone (all cores for API + PostgreSQL + client, one core per API process).
    """
    from forensic.harness.service.schema import migrate
    from forensic.harness.service.store import connect_check

    connect_check(db)
    migrate(db)  # before the servers start, so they do not all wait on the same first migration
    postmaster = postmaster_pid(db)
    load_before = os.getloadavg()[0]
    cpus = os.cpu_count() or 1
    rounds: list[dict[str, Any]] = []
    for rep in range(repeat):
        this = [
            run_round(
                db,
                processes=n,
                alerts=alerts,
                concurrency=concurrency,
                per_request=per_request,
                faults=faults,
                postmaster=postmaster,
            )
            for n in processes
        ]
        base = this[0]["alerts_per_s"] or 1.0
        for r in this:
            r["scaling"] = round(r["alerts_per_s"] / base, 2)
            r["pass"] = rep + 1
        rounds += this
    summary: list[dict[str, Any]] = []
    for n in processes:
        mine = [r for r in rounds if r["processes"] == n]
        ms = [r["cpu"]["ms_per_alert"] for r in mine]
        own = float(np.median([m["api"] + (m["postgres"] or 0.0) + m["client"] for m in ms]))
        api = float(np.median([m["api"] for m in ms]))
        ceiling = min(
            cpus * 1000 / own if own > 0 else float("inf"), n * 1000 / api if api > 0 else float("inf")
        )
        summary.append(
            {
                "processes": n,
                "alerts_per_s": round(float(np.median([r["alerts_per_s"] for r in mine])), 1),
                "p99_ms": round(float(np.median([r["p99_ms"] for r in mine])), 2),
                "ms_per_alert_own": round(own, 3),
                "ceiling_alerts_per_s": round(ceiling) if ceiling != float("inf") else None,
            }
        )
    base = summary[0]["alerts_per_s"] or 1.0
    for x in summary:
        x["scaling"] = round(x["alerts_per_s"] / base, 2)
    return {
        "database": "postgresql",
        "rounds": rounds,
        "summary": summary,
        "repeat": repeat,
        "cpus": cpus,
        "postgres_local": postmaster is not None,
        "load_average_1m_before": round(load_before, 2),
        "load_average_1m": round(os.getloadavg()[0], 2),
    }


def format_pg_result(result: dict[str, Any]) -> str:
    def na(x: Any) -> Any:
        return "-" if x is None else x

    lines = [
        f"PostgreSQL intake, {result['cpus']} CPUs (1-minute load average {result.get('load_average_1m_before', '-')}"
        f" before, {result['load_average_1m']} after):",
        f"{'API processes':>13} {'alerts/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'scaling':>7} {'lost':>5} {'investigations':>14}",
    ]
    for r in result["rounds"]:
        lines.append(
            f"{r['processes']:>13} {r['alerts_per_s']:>9} {r['p50_ms']:>8} {r['p99_ms']:>8} "
            f"{r['scaling']:>6}x {r['lost']:>5} {r['investigations']:>14}"
        )
    lines += [
        "CPU while posting: ms per alert (share of the machine)"
        + (
            ""
            if result.get("postgres_local")
            else "; PostgreSQL is not on this machine, so it is not measured"
        ),
        f"{'API processes':>13} {'API':>14} {'PostgreSQL':>14} {'client':>14} {'other':>14} {'idle':>6}",
    ]
    for r in result["rounds"]:
        ms, pc = r["cpu"]["ms_per_alert"], r["cpu"]["percent_of_machine"]
        cells = [f"{na(ms[k])} ({na(pc[k])}%)" for k in ("api", "postgres", "client", "other")]
        lines.append(
            f"{r['processes']:>13} " + " ".join(f"{c:>14}" for c in cells) + f" {na(pc['idle']):>5}%"
        )
    if result.get("summary"):
        lines += [
            f"Median of {result.get('repeat', 1)} pass(es); ceiling: alerts/s the CPU per alert of API + PostgreSQL"
            " + client would allow on this machine's cores alone (one core per API process)",
            f"{'API processes':>13} {'alerts/s':>9} {'p99 ms':>8} {'scaling':>7} {'own ms/alert':>12} {'ceiling':>8}",
        ]
        for x in result["summary"]:
            lines.append(
                f"{x['processes']:>13} {x['alerts_per_s']:>9} {x['p99_ms']:>8} {x['scaling']:>6}x "
                f"{x['ms_per_alert_own']:>12} {na(x['ceiling_alerts_per_s']):>8}"
            )
    return "\n".join(lines)
