"""NCCL settings judged against the hardware, in every wording.

A setting is a fault only where the hardware offers a faster path than the one it forces: P2P off
on NVLink-connected GPUs, GDR off beside RDMA NICs, NCCL_IB_HCA narrower than the NICs a host has
(counted from topology, sysfs or ibstat). The verdict then leaves ``healthy`` even with no onset,
but says ``confirmed`` only when the slowdown came with the launch that brought the setting.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from forensic.harness.failure_graph import beliefs, default_graph, observe
from forensic.sandbox import Bundle
from forensic.tools import ToolContext, get_tool
from forensic.tools._nccl_env import LauncherEnv, slow_path_findings

G = default_graph()
IB = [f"mlx5_{i}" for i in range(8)]
NETDEVS = {f"ibp{i}s0" for i in range(8)}
P = "node-a.example:1001:1101 [0] NCCL INFO "


def _found(*lines: str, nvlink=None, gpus=8, ibdevs=IB) -> set[str]:
    env = LauncherEnv()
    env.add_lines(lines)
    return {
        n
        for n, _, _ in slow_path_findings(
            env, ibdevs=ibdevs, netdevs=NETDEVS, nvlink=nvlink, gpus_per_host=gpus
        )
    }


@pytest.mark.parametrize(
    "lines,signal",
    [
        (["setenv NCCL_P2P_DISABLE 1"], "nccl_p2p_disabled"),
        (["ENV NCCL_NET_GDR_LEVEL LOC"], "nccl_gdr_disabled"),
        (['os.environ["NCCL_P2P_DISABLE"] = "1"'], "nccl_p2p_disabled"),
        (
            [
                'env: [{"name": "NCCL_IB_HCA", "value": "mlx5_0,mlx5_1"}, {"name": "NCCL_DEBUG", "value": "INFO"}]'
            ],
            "nccl_rails_reduced",
        ),
        (["        - name: NCCL_NET_GDR_LEVEL", '          value: "0"'], "nccl_gdr_disabled"),
        (["  - name: NCCL_P2P_DISABLE", "    value: '1'"], "nccl_p2p_disabled"),
        ([P + "NCCL_IB_GDR_LEVEL set by environment to LOC"], "nccl_gdr_disabled"),  # the old name
        ([P + "NCCL_IB_CUDA_SUPPORT set by environment to 0"], "nccl_gdr_disabled"),
        ([P + "NCCL_P2P_DISABLE set by environment to 1."], "nccl_p2p_disabled"),
        (["srun --export=ALL,NCCL_P2P_DISABLE=1 --ntasks-per-node=8 python train.py"], "nccl_p2p_disabled"),
        (["+ NCCL_NET_GDR_LEVEL=LOC torchrun --nnodes=16 --nproc_per_node=8 train.py"], "nccl_gdr_disabled"),
        (['declare -x NCCL_IB_HCA="=mlx5_0:1,mlx5_3:1"'], "nccl_rails_reduced"),
        (
            ["[2026-04-17 01:41:02] " + P + "NCCL_NET_GDR_LEVEL set by environment to LOC"],
            "nccl_gdr_disabled",
        ),
        ([P + "GPU Direct RDMA Disabled for GPU 0 / HCA 0 (distance 4 > 0)"], "nccl_gdr_disabled"),
        ([P + "NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'"], "nccl_gdr_disabled"),
        ([P + "Connected all rings, use ring PXN 0 GDR 0"], "nccl_gdr_disabled"),
    ],
)
def test_more_wordings_of_a_forcing_setting(lines: list[str], signal: str) -> None:
    assert signal in _found(*lines, nvlink=True), lines


def test_a_yaml_value_must_follow_its_name() -> None:
    assert _found("  - name: NCCL_P2P_DISABLE", "unrelated: line", "    value: '1'", nvlink=True) == set()


@pytest.mark.parametrize(
    "lines,nvlink,gpus",
    [
        (["NCCL_P2P_DISABLE=1"], True, 1),  # one GPU per host: no peer to copy to
        (["NCCL_SHM_DISABLE=1"], True, 8),  # SHM is the fallback; NVLink P2P carries the traffic
        (["NCCL_P2P_LEVEL=NVL"], True, 8),  # NVLink allowed: the fast path stays
        (["NCCL_P2P_LEVEL=PHB"], True, 8),
        (["NCCL_NET_GDR_LEVEL=PHB"], True, 8),
        (["NCCL_NET_GDR_LEVEL=SYS"], None, 8),
        (
            [
                P
                + "GPU Direct RDMA Disabled for GPU 0 / HCA 7 (distance 5 > 4)",  # a far NIC: the near one is used
                P + "GPU Direct RDMA Enabled for GPU 0 / HCA 0 (distance 1 <= 4), read 1",
                P + "Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA",
            ],
            True,
            8,
        ),
        (
            [
                P + "Channel 00/0 : 0[0] -> 1[1] via P2P/IPC",
                P + "Channel 01/0 : 1[1] -> 2[2] via SHM/direct/direct",
            ],
            True,
            8,
        ),
        (["NCCL_DEBUG=INFO", "NCCL_SOCKET_IFNAME=eth0", "NCCL_IB_HCA=mlx5", "NCCL_IB_DISABLE=0"], True, 8),
        (
            [
                P + "Connected all rings, use ring PXN 0 GDR 1",
                P + "Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0",
            ],
            True,
            8,
        ),
        # peer access failed on NVLink: NCCL falls back to SHM, but that is the hardware, not a setting
        (
            [
                "node-a.example:1001:1101 [1] init.cc:412 NCCL WARN P2P is disabled between NVLINK connected GPUs 1 and 0. This should "
                "not be the case given their connectivity, and is probably due to a hardware issue.",
                P + "Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct",
            ],
            True,
            8,
        ),
    ],
)
def test_settings_harmless_on_this_hardware(lines, nvlink, gpus) -> None:
    assert _found(*lines, nvlink=nvlink, gpus=gpus) == set(), lines


@pytest.mark.parametrize(
    "lines,nvlink",
    [
        (["NCCL_SHM_DISABLE=1"], False),  # no NVLink: SHM was the intra-node path
        (["NCCL_P2P_LEVEL=NVL"], False),  # PCIe-only GPUs: NVL forbids every peer copy
        (
            [
                P + "Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct",
                P + "Channel 01/0 : 1[1] -> 2[2] via SHM/direct/direct",
            ],
            True,
        ),
        (
            [
                P
                + "16 coll channels, 0 collnet channels, 16 nvls channels, 16 p2p channels, 1 p2p channels per peer",
                P + "Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct",
            ],
            None,
        ),
    ],
)
def test_settings_that_force_a_slow_path_on_this_hardware(lines, nvlink) -> None:
    env = LauncherEnv()
    env.add_lines(lines)
    nvl = True if env.nvls_channels else nvlink  # what host_facts makes of NCCL's NVLS channels
    assert "nccl_p2p_disabled" in {
        n for n, _, _ in slow_path_findings(env, ibdevs=IB, netdevs=NETDEVS, nvlink=nvl, gpus_per_host=8)
    }


# --- job_logs on a bundle: NICs from whatever the hosts recorded ---------------------------


def _bundle(tmp_path: Path, log: list[str], *, nics: str = "topology", gpu_name: str | None = None) -> Path:
    from tests.conftest import HOSTS, build_bundle

    root = build_bundle(tmp_path / "b", None, spare_idle_low_gen=False)
    topo = json.loads((root / "topology.json").read_text())
    for h in topo["hosts"]:
        h["nics"] = (
            [{"ibdev": d, "netdev": f"ibp{i}s0", "link_layer": "InfiniBand"} for i, d in enumerate(IB)]
            if nics == "topology"
            else []
        )
    (root / "topology.json").write_text(json.dumps(topo))
    for host in HOSTS:
        base = root / "nodes" / host
        if nics == "sysfs":
            for d in IB:
                (base / f"sys/class/infiniband/{d}/ports/1").mkdir(parents=True, exist_ok=True)
                (base / f"sys/class/infiniband/{d}/ports/1/state").write_text("4: ACTIVE\n")
        if nics == "ibstat":
            (base / "cmd").mkdir(parents=True, exist_ok=True)
            (base / "cmd/ibstat.txt").write_text(
                "".join(
                    f"CA '{d}'\n\tCA type: MT4129\n\tNumber of ports: 1\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n"
                    f"\t\tRate: 400\n\t\tLink layer: InfiniBand\n"
                    for d in IB
                )
            )
        if gpu_name:
            nvml = json.loads((base / "nvml.json").read_text())
            for d in nvml["devices"]:
                d["name"] = gpu_name
            (base / "nvml.json").write_text(json.dumps(nvml))
    (root / "job/logs").mkdir(parents=True, exist_ok=True)
    (root / "job/logs/rank0.log").write_text("\n".join(log) + "\n")
    return root


def _signals(root: Path) -> set[str]:
    res = get_tool("job_logs")(ToolContext(Bundle(root)), {})
    assert res.status == "ok"
    return {s.name for s in res.signals}


TWO_RAILS = [
    P + "NCCL_IB_HCA set by environment to mlx5_0,mlx5_1",
    P + "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth0:10.0.0.1<0>",
]
ALL_RAILS = [
    P + "NET/IB : Using " + " ".join(f"[{i}]{d}:1/IB" for i, d in enumerate(IB)) + " ; OOB eth0:10.0.0.1<0>",
    P + "Channel 00/0 : 0[0] -> 4[0] [send] via NET/IB/0/GDRDMA",
    P + "NCCL_SOCKET_IFNAME set by environment to eth0",
]


@pytest.mark.parametrize("nics", ["topology", "sysfs", "ibstat"])
@pytest.mark.parametrize(
    "log", [TWO_RAILS, TWO_RAILS[:1], TWO_RAILS[1:]], ids=["both", "env-echo", "using-line"]
)
def test_fewer_rails_than_the_nics_a_host_has(tmp_path, nics: str, log: list[str]) -> None:
    """Before: only topology.json's NICs counted, so a bundle whose NICs show only in sysfs or
    ibstat read a two-rail job as healthy."""
    assert "nccl_rails_reduced" in _signals(_bundle(tmp_path, log, nics=nics))


@pytest.mark.parametrize("nics", ["topology", "sysfs"])
def test_every_rail_in_use_is_the_fast_path(tmp_path, nics: str) -> None:
    got = _signals(_bundle(tmp_path, ALL_RAILS, nics=nics))
    assert "nccl_fast_path" in got and not got & {
        "nccl_rails_reduced",
        "nccl_socket_transport",
        "nccl_gdr_disabled",
    }


def test_shm_disable_depends_on_nvlink(tmp_path) -> None:
    log = [P + "NCCL_SHM_DISABLE set by environment to 1", *ALL_RAILS]
    assert "nccl_p2p_disabled" not in _signals(_bundle(tmp_path / "sxm", log))  # H100 80GB HBM3: NVLink
    assert "nccl_p2p_disabled" in _signals(_bundle(tmp_path / "pcie", log, gpu_name="NVIDIA L40S"))


# --- weighing: a fault by itself, confirmed only with its tie ----------------------------


def _rec(i: int, tool: str, names: list[str], status: str = "ok") -> dict:
    return {
        "id": f"ev-{i}",
        "tool": tool,
        "status": status,
        "covered": ["job"],
        "summary": "s",
        "args": {},
        "signals": [{"name": n, "component": "job", "kind": "job", "detail": n, "values": {}} for n in names],
    }


@pytest.mark.parametrize(
    "config", ["nccl_p2p_disabled", "nccl_gdr_disabled", "nccl_rails_reduced", "nccl_socket_transport"]
)
def test_a_forcing_setting_with_clean_steps_is_not_healthy_nor_confirmed(config: str) -> None:
    """Before: healthy at 0.92 (the steps showed no onset, and the job was slow from its launch)."""
    top = beliefs(G, observe([_rec(1, "job_steps", ["steps_clean"]), _rec(2, "job_logs", [config])]))[0]
    assert (top.root_cause, top.confirmed) == ("nccl_misconfiguration", False)


@pytest.mark.parametrize("config", ["nccl_p2p_disabled", "nccl_gdr_disabled", "nccl_rails_reduced"])
def test_a_forcing_setting_slow_since_launch_is_confirmed(config: str) -> None:
    top = beliefs(
        G,
        observe(
            [
                _rec(1, "job_steps", ["job_slowdown", "slowdown_unattributed", "slowdown_since_launch"]),
                _rec(2, "job_logs", [config]),
            ]
        ),
    )[0]
    assert (top.root_cause, top.confirmed) == ("nccl_misconfiguration", True)


def test_the_fast_path_in_the_logs_keeps_nccl_down() -> None:
    hyps = beliefs(
        G,
        observe(
            [
                _rec(1, "job_steps", ["job_slowdown", "slowdown_in_comm", "slowdown_since_launch"]),
                _rec(2, "job_logs", ["nccl_fast_path"]),
            ]
        ),
    )
    nccl = next(h for h in hyps if h.root_cause == "nccl_misconfiguration")
    assert nccl.probability < 0.2


# --- the real path: an investigation of a bundle whose only clue is NCCL's env echo ---------


@pytest.mark.parametrize(
    "line,expect",
    [
        (P + "NCCL_P2P_DISABLE set by environment to 1", "nccl_misconfiguration"),
        (P + "NCCL_NET_GDR_LEVEL set by environment to LOC", "nccl_misconfiguration"),
        (P + "NCCL_IB_GDR_LEVEL set by environment to 0", "nccl_misconfiguration"),
        (P + "NCCL_DEBUG set by environment to INFO", "healthy"),
        (P + "NCCL_SOCKET_IFNAME set by environment to eth0", "healthy"),
    ],
)
def test_an_investigation_reads_the_env_echo(tmp_path, line: str, expect: str) -> None:
    """Before: every one of these was ``healthy`` (0.92): the steps show no onset."""
    from forensic.harness.graph import Investigator

    from tests.conftest import build_fabric_bundle

    root = build_fabric_bundle(tmp_path / "b", None)
    (root / "job/logs/rank0.log").write_text(
        f"{line}\n{P}NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.0.1<0>\n"
    )
    report = Investigator(Bundle(root)).run(thread_id="t")
    assert report["verdict"]["root_cause"] == expect
    if expect != "healthy":
        assert report["status"] == "probable"  # a fault by itself, but nothing ties it to a slowdown


@pytest.mark.parametrize("nics", ["topology", "sysfs"])
def test_an_investigation_of_two_rails_on_eight_nics_is_not_healthy(tmp_path, nics: str) -> None:
    from forensic.harness.graph import Investigator

    report = Investigator(Bundle(_bundle(tmp_path, TWO_RAILS, nics=nics))).run(thread_id="t")
    assert (report["verdict"]["root_cause"], report["status"]) == ("nccl_misconfiguration", "probable")
