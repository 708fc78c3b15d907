"""What a hostile input costs is bounded by a cap or the wall budget.

- Item 8: the wall budget bounds unpacking an archive and parsing topology.json; the unpacked total
  and the topology's size are capped, refused early with a clear error.
- Item 9: ``forensic collect`` caps the bytes it writes per host and per collection, and says which
  host was truncated and by how much.
- Item 10: the trainer-log scan keeps a bounded number of facts (counts beyond the cap), in bounded
  memory, with verdicts unchanged.
"""

from __future__ import annotations

import io
import json
import tarfile
import tempfile
import time
from pathlib import Path

import pytest
from forensic.harness.cli import _register, app
from forensic.sandbox import Bundle, CorruptInputError, deadline
from forensic.sandbox import bundle as bundle_mod
from forensic.sandbox.archive import extract_archive
from forensic.sandbox.errors import WallTimeExceeded
from typer.testing import CliRunner

_register()
runner = CliRunner()


def _tar(path: Path, members: list[tuple[str, int]], *, truncate_after: int | None = None) -> Path:
    """A .tar.gz of zero-filled members (name, size); ``truncate_after``: cut the file after that many bytes."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, size in members:
            info = tarfile.TarInfo(name)
            info.size = size
            tf.addfile(info, io.BytesIO(bytes(size)))
    data = buf.getvalue()
    path.write_bytes(data[:truncate_after] if truncate_after else data)
    return path


def _leftovers(tmp: Path) -> list[Path]:
    return list(tmp.glob("forensic-bundle-*"))


# -- item 8 ----------------------------------------------------------------------------------------
def test_item8_unpacking_stops_at_the_deadline_and_removes_what_it_wrote(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    archive = _tar(tmp_path / "slow.tar.gz", [(f"b/nodes/h{i}/f", 1 << 16) for i in range(4)])
    with deadline.deadline(0.05, alarm=False):
        time.sleep(0.1)  # the budget is gone before unpacking starts: the first check must see it
        with pytest.raises(WallTimeExceeded, match=r"slow\.tar\.gz \(0 members checked, 0 bytes written\)"):
            extract_archive(archive)
    assert _leftovers(tmp_path) == []


def test_item8_the_total_cap_refuses_at_the_member_that_passes_it(tmp_path: Path) -> None:
    # The second member passes the total; the file is cut inside the third. Reading every header
    # first (as before) fails on the truncation; checking member by member refuses at the second,
    # before decompressing what follows it.
    members = [("b/a", 600_000), ("b/b", 600_000), ("b/c", 4_000_000)]
    full = _tar(tmp_path / "full.tar.gz", members).stat().st_size
    archive = _tar(tmp_path / "cut.tar.gz", members, truncate_after=full - 200)
    with pytest.raises(
        CorruptInputError, match=r"past 1000000 bytes in total \(the archive cap; refused at member 'b/b'\)"
    ):
        extract_archive(archive, max_total_bytes=1_000_000)


def test_item8_investigate_an_archive_past_the_budget_ends_in_one_line(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    archive = _tar(tmp_path / "big.tar.gz", [(f"b/nodes/h{i}/blob", 4 << 20) for i in range(16)])
    res = runner.invoke(app, ["investigate", str(archive), "--no-checkpoint", "--budget-wall-s", "0.05"])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    (line,) = [x for x in res.stderr.splitlines() if x.strip()]
    assert "inconclusive, nothing investigated: working-time budget exhausted while" in line
    assert "big.tar.gz" in line and "--budget-wall-s 0.05" in line
    assert _leftovers(tmp_path) == []


def _big_topology(root: Path, hosts: int) -> None:
    topo = json.loads((root / "topology.json").read_text())
    extra = [{"name": f"pad{i:06d}.example", "gpus": [{"index": g} for g in range(8)]} for i in range(hosts)]
    topo["hosts"] = topo["hosts"] + extra
    (root / "topology.json").write_text(json.dumps(topo))


def test_item8_a_topology_past_its_cap_is_not_parsed_and_the_report_says_why(
    make_bundle, monkeypatch
) -> None:
    root = make_bundle(None)
    _big_topology(root, 2000)
    monkeypatch.setattr(bundle_mod, "MAX_TOPOLOGY_BYTES", 64 * 1024)
    b = Bundle(root)
    assert b.topology is None
    assert b.topology_error is not None and "more than 65536 bytes (its cap)" in b.topology_error
    assert "placement inferred from nodes/" in b.topology_error
    assert "pad000000.example" not in b.host_names()


def test_item8_a_topology_parse_past_the_budget_ends_inconclusive_naming_it(make_bundle) -> None:
    root = make_bundle(None)
    _big_topology(root, 60_000)  # about 10 MB: its validation takes far longer than the budget
    res = runner.invoke(
        app, ["investigate", str(root), "--no-checkpoint", "--json", "--budget-wall-s", "0.2"]
    )
    assert "Traceback" not in res.output
    if res.exit_code == 2:  # a loaded machine ran out before reaching the topology: still one line
        assert "inconclusive, nothing investigated: working-time budget exhausted while" in res.stderr
        return
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["status"] == "inconclusive"
    notes = " ".join(report.get("notes") or [])
    assert "topology.json not used: the working-time budget ran out while it was read and parsed" in notes, (
        notes
    )


# -- item 9 ----------------------------------------------------------------------------------------
_FILE = 256 * 1024


class _HugeFiles:
    """A compromised host behind a real agent: hundreds of devices, every file a quarter MiB."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.reads = 0

    def list(self, path: str) -> list[str]:
        return [f"0000:{i:02x}:00.0" for i in range(200)] if path == "/sys/bus/pci/devices" else []

    def read(self, path: str) -> str:
        self.reads += 1
        return "0x030200\n" if path.endswith("/class") else "9" * _FILE

    def exists(self, path: str) -> bool:
        return True

    def run(self, argv):
        return "y" * _FILE

    def nvml(self):
        return {"driver_version": "1", "devices": []}


