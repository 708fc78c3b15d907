"""The intake benchmark: one simulated fault's alerts, posted at full speed to a real server.

The server is ``forensic serve`` in its own process on a free loopback port with a temporary
database; the client is httpx with ``concurrency`` requests in flight. Afterwards the database
is opened directly to count what was stored: ``lost`` is alerts acknowledged with 202 but not
in the database, plus alerts refused.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import numpy as np


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cpu_s(pid: int) -> float:
    """User plus system CPU seconds of a process (Linux /proc), 0 where unavailable."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def run_client(coro: Any) -> Any:
    """Run the load generator's coroutine on uvloop where installed (uvicorn[standard] brings it):
    the client shares the cores with what it measures, so its CPU per request should be small."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    return uvloop.run(coro)


def example_bundle() -> Path | None:
    import forensic.evals

    p = Path(forensic.evals.__file__).parent / "examples" / "pcie-x8-mfu-drop"
    return p if p.is_dir() else None


def write_config(
    folder: Path,
    *,
    port: int,
    tokens: dict[str, tuple[str, str]],
    bundles: list[dict[str, Any]],
    extra: str = "",
) -> Path:
    """A serve.toml in ``folder``: tokens maps user -> (role, token)."""
    lines = [f'database = "{folder / "serve.sqlite"}"', f'public_url = "http://127.0.0.1:{port}"', extra, ""]
    for name, (role, token) in tokens.items():
        tf = folder / f"{name}.token"
        tf.write_text(token + "\n")
        tf.chmod(0o600)
        lines += ["[[users]]", f'name = "{name}"', f'role = "{role}"', f'token_file = "{tf}"', ""]
    for b in bundles:
        lines += ["[[evidence.bundles]]", f'path = "{b["path"]}"']
        if b.get("job"):
            lines.append(f'job = "{b["job"]}"')
        if b.get("hosts"):
            lines.append("hosts = [" + ", ".join(f'"{h}"' for h in b["hosts"]) + "]")
        lines.append("")
    path = folder / "serve.toml"
    path.write_text("\n".join(lines))
    return path


def start_server(config: Path, port: int, log: Path) -> subprocess.Popen:
    fh = open(log, "ab")
    return subprocess.Popen(
        [sys.executable, "-m", "forensic.harness.cli", "serve", "--config", str(config), "--port", str(port)],
        stdout=fh,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def wait_healthy(port: int, proc: subprocess.Popen, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError("server did not become healthy")


def fault_alert(i: int, *, job: str, hosts: int = 16, t0: float | None = None) -> dict[str, Any]:
    """Alert ``i`` of one fault: one job, its hosts and GPUs, distinct label sets."""
    start = datetime.fromtimestamp((t0 or time.time()) + (i % 60), tz=UTC).isoformat().replace("+00:00", "Z")
    host = f"gpu-b{i % hosts:03d}"
    return {
        "status": "firing",
        "labels": {
            "alertname": "StepTimeRegression",
            "training_job": job,
            "Hostname": host,
            "gpu": str(i % 8),
            "shard": str(i),
        },
        "annotations": {"summary": f"step time up on {host}"},
        "startsAt": start,
        "endsAt": "0001-01-01T00:00:00Z",
        "generatorURL": "http://prometheus/graph",
        "fingerprint": f"{i:016x}",
    }


def webhook(alerts: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "version": "4",
        "groupKey": '{}:{alertname="StepTimeRegression"}',
        "truncatedAlerts": 0,
        "status": "firing",
        "receiver": "forensic",
        "groupLabels": {"alertname": "StepTimeRegression"},
        "commonLabels": {},
        "commonAnnotations": {},
        "externalURL": "http://alertmanager",
        "alerts": alerts,
    }


async def _post_all(
    port: int, token: str, bodies: list[bytes], concurrency: int
) -> tuple[list[float], list[int]]:
    """POST every body over ``concurrency`` keep-alive connections; (latency s, status) per body.

    A minimal HTTP/1.1 client on asyncio streams: on two shared cores a full client library
    costs as much CPU per request as the server, and would measure itself.
    """
    latencies: list[float] = [0.0] * len(bodies)
    codes: list[int] = [0] * len(bodies)
    it = iter(range(len(bodies)))
    head = (
        f"POST /api/v1/alerts HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
        "Content-Type: application/json\r\nContent-Length: "
    )

    async def worker() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            for i in it:
                t = time.perf_counter()
                writer.write(f"{head}{len(bodies[i])}\r\n\r\n".encode() + bodies[i])
                try:
                    status = await reader.readline()
                    length = 0
                    while (line := await reader.readline()) not in (b"\r\n", b""):
                        if line.lower().startswith(b"content-length:"):
                            length = int(line.split(b":")[1])
                    await reader.readexactly(length)
                    codes[i] = int(status.split()[1])
                except (OSError, ValueError, IndexError, asyncio.IncompleteReadError):
                    codes[i] = -1
                    writer.close()
                    reader, writer = await asyncio.open_connection("127.0.0.1", port)
                latencies[i] = time.perf_counter() - t
        finally:
            writer.close()

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return latencies, codes


def run_intake_bench(*, alerts: int = 10_000, concurrency: int = 64, per_request: int = 1) -> dict[str, Any]:
    import json
    import sqlite3

    token = secrets.token_hex(16)
    job = "bench-fault"
    with tempfile.TemporaryDirectory(prefix="forensic-bench-") as tmp:
        folder = Path(tmp)
        port = free_port()
        bundle = example_bundle()
        cfg = write_config(
            folder,
            port=port,
            tokens={"bench": ("webhook", token)},
            bundles=[{"path": bundle, "job": job}] if bundle else [{"path": folder, "job": job}],
        )
        proc = start_server(cfg, port, folder / "server.log")
        try:
            wait_healthy(port, proc)
            t0 = time.time()
            items = [fault_alert(i, job=job, t0=t0) for i in range(alerts)]
            bodies = [
                json.dumps(webhook(items[i : i + per_request])).encode()
                for i in range(0, alerts, per_request)
            ]
            cpu0 = _cpu_s(proc.pid)
            start = time.perf_counter()
            lat, codes = run_client(_post_all(port, token, bodies, concurrency))
            elapsed = time.perf_counter() - start
            server_cpu = _cpu_s(proc.pid) - cpu0
        finally:
            stop_process(proc, 20)
        con = sqlite3.connect(str(folder / "serve.sqlite"))
        stored = {r[0] for r in con.execute("SELECT fingerprint FROM alerts")}
        investigations = con.execute("SELECT COUNT(*) FROM investigations").fetchone()[0]
        con.close()
    acked = {
        items[j]["fingerprint"]
        for b, code in enumerate(codes)
        if code == 202
        for j in range(b * per_request, min(alerts, (b + 1) * per_request))
    }
    lost = len(acked - stored) + (alerts - len(acked))
    ms = np.array(lat) * 1000
    return {
        "alerts": alerts,
        "requests": len(bodies),
        "per_request": per_request,
        "concurrency": concurrency,
        "accepted": len(acked),
        "stored": len(stored),
        "seconds": round(elapsed, 3),
        "alerts_per_s": round(len(acked) / elapsed, 1),
        "requests_per_s": round(len(bodies) / elapsed, 1),
        "p50_ms": round(float(np.percentile(ms, 50)), 2),
        "p99_ms": round(float(np.percentile(ms, 99)), 2),
        "investigations": investigations,
        "lost": lost,
        "cpus": os.cpu_count(),
        "server_cpu_ms_per_alert": round(server_cpu * 1000 / max(1, alerts), 3),
        "load_average_1m": round(os.getloadavg()[0], 2),
    }


def format_result(r: dict[str, Any]) -> str:
    return (
        f"{r['alerts']} alerts in {r['requests']} webhooks ({r['per_request']}/webhook, {r['concurrency']} in flight): "
        f"{r['alerts_per_s']} alerts/s, p50 {r['p50_ms']} ms, p99 {r['p99_ms']} ms, "
        f"{r['investigations']} investigation(s), {r['lost']} lost; server CPU {r['server_cpu_ms_per_alert']} ms/alert, "
        f"load average {r['load_average_1m']} on {r['cpus']} CPUs"
    )


def stop_process(proc: subprocess.Popen, wait_s: float = 15) -> None:
    """End a server a benchmark started: SIGTERM, then SIGKILL if it is still there after ``wait_s``."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
