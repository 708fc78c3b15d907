"""Kubernetes executor against a recorded API server; runbook executor against a flaky ticket endpoint.

The Kubernetes API server here is a small HTTP server on loopback that answers the four calls a
drain makes (read/patch node, list pods by node, create an eviction) with the shapes the real API
returns; the official client talks to it over HTTP, so serialisation, URLs and errors are the
client's own. What is not tested live: a real cluster's admission, PodDisruptionBudget arithmetic
and pod termination (docs/executors.md says so).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from forensic.harness.executors import ExecutionError, ExecutionGate, ExecutorsConfig, SqliteLedger
from forensic.harness.executors.config import KubernetesConfig
from forensic.harness.executors.kubernetes import KubernetesExecutor

from .conftest import APPROVAL_REASON, Approved

kubernetes = pytest.importorskip("kubernetes")


def _pod(name: str, node: str, owner: str | None = None, ns: str = "train") -> dict:
    meta = {"name": name, "namespace": ns, "uid": f"uid-{name}"}
    if owner:
        meta["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": owner, "name": "x", "uid": "o", "controller": True}
        ]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"nodeName": node, "containers": []}}


class FakeApi:
    """State and HTTP handler of the recorded API server."""

    def __init__(self) -> None:
        self.nodes = {
            "gpu-e126": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-e126"}, "spec": {}}
        }
        self.pods = [
            _pod("trainer-0", "gpu-e126", "StatefulSet"),
            _pod("dcgm-exporter-x", "gpu-e126", "DaemonSet"),
            _pod("trainer-1", "gpu-other", "StatefulSet"),
        ]
        self.protected: set[str] = set()
        self.calls: list[tuple[str, str]] = []


def _serve(api: FakeApi) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def _send(self, code: int, body: dict) -> None:
            raw = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def _body(self) -> dict:
            n = int(self.headers.get("content-length") or 0)
            return json.loads(self.rfile.read(n) or b"{}")

        def do_GET(self) -> None:
            url = urlparse(self.path)
            api.calls.append(("GET", url.path))
            if url.path.startswith("/api/v1/nodes/"):
                node = api.nodes.get(url.path.rsplit("/", 1)[1])
                return (
                    self._send(200, node)
                    if node
                    else self._send(404, {"kind": "Status", "code": 404, "reason": "NotFound"})
                )
            if url.path == "/api/v1/pods":
                sel = parse_qs(url.query).get("fieldSelector", [""])[0]
                node = sel.partition("spec.nodeName=")[2]
                items = [p for p in api.pods if p["spec"]["nodeName"] == node]
                return self._send(
                    200, {"apiVersion": "v1", "kind": "PodList", "metadata": {}, "items": items}
                )
            self._send(404, {"kind": "Status", "code": 404})

        def do_PATCH(self) -> None:
            api.calls.append(("PATCH", self.path))
            name = self.path.rsplit("/", 1)[1]
            if name not in api.nodes:
                return self._send(404, {"kind": "Status", "code": 404, "reason": "NotFound"})
            api.nodes[name]["spec"].update(self._body().get("spec", {}))
            self._send(200, api.nodes[name])

        def do_POST(self) -> None:
            api.calls.append(("POST", self.path))
            parts = self.path.strip("/").split("/")  # api v1 namespaces NS pods NAME eviction
            ns, name = parts[3], parts[5]
            body = self._body()
            assert body["metadata"]["name"] == name
            if name in api.protected:
                return self._send(
                    429,
                    {
                        "kind": "Status",
                        "code": 429,
                        "reason": "TooManyRequests",
                        "message": "Cannot evict pod as it would violate the pod's disruption budget.",
                    },
                )
            api.pods = [
                p
                for p in api.pods
                if not (p["metadata"]["name"] == name and p["metadata"]["namespace"] == ns)
            ]
            self._send(201, {"kind": "Status", "code": 201, "status": "Success"})

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture()
def fake_api():
    api = FakeApi()
    server = _serve(api)
    cfg = kubernetes.client.Configuration(host=f"http://127.0.0.1:{server.server_address[1]}")
    yield api, kubernetes.client.CoreV1Api(kubernetes.client.ApiClient(cfg))
    server.shutdown()


def _k8s(core, nodes=None) -> KubernetesExecutor:
    return KubernetesExecutor(KubernetesConfig(nodes=nodes or {"gpu-e126": "gpu-e126"}), api=core)


def test_drain_cordons_and_evicts_all_but_daemonsets(fake_api) -> None:
    api, core = fake_api
    ex = _k8s(core)
    plan = ex.plan("drain_node", "gpu-e126", reason="forensic t rp-1", context={})
    out = ex.execute(plan)
    assert out.data["evicted"] == ["train/trainer-0"]
    assert api.nodes["gpu-e126"]["spec"]["unschedulable"] is True
    assert [p["metadata"]["name"] for p in api.pods] == ["dcgm-exporter-x", "trainer-1"]
    assert ex.verify(plan).ok
    ex.undo(plan)
    assert api.nodes["gpu-e126"]["spec"]["unschedulable"] is False


def test_a_disruption_budget_refusal_is_reported_not_forced(fake_api) -> None:
    api, core = fake_api
    api.protected.add("trainer-0")
    ex = _k8s(core)
    plan = ex.plan("drain_node", "gpu-e126", reason="r", context={})
    with pytest.raises(ExecutionError, match="429"):
        ex.execute(plan)
    assert not ex.verify(plan).ok  # cordoned, but a pod is still there: not done
    assert any(p["metadata"]["name"] == "trainer-0" for p in api.pods)


def test_cordon_of_a_missing_node_and_an_unreachable_api(fake_api) -> None:
    api, core = fake_api
    ex = _k8s(core, {"gpu-e126": "gone"})
    with pytest.raises(ExecutionError, match="404"):
        ex.execute(ex.plan("cordon_node", "gpu-e126", reason="r", context={}))
    cfg = kubernetes.client.Configuration(host="http://127.0.0.1:9")
    cfg.retries = 0
    dead = _k8s(kubernetes.client.CoreV1Api(kubernetes.client.ApiClient(cfg)))
    with pytest.raises(ExecutionError, match="cannot reach"):
        dead.execute(dead.plan("cordon_node", "gpu-e126", reason="r", context={}))


class Tickets:
    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.seen: list[tuple[str, dict]] = []
        self.by_key: dict[str, str] = {}


def _ticket_server(t: Tickets) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            key = self.headers["Idempotency-Key"]
            t.seen.append((key, body))
            if t.failures > 0:
                t.failures -= 1
                self.send_response(503)
                self.end_headers()
                return
            ticket = t.by_key.setdefault(key, f"TICKET-{len(t.by_key) + 1}")
            raw = json.dumps({"id": ticket}).encode()
            self.send_response(201)
            self.send_header("content-length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_runbook_retries_with_one_idempotency_key(tmp_path: Path) -> None:
    a = Approved(tmp_path, approve=("rp-1", "rp-2"))
    tickets = Tickets(failures=2)
    server = _ticket_server(tickets)
    try:
        cfg = ExecutorsConfig.model_validate(
            {"runbook": {"url": f"http://127.0.0.1:{server.server_address[1]}/t", "attempts": 4}}
        )
        gate = ExecutionGate(cfg, ledger=SqliteLedger(a.checkpoints), audit_log=a.audit)
        rp2 = a.proposal("rp-2")
        out = gate.execute(a.thread, a.state(), "rp-2")
    finally:
        server.shutdown()
    assert out["state"] == "succeeded" and "TICKET-1" in out["result"]["detail"]
    keys = {k for k, _ in tickets.seen}
    assert len(tickets.seen) == 3 and len(keys) == 1  # two 503s, then one ticket, all under one key
    body = tickets.seen[-1][1]
    assert body["action"] == rp2["action"] and body["content_hash"] == rp2["content_hash"]
    assert body["proposal_id"] == "rp-2" and body["thread"] == a.thread
    # The ticket says who approved it and why, from the verified audit log.
    assert body["approved_by"] == "alice" and body["approval_reason"] == APPROVAL_REASON
    assert isinstance(body["approved_at_unix"], float)


def test_runbook_endpoint_down_fails_cleanly(tmp_path: Path) -> None:
    a = Approved(tmp_path, approve=("rp-2",))
    cfg = ExecutorsConfig.model_validate(
        {"runbook": {"url": "http://127.0.0.1:9/t", "attempts": 2, "timeout_s": 2}}
    )
    gate = ExecutionGate(cfg, ledger=SqliteLedger(a.checkpoints), audit_log=a.audit)
    with pytest.raises(ExecutionError, match="gave up after 2 attempts"):
        gate.execute(a.thread, a.state(), "rp-2")
    assert gate.ledger.get(a.thread, "rp-2")["state"] == "failed"
