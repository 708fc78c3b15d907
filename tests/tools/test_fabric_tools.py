"""Fabric, NIC, job-log and host-load tools on hand-written bundles."""

from __future__ import annotations

from pathlib import Path

from forensic.sandbox import Bundle
from forensic.tools import ToolContext, get_tool


def run(bundle: Path, tool: str, **args):
    return get_tool(tool)(ToolContext(Bundle(bundle)), args)


def by_name(result, name):
    return sorted(s.component for s in result.signals if s.name == name)


def test_pfc_origin_and_victims(make_fabric_bundle) -> None:
    res = run(make_fabric_bundle("pfc_pause_storm"), "nic_counters")
    assert by_name(res, "pfc_origin") == ["node-b.example/mlx5_0"]
    assert "node-a.example/mlx5_0" in by_name(res, "pfc_victim")
    assert by_name(res, "pause_storm_events") == ["node-b.example/mlx5_0"]
    assert by_name(res, "nic_out_of_buffer") == ["node-b.example/mlx5_0"]


def test_quiet_fabric_has_no_nic_signal(make_fabric_bundle) -> None:
    res = run(make_fabric_bundle(None), "nic_counters")
    assert res.status == "ok" and not res.signals


def test_link_errors(make_fabric_bundle) -> None:
    res = run(make_fabric_bundle("link_degradation"), "nic_counters", host="node-b.example")
    assert by_name(res, "link_errors") == ["node-b.example/mlx5_0"]


def test_pfcwd_storm_maps_the_port_to_its_nic(make_fabric_bundle) -> None:
    res = run(make_fabric_bundle("pfc_pause_storm"), "fabric")
    assert by_name(res, "pfcwd_storm") == ["node-b.example/mlx5_0"]


def test_ecmp_polarization(make_fabric_bundle) -> None:
    res = run(make_fabric_bundle("ecmp_hash_polarization"), "fabric")
    assert by_name(res, "switch_uplink_imbalance") == ["leaf-1"]
    assert not run(make_fabric_bundle(None), "fabric").signals


def test_nccl_socket_transport(make_fabric_bundle) -> None:
    res = run(make_fabric_bundle("nccl_misconfiguration"), "job_logs")
    assert {s.name for s in res.signals} == {"nccl_socket_transport", "nccl_ib_disabled"}
    # healthy logs: no finding, only NCCL's word that it runs on the RDMA fabric
    assert by_name(run(make_fabric_bundle(None), "job_logs"), "nccl_fast_path") == ["job"]
    assert {s.name for s in run(make_fabric_bundle(None), "job_logs").signals} == {"nccl_fast_path"}


def test_host_contention(make_fabric_bundle) -> None:
    res = run(make_fabric_bundle("host_contention"), "host_load")
    assert by_name(res, "host_cpu_contention") == ["node-b.example"]
    assert "gzip" in res.signals[0].detail


def test_nic_pcie_downtrain_is_a_degraded_link(make_fabric_bundle) -> None:
    res = run(make_fabric_bundle("pcie_downtrain_nic"), "pcie_link", host="node-b.example")
    assert by_name(res, "pcie_degraded") == ["node-b.example/mlx5_0"]


def _two_runs(first_env: str, second_env: str, second_via: str, second_using: str) -> str:
    """A log with one run, a resubmit (new pids) and a second run, as NCCL prints them."""
    lines = []
    for pid, env, via, using in (
        (1001, first_env, "NET/IB/0/GDRDMA", "[0]mlx5_0:1/IB [1]mlx5_1:1/IB"),
        (2002, second_env, second_via, second_using),
    ):
        lines += [
            f"node-a.example:{pid}:{pid + 1} [0] NCCL INFO {env}",
            f"node-a.example:{pid}:{pid + 1} [0] NCCL INFO NET/IB : Using {using} [RO]; OOB eth0:10.0.0.1<0>",
            f"node-a.example:{pid}:{pid + 1} [0] NCCL INFO Channel 00/0 : 0[0] -> 4[0] [send] via {via}",
        ]
    return "\n".join(lines) + "\n"


def test_gdr_turned_off_at_a_resubmit(make_fabric_bundle) -> None:
    b = make_fabric_bundle(None)
    (b / "job/logs/rank0.log").write_text(
        _two_runs(
            "NCCL_IB_TIMEOUT set by environment to 22.",
            "NCCL_NET_GDR_LEVEL set by environment to LOC",
            "NET/IB/0",
            "[0]mlx5_0:1/IB [1]mlx5_1:1/IB",
        )
    )
    names = {s.name for s in run(b, "job_logs").signals}
    assert {"nccl_gdr_disabled", "nccl_env_changed"} <= names


def test_fewer_rails_after_a_resubmit(make_fabric_bundle) -> None:
    b = make_fabric_bundle(None)
    (b / "job/logs/rank0.log").write_text(
        _two_runs(
            "NCCL_IB_HCA set by environment to mlx5_0,mlx5_1",
            "NCCL_IB_HCA set by environment to mlx5_0",
            "NET/IB/0/GDRDMA",
            "[0]mlx5_0:1/IB",
        )
    )
    res = run(b, "job_logs")
    assert by_name(res, "nccl_rails_reduced") == ["job"]
    assert "nccl_gdr_disabled" not in {s.name for s in res.signals}


def test_same_settings_across_a_resubmit_say_nothing(make_fabric_bundle) -> None:
    b = make_fabric_bundle(None)
    (b / "job/logs/rank0.log").write_text(
        _two_runs(
            "NCCL_IB_TIMEOUT set by environment to 22.",
            "NCCL_IB_TIMEOUT set by environment to 22.",
            "NET/IB/0/GDRDMA",
            "[0]mlx5_0:1/IB [1]mlx5_1:1/IB",
        )
    )
    assert {s.name for s in run(b, "job_logs").signals} == {"nccl_fast_path"}


def test_the_rank_that_stopped_first(make_fabric_bundle) -> None:
    b = make_fabric_bundle(None)
    lines = []
    for r in range(8):
        done = 460625 if r == 6 else 460630
        lines.append(
            f"[rank{r}]:[E901 05:20:03.124073319 ProcessGroupNCCL.cpp:2271] [PG ID 0 PG GUID 0(default_pg) Rank {r}]  "
            f"failure detected by watchdog at work sequence id: 460631 PG status: last enqueued work: 460631, "
            f"last completed work: {done}"
        )
    (b / "job/logs/torch.log").write_text("\n".join(lines) + "\n")
    res = run(b, "job_logs")
    assert by_name(res, "lagging_rank") == ["node-b.example/gpu2"]


def test_without_topology_nics_are_named_by_their_rdma_device(make_fabric_bundle) -> None:
    b = make_fabric_bundle("link_degradation")
    (b / "topology.json").unlink()
    for host in ("node-a.example", "node-b.example"):
        (b / f"nodes/{host}/sys/class/net/ibp1s0/device/infiniband/mlx5_0").mkdir(parents=True)
        (b / f"nodes/{host}/sys/class/infiniband/mlx5_0/ports/1").mkdir(parents=True, exist_ok=True)
    res = run(b, "nic_counters", host="node-b.example")
    assert by_name(res, "link_errors") == ["node-b.example/mlx5_0"]
