"""A recorded incident served as a live fleet on loopback: one replay agent per host, a real
Prometheus backfilled from the bundle's OpenMetrics files, and the fleet file that points at them.

Used by the live-equals-replay tests and ``forensic bench fleet``. Everything listens on
127.0.0.1 on free ports and is stopped by :meth:`FleetRig.stop` (or leaving the ``with``).
"""

from __future__ import annotations

import gzip
import http.server
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Literal

import httpx
from forensic.sandbox import Bundle, ForensicError

Fault = Literal["down", "slow", "garbage"]


#: Worker processes that host the replay agents.
AGENT_PROCESSES = 4


class RigError(ForensicError):
    """The rig could not be set up (Prometheus missing or not starting)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def prometheus_binaries() -> tuple[str, str] | None:
    """(prometheus, promtool) when both are installed."""
    prom, tool = shutil.which("prometheus"), shutil.which("promtool")
    return (prom, tool) if prom and tool else None


class _Misbehaving(http.server.BaseHTTPRequestHandler):
    """An 'agent' that is slow (answers after ``delay``) or answers garbage."""

    mode: Fault = "garbage"
    delay = 30.0

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        if self.mode == "slow":
            time.sleep(self.delay)
        body = b"\x00\xffnot json at all"
        try:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            pass  # the client gave up waiting (that is the point of a slow agent)

    do_GET = do_POST  # noqa: N815

    def log_message(self, *args: object) -> None:
        pass


class FleetRig:
    """Serve ``bundle`` as a live fleet under ``workdir``."""

    def __init__(
        self,
        bundle: Path | str,
        workdir: Path,
        *,
        prometheus: bool = True,
        faults: dict[str, Fault] | None = None,
        agent_timeout_s: float = 5.0,
        step_s: float = 60.0,
        prometheus_url: str | None = None,
    ) -> None:
        self.bundle = Bundle(bundle)
        self.workdir = Path(workdir)
        self.want_prometheus = prometheus
        self.faults = dict(faults or {})
        self.agent_timeout_s = agent_timeout_s
        self.step_s = step_s
        self.prometheus_url = prometheus_url
        self._agents: list = []
        self._servers: list[http.server.HTTPServer] = []
        self._prom: subprocess.Popen | None = None
        self.fleet_file = self.workdir / "fleet.toml"

    # -- setup -------------------------------------------------------------------------------
    def start(self) -> FleetRig:
        self.workdir.mkdir(parents=True, exist_ok=True)
        token = "rig-" + "x" * 40
        (self.workdir / "agent-token").write_text(token + "\n")
        (self.workdir / "agent-token").chmod(0o600)
        urls: dict[str, str] = {}
        try:
            replayed = [
                h
                for h in self.bundle.host_names()
                if h not in self.faults and self.bundle.fs.is_dir(f"nodes/{h}")
            ]
            urls.update(self._start_agents(replayed))
            for host in self.bundle.host_names():
                fault = self.faults.get(host)
                if fault == "down":
                    urls[host] = f"http://127.0.0.1:{free_port()}"  # nothing listens there
                elif fault in ("slow", "garbage"):
                    handler = type("H", (_Misbehaving,), {"mode": fault, "delay": self.agent_timeout_s * 4})
                    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
                    srv.daemon_threads = True
                    threading.Thread(target=srv.serve_forever, daemon=True).start()
                    self._servers.append(srv)
                    urls[host] = f"http://127.0.0.1:{srv.server_address[1]}"
            if self.want_prometheus and self.prometheus_url is None:
                self.prometheus_url = self._start_prometheus()
        except BaseException:
            self.stop()
            raise
        self._write_fleet(urls)
        return self

    def _start_agents(self, hosts: list[str]) -> dict[str, str]:
        """Replay agents in a few worker processes (an agent in the investigator's own process
        would share its interpreter lock and slow every call)."""
        if not hosts:
            return {}
        workers = min(AGENT_PROCESSES, len(hosts))
        procs = []
        for i in range(workers):
            mine = hosts[i::workers]
            procs.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "forensic.evals.fleet_rig",
                        str(self.bundle.root),
                        str(self.workdir / "agent-token"),
                        *mine,
                    ],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    text=True,
                )
            )
            self._agents.append(procs[-1])
        urls: dict[str, str] = {}
        for proc in procs:
            for line in proc.stdout:  # type: ignore[union-attr]
                if line.strip() == "ready":
                    break
                host, url = line.split()
                urls[host] = url
            else:
                raise RigError(f"replay agents did not start (exit {proc.wait()})")
        return {h: urls[h] for h in hosts}

    def _write_fleet(self, urls: dict[str, str]) -> None:
        topo = None
        for name in ("topology.json", "topology.json.gz"):
            src = self.bundle.root / name
            if src.is_file():
                topo = self.workdir / "topology.json"
                topo.write_bytes(
                    gzip.decompress(src.read_bytes()) if name.endswith(".gz") else src.read_bytes()
                )
                break
        lines = [f"gpus_per_node = {self.bundle.gpus_per_node}", ""]
        if self.prometheus_url:
            lines += [
                "[prometheus]",
                f'url = "{self.prometheus_url}"',
                f"step_s = {self.step_s:g}",
                "timeout_s = 10",
                "",
            ]
        lines += [
            "[agents]",
            'token_file = "agent-token"',
            f"timeout_s = {self.agent_timeout_s:g}",
            f"hosts = [{', '.join(repr(h).replace(chr(39), chr(34)) for h in urls)}]",
            "",
            "[agents.urls]",
        ]
        lines += [f'"{h}" = "{u}"' for h, u in urls.items()]
        lines += [""]
        if topo is not None:
            lines += ["[topology]", 'file = "topology.json"', ""]
        lines += ["[job]", f'dir = "{self.bundle.root / "job"}"', ""]
        self.fleet_file.write_text("\n".join(lines) + "\n")

    def _start_prometheus(self) -> str:
        bins = prometheus_binaries()
        if bins is None:
            raise RigError("prometheus and promtool are not installed (Debian: apt-get install prometheus)")
        prom, tool = bins
        data = self.workdir / "prometheus"
        data.mkdir(exist_ok=True)
        for rel in self.bundle.files("metrics", (".om", ".prom", ".txt")):
            text = self.bundle.fs.read_text(rel)
            if not text.rstrip().endswith("# EOF"):
                text = text.rstrip("\n") + "\n# EOF\n"
            om = self.workdir / (Path(rel).name + ".om")
            om.write_text(text)
            done = subprocess.run(
                [tool, "tsdb", "create-blocks-from", "openmetrics", str(om), str(data)],
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            if done.returncode != 0:
                raise RigError(f"promtool could not backfill {rel}: {done.stderr.strip()[-300:]}")
        config = self.workdir / "prometheus.yml"
        config.write_text("global:\n  scrape_interval: 1m\nscrape_configs: []\n")
        port = free_port()
        log = open(self.workdir / "prometheus.log", "wb")  # noqa: SIM115 - closed with the process
        # The bundle's samples are months old and minutes apart: keep them, and let a query see a
        # sample up to ten minutes back.
        self._prom = subprocess.Popen(
            [
                prom,
                f"--config.file={config}",
                f"--storage.tsdb.path={data}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--storage.tsdb.retention.time=100y",
                "--query.lookback-delta=10m",
                "--log.level=warn",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self._prom.poll() is not None:
                raise RigError(
                    f"prometheus exited ({self._prom.returncode}); see {self.workdir / 'prometheus.log'}"
                )
            try:
                if httpx.get(f"{url}/-/ready", timeout=1.0).status_code == 200:
                    return url
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RigError("prometheus did not become ready in 60 s")

    # -- use ---------------------------------------------------------------------------------
    def investigate_args(self) -> list[str]:
        """Arguments of ``forensic investigate`` that read this rig as the bundle's incident."""
        inc = self.bundle.incident
        start, end = self.bundle.window
        span = max(1, int(round((end or 0) - (start or 0))))
        args = [
            "--fleet",
            str(self.fleet_file),
            "--job",
            inc.job.name or "job",
            "--since",
            f"{span}s",
            "--until",
            repr(float(end or time.time())),
            "--title",
            inc.title or "incident",
        ]
        if inc.job.ranks:
            args += ["--ranks", str(inc.job.ranks)]
        return args

    def stop(self) -> None:
        for proc in self._agents:
            if proc.stdin:
                proc.stdin.close()  # the worker stops its agents and exits at end of input
        for proc in self._agents:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stdout:
                proc.stdout.close()
        self._agents.clear()
        for srv in self._servers:
            srv.shutdown()
            srv.server_close()
        self._servers.clear()
        if self._prom is not None:
            self._prom.terminate()
            try:
                self._prom.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self._prom.kill()
                self._prom.wait()
            self._prom = None

    def __enter__(self) -> FleetRig:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _serve_agents(bundle: str, token_file: str, hosts: list[str]) -> None:
    """Worker: one replay agent per host on 127.0.0.1, 'host url' lines, 'ready', then serve until
    standard input closes."""
    from forensic.harness.node_agent import AgentServer
    from forensic.sandbox.agent import AgentLimits, read_token_file, replay_agent

    b = Bundle(bundle)
    token = read_token_file(token_file)
    # The rig's agents serve one investigation as fast as it asks: no per-client rate limit.
    limits = AgentLimits(rate_per_s=1e6, rate_burst=1_000_000)
    servers = []
    for h in hosts:
        srv = AgentServer(replay_agent(b, h, token, limits=limits))
        # Accepted connections inherit TCP_NODELAY from the listening socket; without it a
        # response written as headers then body waits for the client's delayed ACK (40 ms).
        srv._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        servers.append(srv.start())
    try:
        for h, srv in zip(hosts, servers, strict=True):
            print(h, srv.url, flush=True)
        print("ready", flush=True)
        sys.stdin.read()
    finally:
        for srv in servers:
            srv.stop()


__all__ = ["FleetRig", "RigError", "free_port", "prometheus_binaries"]

if __name__ == "__main__":
    _serve_agents(sys.argv[1], sys.argv[2], sys.argv[3:])