def test_item9_collect_caps_bytes_per_host_and_per_collection_and_says_so(tmp_path: Path) -> None:
    from forensic.harness.node_agent import AgentServer
    from forensic.sandbox.agent import Agent

    token = "limits-token-0123456789abcdef"
    (tmp_path / "token").write_text(token)
    hosts = {n: _HugeFiles(n) for n in ("evil-a", "evil-b", "evil-c")}
    servers = [AgentServer(Agent({"now": h}, token=token, mode="live")) for h in hosts.values()]
    try:
        urls = [s.start().url for s in servers]
        out = tmp_path / "out"
        args = [a for n, u in zip(hosts, urls, strict=True) for a in ("--agent", f"{n}={u}")]
        res = runner.invoke(
            app,
            [
                "collect",
                *args,
                "--token-file",
                str(tmp_path / "token"),
                "--out",
                str(out),
                "--max-host-mb",
                "1",
                "--max-total-mb",
                "1.5",
            ],
        )
    finally:
        for s in servers:
            s.stop()
    assert res.exit_code == 0, res.output
    assert "Traceback" not in res.output
    on_disk = {
        n: sum(p.stat().st_size for p in (out / "nodes" / n).rglob("*") if p.name != "collected.json")
        for n in hosts
    }
    assert on_disk["evil-a"] <= 1 << 20 and sum(on_disk.values()) <= 1.5 * (1 << 20)
    assert on_disk["evil-a"] > 0 and on_disk["evil-b"] > 0  # each kept what fitted
    err = res.stderr
    assert "evil-a: TRUNCATED (stopped at the per-host byte cap (1048576 bytes)" in err
    assert "evil-b: TRUNCATED (stopped at the collection's byte cap (1572864 bytes, all hosts)" in err
    assert "evil-c: TRUNCATED (stopped at the collection's byte cap" in err
    assert "3 truncated at a byte or file cap: evil-a, evil-b, evil-c" in err
    for n in hosts:
        collected = json.loads((out / "nodes" / n / "collected.json").read_text())
        assert "byte cap" in collected["truncated"]
    # Reading stopped at the cap: the host was not drained of all its 1,600 files.
    assert hosts["evil-a"].reads < 20


# -- item 10 ---------------------------------------------------------------------------------------
def test_item10_the_trainer_scan_keeps_bounded_facts_and_counts_every_line(monkeypatch) -> None:
    import tracemalloc

    from forensic.tools import _trainer_log as tl
    from forensic.tools.job_logs import _trainer_signals

    monkeypatch.setattr(tl, "MAX_SERIES", 200)
    n = 6000

    def lines():
        for i in range(n):
            yield f"step {i} | step_time {0.9 if i < n // 2 else 1.8:.1f}s | tokens_per_sec_per_gpu: {4100 + i % 7}"
            yield f"DataLoader worker (pid {i}) is killed by signal: Killed"
            yield f"nfs: server filer{i % 3} not responding, still trying"

    t = tl.TrainerFacts()
    tracemalloc.start()
    t.add_lines(lines())
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # Kept: the first MAX_SERIES and at most twice as many of the latest; counted: every line.
    assert 2 * 200 <= len(t.rates) < 3 * 200 and 2 * 200 <= len(t.step_time) < 3 * 200
    assert t.rates[0][2] == 4100.0 and t.step_time[-1][1] == 1.8  # the first and the latest are kept
    assert len(t.stalls) == tl.MAX_EXAMPLES and len(t.storage) == tl.MAX_EXAMPLES
    assert (t.stall_lines, t.storage_lines) == (n, n) and t.not_kept > 0
    assert t.stall_kinds == {"pytorch": n} and t.storage_kinds == {"nfs": n}
    # Everything kept fits well under what the input held (about 1 MB of text was read).
    assert peak < 600_000, peak
    signals = {s.name: s for s in _trainer_signals(t)}
    assert signals["input_stall_logged"].values["lines"] == n
    assert signals["storage_errors_logged"].values["lines"] == n


def test_item10_bench_parsers_reports_the_trainer_scan_speed_against_a_line_floor(
    tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    res = runner.invoke(app, ["bench", "parsers", "--size-mb", "1", "--json"])
    assert res.exit_code == 0, res.output
    rows = {r["name"]: r for r in json.loads(res.stdout)["parsers"]}
    row = rows["trainer_log"]
    assert row["found"] > 0 and row["speed_target_mb_per_s"] == 20.0
    assert row["mb_per_s"] > 0 and row["floor_mb_per_s"] > 0
    assert abs(row["speed_over_floor"] - row["mb_per_s"] / row["floor_mb_per_s"]) < 0.01
    assert all("mb_per_s" in r and "speed_over_floor" in r for r in rows.values())
