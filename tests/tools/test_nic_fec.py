"""FEC statistics (ethtool -I --show-fec) read as in-window increases."""

from __future__ import annotations

from forensic.harness.failure_graph import beliefs, default_graph, observe
from forensic.tools.parsers.fec import parse_show_fec

from tests.tools.test_fabric_tools import by_name, run


def _fec(corrected: int, uncorrectable: int) -> str:
    return (
        "FEC parameters for ibp1s0:\nSupported/Configured FEC encodings: Auto RS\nActive FEC encoding: RS\n"
        f"Statistics:\n  corrected_blocks: {corrected}\n    Lane 0: {corrected // 2}\n  uncorrectable_blocks: {uncorrectable}\n"
    )


def test_parse_show_fec() -> None:
    s = parse_show_fec(_fec(1234, 7))
    assert (s.active, s.corrected_blocks, s.uncorrectable_blocks) == ("RS", 1234, 7)
    one_line = parse_show_fec(
        "Active FEC encoding: RS\nStatistics:\n corrected_blocks: 99 lane_0: 40 lane_1: 59\n uncorrectable_blocks: 0\n"
    )
    assert (one_line.corrected_blocks, one_line.uncorrectable_blocks) == (99, 0)


def test_uncorrectable_blocks_rising_in_the_window(make_fabric_bundle) -> None:
    root = make_fabric_bundle(None)
    for host in sorted(p.name for p in (root / "nodes").iterdir()):
        bad = host == "node-b.example"
        (root / "nodes" / host / "before" / "cmd").mkdir(parents=True, exist_ok=True)
        # every link carries old uncorrectable blocks: only the rise in the window counts
        (root / "nodes" / host / "before" / "cmd" / "ethtool-I-show-fec-ibp1s0.txt").write_text(
            _fec(10_000, 500)
        )
        (root / "nodes" / host / "cmd" / "ethtool-I-show-fec-ibp1s0.txt").write_text(
            _fec(90_000 if bad else 10_050, 4_800 if bad else 500)
        )
    res = run(root, "nic_fec")
    assert by_name(res, "fec_uncorrectable") == ["node-b.example/mlx5_0"]
    rec = {
        "id": "ev-1",
        "tool": "nic_fec",
        "status": "ok",
        "covered": res.covered,
        "signals": [s.model_dump() for s in res.signals],
    }
    h = next(h for h in beliefs(default_graph(), observe([rec])) if h.root_cause == "link_degradation")
    assert h.component == "node-b.example/mlx5_0" and h.required_met


def test_no_fec_files_is_no_data(make_fabric_bundle) -> None:
    assert run(make_fabric_bundle(None), "nic_fec").status == "no_data"
