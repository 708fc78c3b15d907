"""NCCL configuration forcing a slow path, in every wording."""

from __future__ import annotations

import pytest
from forensic.tools._nccl_env import LauncherEnv, hca_count, slow_path_findings

IB = [f"mlx5_{i}" for i in range(8)]
NETDEVS = {f"ibp{i}s0" for i in range(8)}


def _found(*lines: str, ibdevs=IB) -> dict[str, str]:
    env = LauncherEnv()
    env.add_lines(lines)
    return {name: detail for name, detail, _ in slow_path_findings(env, ibdevs=ibdevs, netdevs=NETDEVS)}


@pytest.mark.parametrize(
    "line,signal",
    [
        ("export NCCL_IB_DISABLE=1", "nccl_ib_disabled"),
        ("gpu-a017:2211:2211 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.", "nccl_ib_disabled"),
        ("[launcher] env: {'NCCL_DEBUG': 'INFO', 'NCCL_IB_DISABLE': '1'}", "nccl_ib_disabled"),
        ("NCCL_NET=Socket torchrun --nproc_per_node 8 train.py", "nccl_socket_transport"),
        ("srun: environment NCCL_P2P_DISABLE=1", "nccl_p2p_disabled"),
        ("NCCL_SHM_DISABLE: 1", "nccl_p2p_disabled"),
        ("NCCL_P2P_LEVEL=LOC", "nccl_p2p_disabled"),
        ("NCCL_NET_GDR_LEVEL=0", "nccl_gdr_disabled"),
        ("gpu-a017:2211:2211 [0] NCCL INFO GPU Direct RDMA Disabled for HCA 0 'mlx5_0'", "nccl_gdr_disabled"),
        ("export NCCL_IB_HCA=mlx5_0,mlx5_1", "nccl_rails_reduced"),
        ("NCCL_IB_HCA='=mlx5_0:1'", "nccl_rails_reduced"),
        ("NCCL_IB_HCA=^mlx5_6,mlx5_7", "nccl_rails_reduced"),
    ],
)
def test_every_wording_of_a_slow_path(line: str, signal: str) -> None:
    assert signal in _found(line), line


@pytest.mark.parametrize(
    "line",
    [
        "export NCCL_IB_DISABLE=0",
        "NCCL_NET=IB",
        "NCCL_IB_HCA=mlx5",
        "NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7",
        "NCCL_SOCKET_IFNAME=eno1",
        "NCCL_NET_GDR_LEVEL=PHB",
        "NCCL_DEBUG=INFO",
    ],
)
def test_settings_that_keep_the_fast_path_are_not_findings(line: str) -> None:
    assert _found(line) == {}, line


def test_socket_ifname_on_a_management_port_with_sockets_forced() -> None:
    got = _found("NCCL_IB_DISABLE=1", "NCCL_SOCKET_IFNAME=eno1")
    assert "nccl_ib_disabled" in got and "management" in got.get("nccl_socket_transport", "")


def test_the_last_value_wins_after_a_relaunch() -> None:
    assert _found("export NCCL_IB_DISABLE=1", "relaunching with the fix", "export NCCL_IB_DISABLE=0") == {}


def test_without_rdma_nics_sockets_are_the_only_path() -> None:
    assert _found("NCCL_IB_DISABLE=1", "NCCL_NET=Socket", ibdevs=[]) == {}


def test_hca_count_forms() -> None:
    assert hca_count("mlx5", IB) == 8 and hca_count("mlx5_1", IB) == 1
    assert (
        hca_count("=mlx5_1:1,mlx5_2:1", IB) == 2
        and hca_count("^mlx5_0", IB) == 7
        and hca_count("", IB) is None
    )
