"""Job placement: Slurm's node lists (parsed here, and read from the real slurmctld/slurmd the
executor tests start), Kubernetes pods -> nodes through the official client against an API server
double on loopback, and the fleet file choosing one. Not tested here: a real Kubernetes cluster
(RBAC, watch semantics) and a multi-node Slurm cluster (the test cluster has one node)."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from forensic.sandbox.fleet import FleetSource, load_fleet
from forensic.sandbox.placement import (
    KubernetesPlacement,
    Placement,
    PlacementError,
    SlurmPlacement,
    TopologyFilePlacement,
    expand_hostlist,
)

from tests.harness.executors.conftest import slurm  # noqa: F401  (the real Slurm fixture)

WINDOW = (0.0, 1.0)


@pytest.mark.parametrize(
    "text, hosts",
    [
        ("gpu-a001", ["gpu-a001"]),
        ("gpu-[001-003,007],login1", ["gpu-001", "gpu-002", "gpu-003", "gpu-007", "login1"]),
        ("r[1-2]-n[08-10]", ["r1-n08", "r1-n09", "r1-n10", "r2-n08", "r2-n09", "r2-n10"]),
    ],
)
def test_slurm_node_lists_expand(text: str, hosts: list[str]) -> None:
    assert expand_hostlist(text) == hosts


@pytest.mark.parametrize(
    "text, why",
    [
        ("gpu-[1-", "unbalanced"),
        ("gpu-[a]", "not a number"),
        ("n[5-1]", "bad range"),
        ("n[1-200000]", "bad range"),
        ("a;rm -rf /", "not a host name"),
        ("n[0-99999],m[0-99999]", "expands past"),
    ],
)
def test_bad_node_lists_are_one_clear_line(text: str, why: str) -> None:
    with pytest.raises(PlacementError, match=why):
        expand_hostlist(text)


def test_every_placement_is_the_protocol(tmp_path: Path) -> None:
    for p in (TopologyFilePlacement(tmp_path / "t.json"), SlurmPlacement(), KubernetesPlacement(label="job")):
        assert isinstance(p, Placement)
    with pytest.raises(PlacementError, match="unusable"):
        TopologyFilePlacement(tmp_path / "t.json").topology("j", WINDOW)


def _sbatch(slurm, name: str) -> str:  # noqa: F811
    done = subprocess.run(
        ["sbatch", "--parsable", "-J", name, "-o", "/dev/null", "--wrap", "sleep 300"],
        capture_output=True,
        text=True,
        env=slurm.env(),
        timeout=30,
        check=True,
    )
    jid = done.stdout.strip().split(";")[0]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        state = subprocess.run(
            ["squeue", "-h", "-j", jid, "-o", "%T"],
            capture_output=True,
            text=True,
            env=slurm.env(),
            timeout=30,
        ).stdout.strip()
        if state == "RUNNING":
            return jid
        time.sleep(0.5)
    raise AssertionError(f"job {jid} did not start: {state!r}")


def test_slurm_placement_reads_the_real_slurmctld(slurm, tmp_path: Path) -> None:  # noqa: F811
    jid = _sbatch(slurm, "llm-live-place")
    try:
        place = SlurmPlacement(slurm_conf=slurm.conf)
        assert [h.name for h in place.topology("llm-live-place", WINDOW).hosts] == [slurm.node]
        assert [h.name for h in place.topology(jid, WINDOW).hosts] == [slurm.node]
        with pytest.raises(PlacementError, match="no running job named 'nobody-runs-this'"):
            place.topology("nobody-runs-this", WINDOW)
        # the fleet file chooses it: the job's hosts come from slurmctld
        (tmp_path / "token").write_text("a-token-of-some-length\n")
        (tmp_path / "fleet.toml").write_text(
            '[agents]\nurl_template = "http://{host}:9401"\ntoken_file = "token"\n'
            f'[topology]\nscheduler = "slurm"\nslurm_conf = "{slurm.conf}"\n'
        )
        src = FleetSource(load_fleet(tmp_path / "fleet.toml"), job="llm-live-place", start=0, end=1)
        assert src.host_names() == [slurm.node] and src.notes() == []
        src = FleetSource(load_fleet(tmp_path / "fleet.toml"), job="gone-job", start=0, end=1)
        assert src.host_names() == [] and "no running job named 'gone-job'" in src.notes()[0]
    finally:
        subprocess.run(["scancel", jid], env=slurm.env(), timeout=30, check=False)


def test_slurm_down_is_a_clear_error(tmp_path: Path) -> None:
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=x\nSlurmctldHost=nowhere(127.0.0.1)\nSlurmctldPort=9\n")
    with pytest.raises(PlacementError) as exc:
        SlurmPlacement(slurm_conf=conf, timeout_s=20).topology("train", WINDOW)
    assert "\n" not in str(exc.value) and "squeue" in str(exc.value)


# -- Kubernetes ----------------------------------------------------------------------------------
def _pod(name: str, node: str | None, job: str, phase: str = "Running") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "train", "labels": {"training-job": job}},
        "spec": {"nodeName": node, "containers": []} if node else {"containers": []},
        "status": {"phase": phase},
    }


PODS = [
    _pod("w-0", "gpu-k002", "llm"),
    _pod("w-1", "gpu-k001", "llm"),
    _pod("w-2", "gpu-k001", "llm"),
    _pod("w-3", None, "llm", "Pending"),
    _pod("old", "gpu-k009", "llm", "Succeeded"),
    _pod("x", "gpu-k050", "other"),
]


@pytest.fixture()
def k8s():
    kubernetes = pytest.importorskip("kubernetes")
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:
            url = urlparse(self.path)
            seen.append(self.path)
            sel = parse_qs(url.query).get("labelSelector", [""])[0]
            key, _, value = sel.partition("=")
            if url.path in ("/api/v1/pods", "/api/v1/namespaces/train/pods"):
                items = [p for p in PODS if p["metadata"]["labels"].get(key) == value]
                body, code = {"apiVersion": "v1", "kind": "PodList", "metadata": {}, "items": items}, 200
            else:
                body, code = {"kind": "Status", "code": 403, "reason": "Forbidden"}, 403
            raw = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    cfg = kubernetes.client.Configuration(host=f"http://127.0.0.1:{server.server_address[1]}")
    yield kubernetes.client.CoreV1Api(kubernetes.client.ApiClient(cfg)), seen
    server.shutdown()


def test_kubernetes_placement_is_the_nodes_of_the_jobs_running_pods(k8s) -> None:
    core, seen = k8s
    place = KubernetesPlacement(label="training-job", api=core)
    assert [h.name for h in place.topology("llm", WINDOW).hosts] == ["gpu-k001", "gpu-k002"]
    assert "labelSelector=training-job%3Dllm" in seen[-1]
    ns = KubernetesPlacement(label="training-job", namespace="train", api=core)
    assert [h.name for h in ns.topology("llm", WINDOW).hosts] == ["gpu-k001", "gpu-k002"]
    with pytest.raises(PlacementError, match="no scheduled pod labelled training-job=nobody"):
        place.topology("nobody", WINDOW)
    with pytest.raises(PlacementError, match="answered 403"):
        KubernetesPlacement(label="training-job", namespace="secret", api=core).topology("llm", WINDOW)


def test_kubernetes_unreachable_and_unconfigured_are_clear(tmp_path: Path) -> None:
    kubernetes = pytest.importorskip("kubernetes")
    cfg = kubernetes.client.Configuration(host="http://127.0.0.1:9")
    cfg.retries = 0
    down = KubernetesPlacement(
        label="training-job", api=kubernetes.client.CoreV1Api(kubernetes.client.ApiClient(cfg))
    )
    with pytest.raises(PlacementError, match="cannot reach the API server"):
        down.topology("llm", WINDOW)
    with pytest.raises(PlacementError, match="kubernetes configuration"):
        KubernetesPlacement(label="training-job", kubeconfig=tmp_path / "missing").topology("llm", WINDOW)
