"""The source protocols: the recorded bundle and an in-memory copy of it give identical reports."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from forensic.harness.graph import Investigator
from forensic.sandbox import (
    Bundle,
    BundleSource,
    EvidenceHost,
    EvidenceSource,
    MetricSource,
    NotAllowedError,
    NotFoundError,
    PathEscapeError,
)
from forensic.sandbox.memory import MemorySource

EXAMPLES = Path(__file__).resolve().parents[2] / "evals" / "examples"
CASES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "bundle").is_dir())


def _comparable(report: dict) -> dict:
    """The report minus what differs between two runs of the same evidence: timings, ids, locator."""
    out = dict(report)
    out.pop("budget", None)
    out.pop("thread", None)
    if out.get("evidence_source"):
        out["evidence_source"] = {k: v for k, v in out["evidence_source"].items() if k != "where"}
    for rec in out.get("evidence", []):
        rec.pop("elapsed_s", None)
        rec.pop("wall_s", None)
    return out


class _NoOpenUnder:
    """Audit hook: records every file opened below ``root`` while armed."""

    hooked: list[_NoOpenUnder] = []

    def __init__(self, root: Path) -> None:
        self.root = str(root.resolve())
        self.opened: list[str] = []
        self.armed = False
        if not _NoOpenUnder.hooked:
            sys.addaudithook(_NoOpenUnder._dispatch)
        _NoOpenUnder.hooked.append(self)

    @staticmethod
    def _dispatch(event: str, args: tuple) -> None:
        if event not in ("open", "os.listdir", "os.scandir"):
            return
        for watcher in _NoOpenUnder.hooked:
            if watcher.armed and args and isinstance(args[0], (str, bytes, Path)):
                path = str(args[0] if not isinstance(args[0], bytes) else args[0].decode(errors="replace"))
                if path.startswith(watcher.root):
                    watcher.opened.append(path)

    def close(self) -> None:
        self.armed = False
        _NoOpenUnder.hooked.remove(self)


@pytest.mark.parametrize("case", CASES)
def test_in_memory_source_gives_the_same_report_and_reads_no_file(case: str) -> None:
    bundle = Bundle(EXAMPLES / case / "bundle")
    replay = Investigator(BundleSource(bundle)).run(thread_id="t")
    memory_source = MemorySource.from_bundle(Bundle(EXAMPLES / case / "bundle"))
    watcher = _NoOpenUnder(EXAMPLES / case)
    try:
        inv = Investigator(memory_source)
        watcher.armed = True
        memory = inv.run(thread_id="t")
    finally:
        watcher.close()
    assert watcher.opened == [], f"the in-memory source opened bundle files: {watcher.opened[:3]}"
    assert memory["verdict"] == replay["verdict"]
    assert _comparable(memory) == _comparable(replay)
    assert len(memory["evidence"]) >= 2  # a real investigation ran, not an empty one


def test_every_implementation_satisfies_the_protocols() -> None:
    bundle = Bundle(EXAMPLES / "pcie-x8-mfu-drop" / "bundle")
    for source in (BundleSource(bundle), MemorySource.from_bundle(bundle)):
        assert isinstance(source, EvidenceSource)
        assert isinstance(source.metrics, MetricSource)
        host = source.host(source.host_names()[0])
        assert isinstance(host, EvidenceHost)
        assert source.rank_map() and source.job_hosts() <= set(source.host_names())


def test_memory_host_keeps_the_replay_rules() -> None:
    bundle = Bundle(EXAMPLES / "pcie-x8-mfu-drop" / "bundle")
    source = MemorySource.from_bundle(bundle)
    name = source.host_names()[0]
    host, replay = source.host(name), BundleSource(bundle).host(name)
    with pytest.raises(PathEscapeError):
        host.read("/sys/../../incident.json")
    with pytest.raises(NotAllowedError):
        host.run(["rm", "-rf", "/"])
    with pytest.raises(NotAllowedError):
        host.run(["ethtool", "-S", "eth0;reboot"])
    with pytest.raises(NotFoundError):
        source.host("no-such-host")
    assert host.list("/sys/bus/pci/devices") == replay.list("/sys/bus/pci/devices")
    assert host.run(["lspci", "-vv"]) == replay.run(["lspci", "-vv"])
    assert host.command_source(["lspci", "-vv"]) == replay.command_source(["lspci", "-vv"])


def test_metric_sources_honour_name_labels_and_range() -> None:
    bundle = Bundle(EXAMPLES / "thermal-throttle-straggler" / "bundle")
    for source in (BundleSource(bundle), MemorySource.from_bundle(bundle)):
        everything = source.metrics.series("DCGM_FI_DEV_GPU_TEMP")
        assert everything.series and everything.unavailable is None
        one = everything.series[0]
        gpu = one.labels["gpu"]
        some = source.metrics.series("DCGM_FI_DEV_GPU_TEMP", {"gpu": gpu})
        assert {s.labels["gpu"] for s in some.series} == {gpu} and len(some.series) < len(everything.series)
        t = one.timestamps
        mid = float(t[len(t) // 2])
        clipped = source.metrics.series("DCGM_FI_DEV_GPU_TEMP", {"gpu": gpu}, mid, None)
        assert all(float(s.timestamps.min()) >= mid for s in clipped.series)
        assert source.metrics.series("NO_SUCH_METRIC").series == []
