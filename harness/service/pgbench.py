"""``forensic bench intake --db postgresql://...``: intake throughput with 1, 2, 4 ... API processes.

Each round starts ``n`` ``forensic serve --db URL --workers 0`` processes on free loopback ports
and spreads the client's connections over them evenly; the alerts of a round come from
``faults`` simulated faults and carry round-unique fingerprints, jobs and hosts, so rounds (and other users of the database) do not
collide and what was stored is counted exactly. ``lost``: alerts acknowledged with 202 but not
in the database, plus alerts refused. Use a scratch database: the alerts stay in it.
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

from forensic.harness.service.bench import (_cpu_s, _post_all, example_bundle, fault_alert, free_port, wait_healthy,
                                            webhook, write_config)


def _start(config: Path, db: str, port: int, log: Path) -> subprocess.Popen:
    fh = open(log, "ab")
    return subprocess.Popen([sys.executable, "-m", "forensic.harness.cli", "serve", "--config", str(config), "--db", db,
                             "--workers", "0", "--port", str(port)], stdout=fh, stderr=subprocess.STDOUT,
                            start_new_session=True)


def run_round(db: str, *, processes: int, alerts: int, concurrency: int, per_request: int, faults: int = 1) -> dict[str, Any]:
    import psycopg

    token = secrets.token_hex(16)
    run = secrets.token_hex(3)
    job = f"bench-{run}"
    with tempfile.TemporaryDirectory(prefix="forensic-pgbench-") as tmp:
        folder = Path(tmp)
        bundle = example_bundle() or folder
        cfg = write_config(folder, port=0, tokens={"bench": ("webhook", token)},
                           bundles=[{"path": bundle, "hosts": [f"{run}-*"]}])
        ports = [free_port() for _ in range(processes)]
        procs = [_start(cfg, db, p, folder / f"server{i}.log") for i, p in enumerate(ports)]
        try:
            for p, proc in zip(ports, procs):
                try:
                    wait_healthy(p, proc)
                except RuntimeError as exc:
                    tail = (folder / f"server{procs.index(proc)}.log").read_text(errors="replace").strip().splitlines()
                    raise RuntimeError(f"{exc}: {tail[-1] if tail else 'no output'}") from None
            t0 = time.time()
            items = []
            for i in range(alerts):
                f = i % faults  # alert i belongs to fault f: its own job and hosts, so one investigation each
                a = fault_alert(i, job=f"{job}-{f}", t0=t0)
                a["labels"]["Hostname"] = f"{run}-f{f}-h{(i // faults) % 16:02d}"
                a["fingerprint"] = f"{run}{i:010x}"
                items.append(a)
            bodies = [json.dumps(webhook(items[i:i + per_request])).encode() for i in range(0, alerts, per_request)]
            per = max(1, concurrency // processes)
            cpu0 = sum(_cpu_s(p.pid) for p in procs)

            async def all_ports() -> list[tuple[list[float], list[int]]]:
                return await asyncio.gather(*(_post_all(port, token, bodies[k::processes], per)
                                              for k, port in enumerate(ports)))

            start = time.perf_counter()
            parts = asyncio.run(all_ports())
            elapsed = time.perf_counter() - start
            server_cpu = sum(_cpu_s(p.pid) for p in procs) - cpu0
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
        stored = {r[0] for r in con.execute("SELECT fingerprint FROM alerts WHERE fingerprint LIKE %s", (run + "%",))}
        investigations = con.execute("SELECT COUNT(*) FROM investigations WHERE job LIKE %s", (job + "-%",)).fetchone()[0]
    acked = {items[j]["fingerprint"] for b, code in enumerate(codes) if code == 202
             for j in range(b * per_request, min(alerts, (b + 1) * per_request))}
    ms = np.array(lat) * 1000
    return {"processes": processes, "faults": faults, "alerts": alerts, "requests": len(bodies), "per_request": per_request,
            "concurrency": per * processes, "accepted": len(acked), "stored": len(stored), "seconds": round(elapsed, 3),
            "alerts_per_s": round(len(acked) / elapsed, 1), "p50_ms": round(float(np.percentile(ms, 50)), 2),
            "p99_ms": round(float(np.percentile(ms, 99)), 2), "investigations": investigations,
            "lost": len(acked - stored) + (alerts - len(acked)),
            "server_cpu_ms_per_alert": round(server_cpu * 1000 / max(1, alerts), 3)}


def run_pg_intake_bench(db: str, *, processes: list[int], alerts: int = 2000, concurrency: int = 64,
                        per_request: int = 1, faults: int = 1) -> dict[str, Any]:
    """One round per entry of ``processes``; scaling is alerts/s relative to the first round."""
    from forensic.harness.service.pgstore import connect_check, migrate

    connect_check(db)
    migrate(db)  # before the servers start, so they do not all wait on the same first migration
    rounds = [run_round(db, processes=n, alerts=alerts, concurrency=concurrency, per_request=per_request,
                        faults=faults) for n in processes]
    base = rounds[0]["alerts_per_s"] or 1.0
    for r in rounds:
        r["scaling"] = round(r["alerts_per_s"] / base, 2)
    return {"database": "postgresql", "rounds": rounds, "cpus": os.cpu_count(),
            "load_average_1m": round(os.getloadavg()[0], 2)}


def format_pg_result(result: dict[str, Any]) -> str:
    lines = [f"PostgreSQL intake, {result['cpus']} CPUs (load average {result['load_average_1m']}):",
             f"{'API processes':>13} {'alerts/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'scaling':>7} {'lost':>5} {'investigations':>14}"]
    for r in result["rounds"]:
        lines.append(f"{r['processes']:>13} {r['alerts_per_s']:>9} {r['p50_ms']:>8} {r['p99_ms']:>8} "
                     f"{r['scaling']:>6}x {r['lost']:>5} {r['investigations']:>14}")
    return "\n".join(lines)
