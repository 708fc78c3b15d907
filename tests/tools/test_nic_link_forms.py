"""NIC link degradation from its other forms: carrier changes over the window,
a physical state that is not LinkUp, and ibstat's rate where sysfs has none."""

from __future__ import annotations

from pathlib import Path

from forensic.sandbox import Bundle
from forensic.tools import ToolContext, get_tool

B = "node-b.example"


def _nic(root: Path, **args):
    return get_tool("nic_counters")(ToolContext(Bundle(root)), args)


def _names(res, comp: str) -> dict[str, dict]:
    return {s.name: s.values for s in res.signals if s.component == comp}


def test_carrier_changes_over_the_window_are_link_flaps(make_fabric_bundle) -> None:
    root = make_fabric_bundle(None)
    for host, (before, now) in {B: (2, 10), "node-a.example": (4, 4)}.items():
        for snap, v in (("before/", before), ("", now)):
            p = root / f"nodes/{host}/{snap}sys/class/net/ibp1s0/carrier_changes"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(f"{v}\n")
    res = _nic(root)
    got = _names(res, f"{B}/mlx5_0")
    assert "link_errors" in got and got["link_errors"]["carrier_changes"] == 8
    assert "link_errors" not in _names(res, "node-a.example/mlx5_0")  # 4 since boot, none in the window


def _ibstat(rate: int, phys: str = "LinkUp") -> str:
    return (
        "CA 'mlx5_0'\n\tCA type: MT4129\n\tNumber of ports: 1\n\tFirmware version: 28.39.1002\n"
        "\tPort 1:\n\t\tState: Active\n\t\tPhysical state: "
        + phys
        + "\n\t\tRate: "
        + str(rate)
        + "\n\t\tBase lid: 12\n\t\tLMC: 0\n\t\tSM lid: 1\n\t\tLink layer: InfiniBand\n"
    )


def test_ibstat_rate_below_peers_without_sysfs(make_fabric_bundle) -> None:
    root = make_fabric_bundle(None)
    hosts = [B, "node-a.example", "node-c.example", "node-d.example"]
    for h in hosts:
        for rel in (
            f"nodes/{h}/sys/class/infiniband/mlx5_0/ports/1/rate",
            f"nodes/{h}/sys/class/infiniband/mlx5_0/ports/1/state",
        ):
            if (root / rel).exists():
                (root / rel).unlink()
        (root / f"nodes/{h}/cmd").mkdir(parents=True, exist_ok=True)
        (root / f"nodes/{h}/cmd/ibstat.txt").write_text(_ibstat(200 if h == B else 400))
    got = _names(_nic(root), f"{B}/mlx5_0")
    assert got["link_below_rate"]["rate_gbps"] == 200.0 and got["link_below_rate"]["peer_rate_gbps"] == 400.0


def test_a_port_in_link_error_recovery_is_not_a_healthy_link(make_fabric_bundle) -> None:
    root = make_fabric_bundle(None)
    base = root / f"nodes/{B}/sys/class/infiniband/mlx5_0/ports/1"
    base.mkdir(parents=True, exist_ok=True)
    (base / "state").write_text("4: ACTIVE\n")
    (base / "phys_state").write_text("6: LinkErrorRecovery\n")
    got = _names(_nic(root), f"{B}/mlx5_0")
    assert got["link_below_rate"]["phys_state"] == "LinkErrorRecovery"


def test_quiet_fleet_stays_quiet_with_the_new_forms(make_fabric_bundle) -> None:
    root = make_fabric_bundle(None)
    for h in (B, "node-a.example"):
        base = root / f"nodes/{h}/sys/class/infiniband/mlx5_0/ports/1"
        base.mkdir(parents=True, exist_ok=True)
        (base / "state").write_text("4: ACTIVE\n")
        (base / "phys_state").write_text("5: LinkUp\n")
        for snap in ("before/", ""):
            p = root / f"nodes/{h}/{snap}sys/class/net/ibp1s0/carrier_changes"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text("2\n")
    assert _nic(root).signals == []
