"""``forensic bench investigate`` generates once, investigates in a subprocess, reports costs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from forensic.evals import investigate_bench as ib


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FORENSIC_EVALS_CACHE", str(tmp_path / "cache"))
    from forensic.settings import get_settings

    if hasattr(get_settings, "cache_clear"):
        get_settings.cache_clear()
    yield tmp_path / "cache"
    if hasattr(get_settings, "cache_clear"):
        get_settings.cache_clear()


def test_bench_reports_each_size_and_caches_the_incidents(cache: Path) -> None:
    seen: list[str] = []
    r = ib.investigate_benchmark(
        [4, 8], causes=["pcie_downtrain", "thermal_throttle"], seed=3, progress=seen.append
    )
    assert [s["hosts"] for s in r["sizes"]] == [4, 8]
    for row in r["sizes"]:
        assert [s["cause"] for s in row["runs"]] == ["pcie_downtrain", "thermal_throttle"]
        for s in row["runs"]:
            truth = json.loads(
                (ib.bench_cache() / f"{s['cause']}-h{row['hosts']}-s3" / "truth.json").read_text()
            )
            assert s["correct"] == (s["verdict"] == [truth["root_cause"], truth["component"]])
            assert s["files_read"] > 0 and s["bytes_read"] > 0 and s["files_read_twice"] == 0
            assert (
                0 < s["report_kb"] < 256 and s["peak_rss_mb"] > 10 and s["wall_s"] >= s["investigate_s"] > 0
            )
        assert row["wall_s"] == max(s["wall_s"] for s in row["runs"])
        assert row["correct"] == all(s["correct"] for s in row["runs"])
    assert r["exponent"] == ib.exponent(r["sizes"][0], r["sizes"][1])
    assert set(r["by_cause"]) == {"pcie_downtrain", "thermal_throttle"}
    assert sum("generating" in m for m in seen) == 4
    assert "hosts" in ib.format_investigate_benchmark(r)
    seen.clear()
    ib.investigate_benchmark([4], causes=["pcie_downtrain"], seed=3, progress=seen.append)
    assert not any("generating" in m for m in seen)  # cached by cause, size and seed


def test_exponent() -> None:
    a, b = {"hosts": 256, "wall_s": 2.0}, {"hosts": 2048, "wall_s": 4.0}
    assert ib.exponent(a, b) == pytest.approx(1 / 3, abs=1e-3)
    assert ib.exponent(a, a) is None


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--hosts", "a,b"], "--hosts"),
        (["--hosts", "1"], "--hosts"),
        (["--hosts", "4", "--causes", "nope"], "unknown cause"),
    ],
)
def test_bad_input_is_one_line_exit_2(args: list[str], needle: str, cache: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "forensic.harness.cli", "bench", "investigate", *args],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2 and needle in out.stderr and "Traceback" not in out.stderr


def test_peak_memory_is_the_childs_own_not_its_parents() -> None:
    """ru_maxrss survives execve: a child started by a parent that held 300 MB would report the
    parent's peak. The bench reports the child's own (VmHWM of its new address space)."""
    import subprocess
    import sys

    parent = (
        "import subprocess, sys\n"
        "big = bytearray(300 * 1024 * 1024)\n"
        "big[::4096] = b'\\x01' * len(big[::4096])\n"
        "code = 'import resource; from forensic.evals.investigate_bench import own_peak_rss_mb as f; "
        "print(f(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)'\n"
        "print(subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", parent], capture_output=True, text=True, check=True, timeout=120
    )
    own, inherited = map(float, out.stdout.split())
    assert inherited >= 300  # what the bench used to report
    assert own < 200
