"""Fixtures for the service: an in-process app (TestClient) and a real ``forensic serve`` process."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from forensic.harness.service.bench import free_port, start_server, wait_healthy, write_config

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "evals" / "examples" / "pcie-x8-mfu-drop"
JOB = "llm-70b-pretrain"
TOKENS = {
    "alertmanager": ("webhook", "tok-webhook-0123456789abcdef"),
    "vic": ("viewer", "tok-viewer-0123456789abcdef"),
    "ann": ("approver", "tok-approver-0123456789abcdef"),
    "root": ("admin", "tok-admin-0123456789abcdef"),
}


def auth(user: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[user][1]}"}


def need_binary(path: str) -> str:
    """The path of a real component; a test without it fails under CI=true, else skips."""
    found = shutil.which(path) or (path if os.path.isfile(path) and os.access(path, os.X_OK) else None)
    if found:
        return found
    if os.environ.get("CI") == "true":
        pytest.fail(f"{path} is not installed; .ci/run installs it")
    pytest.skip(f"{path} is not installed")


class Server:
    """``forensic serve`` in its own process on a free loopback port."""

    def __init__(self, folder: Path, *, extra: str = "", bundles: list[dict[str, Any]] | None = None) -> None:
        self.folder = folder
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.config = write_config(
            folder,
            port=self.port,
            tokens=TOKENS,
            extra=extra,
            bundles=bundles if bundles is not None else [{"path": EXAMPLE, "job": JOB}],
        )
        self.proc: subprocess.Popen | None = None

    def start(self) -> Server:
        self.proc = start_server(self.config, self.port, self.folder / "server.log")
        wait_healthy(self.port, self.proc)
        return self

    def kill9(self) -> None:
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()

    def get(self, path: str, user: str = "root", **kw: Any) -> httpx.Response:
        return httpx.get(self.url + path, headers=auth(user), timeout=30, **kw)

    def post(self, path: str, user: str = "root", **kw: Any) -> httpx.Response:
        return httpx.post(self.url + path, headers={**auth(user), **kw.pop("headers", {})}, timeout=30, **kw)

    def wait_status(
        self,
        inv: str,
        done: tuple[str, ...] = ("awaiting_approval", "concluded", "failed"),
        timeout_s: float = 120,
    ) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            d = self.get(f"/api/v1/investigations/{inv}").json()
            if d["status"] in done:
                return d
            time.sleep(0.2)
        raise AssertionError(f"{inv} still {d['status']} after {timeout_s} s; log: {self.log()[-2000:]}")

    def log(self) -> str:
        p = self.folder / "server.log"
        return p.read_text(errors="replace") if p.exists() else ""


@pytest.fixture
def server(tmp_path: Path):
    made: list[Server] = []

    def make(**kw: Any) -> Server:
        s = Server(tmp_path, **kw)
        made.append(s)
        return s

    yield make
    for s in made:
        s.stop()


@pytest.fixture
def app_client(tmp_path: Path):
    """An in-process service with its threads (TestClient runs the lifespan)."""
    from fastapi.testclient import TestClient
    from forensic.harness.service import load_config
    from forensic.harness.service.api import create_app
    from forensic.harness.service.service import Service

    clients = []

    def make(extra: str = "", bundles: list[dict[str, Any]] | None = None) -> tuple[TestClient, Service]:
        cfg_path = write_config(
            tmp_path,
            port=0,
            tokens=TOKENS,
            extra=extra,
            bundles=bundles if bundles is not None else [{"path": EXAMPLE, "job": JOB}],
        )
        svc = Service(load_config(cfg_path))
        c = TestClient(create_app(svc), raise_server_exceptions=False)
        c.__enter__()
        clients.append(c)
        return c, svc

    yield make
    for c in clients:
        c.__exit__(None, None, None)


# A real Slurm (munged, slurmctld, slurmd) on this host, for executing and undoing from the service.
from ..executors.conftest import slurm  # noqa: E402, F401


def slurm_executors(folder: Path, cluster: Any, host: str) -> Path:
    """An executors.toml whose Slurm executor drains ``host`` as this host's real Slurm node."""
    path = folder / "executors.toml"
    path.write_text(f'[slurm]\nslurm_conf = "{cluster.conf}"\n\n[slurm.nodes]\n"{host}" = "{cluster.node}"\n')
    return path
