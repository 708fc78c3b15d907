"""``executors.toml``: which executor carries out which action, and how names map.

```toml
[approvals]
max_age_s = 3600                  # an approval older than this no longer executes

[slurm]                           # drain_node, resume_node, requeue_job
slurm_conf = "/etc/slurm/slurm.conf"   # optional; else scontrol's own default
nodes = { "gpu-a017" = "a017" }   # bundle host -> Slurm node; unmapped hosts are refused
# node_pattern = "{host}"         # or map every host by a pattern (validated)

[kubernetes]                      # cordon_node, drain_node
kubeconfig = "~/.kube/config"     # optional; else in-cluster configuration
nodes = { "gpu-a017" = "gpu-a017.k8s" }

[runbook]                         # everything else that a person carries out
url = "https://tickets.example.com/api/forensic"
token_file = "/etc/forensic/ticket.token"

[routes]                          # optional: action -> executor, where two could
drain_node = "slurm"
```
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from forensic.configfile import load_toml
from forensic.names import is_host_name

from .base import ExecutionError


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NodeMap(_Strict):
    """Bundle host -> scheduler node name."""

    nodes: dict[str, str] = Field(default_factory=dict, description="Explicit host -> node names.")
    node_pattern: str | None = Field(
        None, description="'{host}' or e.g. '{host}.cluster' for unmapped hosts."
    )

    @field_validator("nodes")
    @classmethod
    def _valid_names(cls, v: dict[str, str]) -> dict[str, str]:
        for host, node in v.items():
            if not is_host_name(node):
                raise ValueError(
                    f"node name {node!r} (for {host!r}) has characters a scheduler does not accept"
                )
        return v

    def node_for(self, host: str) -> str:
        node = self.nodes.get(host)
        if node is None and self.node_pattern is not None:
            node = self.node_pattern.format(host=host)
        if node is None:
            raise ExecutionError(f"host {host!r} does not map to a node: add it to the executors config")
        if not is_host_name(node):
            raise ExecutionError(f"node name {node!r} (for host {host!r}) is not a valid node name")
        return node


class SlurmConfig(NodeMap):
    scontrol: str = Field("scontrol", description="scontrol executable.")
    sinfo: str = Field("sinfo", description="sinfo executable.")
    slurm_conf: Path | None = Field(None, description="SLURM_CONF for the commands.")
    timeout_s: float = Field(30.0, gt=0, le=600)


class KubernetesConfig(NodeMap):
    kubeconfig: Path | None = None
    context: str | None = None
    grace_period_s: int = Field(30, ge=0, le=3600)


class RunbookConfig(_Strict):
    url: str = Field(pattern=r"^https?://")
    token_file: Path | None = None
    timeout_s: float = Field(15.0, gt=0, le=300)
    attempts: int = Field(4, ge=1, le=10)


class ApprovalRules(_Strict):
    max_age_s: float = Field(3600.0, gt=0, description="An approval older than this does not execute.")


class ExecutorsConfig(_Strict):
    approvals: ApprovalRules = Field(default_factory=ApprovalRules)
    slurm: SlurmConfig | None = None
    kubernetes: KubernetesConfig | None = None
    runbook: RunbookConfig | None = None
    routes: dict[str, str] = Field(default_factory=dict)


def load_config(path: Path | None) -> ExecutorsConfig:
    """The executors config at ``path`` (none: nothing executes but the checks still run)."""
    if path is None:
        return ExecutorsConfig()
    return load_toml(path, ExecutorsConfig, error=ExecutionError, what="executors file")
