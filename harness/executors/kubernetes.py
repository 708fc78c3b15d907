"""Kubernetes: cordon a node, or drain it with the eviction API, with the official client.

``cordon_node`` sets ``spec.unschedulable``; ``drain_node`` cordons, then evicts every pod on the
node that a drain evicts (not DaemonSet pods, not mirror pods), through the Eviction API so that
PodDisruptionBudgets are honoured (a 429 from the API is reported, not forced). Verify reads the
node back; undo uncordons. Evicted pods are not brought back by undo: their controllers reschedule
them.
"""

from __future__ import annotations

from typing import Any, ClassVar

from .base import ExecutionError, Outcome, Plan
from .config import KubernetesConfig


class KubernetesExecutor:
    name: ClassVar[str] = "kubernetes"
    actions: ClassVar[frozenset[str]] = frozenset({"cordon_node", "drain_node"})

    def __init__(self, config: KubernetesConfig, api: Any = None) -> None:
        self.config = config
        self._api = api  # a CoreV1Api; built lazily so that the client is only needed when used

    @property
    def api(self) -> Any:
        if self._api is None:
            from forensic.sandbox.placement import PlacementError, kubernetes_core_api

            try:
                self._api = kubernetes_core_api(self.config.kubeconfig, self.config.context)
            except ModuleNotFoundError:
                raise ExecutionError(
                    "the kubernetes executor needs the client: pip install kubernetes"
                ) from None
            except PlacementError as exc:
                raise ExecutionError(str(exc)) from None
        return self._api

    def _call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        try:
            return fn(*args, **kwargs)
        except ApiException as exc:
            raise ExecutionError(f"{what}: the API server answered {exc.status} {exc.reason}") from None
        except HTTPError as exc:
            raise ExecutionError(f"{what}: cannot reach the API server ({type(exc).__name__})") from None

    def plan(self, action: str, target: str, *, reason: str, context: dict[str, Any]) -> Plan:
        if action not in self.actions:
            raise ExecutionError(f"the kubernetes executor does not carry out {action!r}")
        node = self.config.node_for(target)
        steps = [f"cordon node {node} (spec.unschedulable=true)"]
        if action == "drain_node":
            steps.append(
                f"evict every pod on {node} except DaemonSet and mirror pods (Eviction API, "
                f"grace {self.config.grace_period_s} s, PodDisruptionBudgets honoured)"
            )
        return Plan(
            executor=self.name,
            action=action,
            target=target,
            resolved=node,
            steps=steps,
            undo=[f"uncordon node {node}"],
            details={"node": node, "reason": reason},
        )

    def _evictable(self, node: str) -> list[Any]:
        pods = self._call(
            f"list pods on {node}",
            self.api.list_pod_for_all_namespaces,
            field_selector=f"spec.nodeName={node}",
        ).items
        out = []
        for pod in pods:
            owners = pod.metadata.owner_references or []
            if any(o.kind == "DaemonSet" for o in owners):
                continue
            if "kubernetes.io/config.mirror" in (pod.metadata.annotations or {}):
                continue
            out.append(pod)
        return out

    def execute(self, plan: Plan) -> Outcome:
        from kubernetes import client

        node = plan.details["node"]
        self._call(f"cordon {node}", self.api.patch_node, node, {"spec": {"unschedulable": True}})
        if plan.action == "cordon_node":
            return Outcome(ok=True, detail=f"cordoned {node}")
        evicted = []
        for pod in self._evictable(node):
            body = client.V1Eviction(
                metadata=client.V1ObjectMeta(name=pod.metadata.name, namespace=pod.metadata.namespace),
                delete_options=client.V1DeleteOptions(grace_period_seconds=self.config.grace_period_s),
            )
            self._call(
                f"evict {pod.metadata.namespace}/{pod.metadata.name}",
                self.api.create_namespaced_pod_eviction,
                pod.metadata.name,
                pod.metadata.namespace,
                body,
            )
            evicted.append(f"{pod.metadata.namespace}/{pod.metadata.name}")
        return Outcome(
            ok=True, detail=f"cordoned {node} and evicted {len(evicted)} pods", data={"evicted": evicted}
        )

    def verify(self, plan: Plan) -> Outcome:
        node = plan.details["node"]
        got = self._call(f"read node {node}", self.api.read_node, node)
        cordoned = bool(got.spec and got.spec.unschedulable)
        if plan.action == "cordon_node":
            return Outcome(
                ok=cordoned, detail=f"node {node} " + ("is cordoned" if cordoned else "is NOT cordoned")
            )
        left = [f"{p.metadata.namespace}/{p.metadata.name}" for p in self._evictable(node)]
        return Outcome(
            ok=cordoned and not left,
            data={"remaining": left},
            detail=f"node {node} {'cordoned' if cordoned else 'NOT cordoned'}, {len(left)} evictable pods left",
        )

    def undo(self, plan: Plan) -> Outcome:
        node = plan.details["node"]
        self._call(f"uncordon {node}", self.api.patch_node, node, {"spec": {"unschedulable": False}})
        return Outcome(ok=True, detail=f"uncordoned {node}")
