"""The metrics tool reads DCGM series relative to peers and the window, never absolute values."""

from __future__ import annotations

from pathlib import Path

from forensic.sandbox import Bundle
from forensic.tools import ToolContext, get_tool

from tests.conftest import END, START, build_bundle

HOSTS = ["node-a.example", "node-b.example"]


def _series(
    name: str, host: str, gpu: int, points: list[tuple[float, float]], label: str = "Hostname"
) -> list[str]:
    lab = f'gpu="{gpu}",UUID="GPU-{host}-{gpu}",pci_bus_id="00000000:18:00.0",device="nvidia{gpu}",modelName="NVIDIA H100 80GB HBM3",{label}="{host}"'
    return [f"{name}{{{lab}}} {v:g} {t:.0f}" for t, v in points]


def write_metrics(bundle: Path, *, hot=None, stopped=None, xid=None, short_names=False) -> None:
    lines = [
        "# TYPE DCGM_FI_DEV_SM_CLOCK gauge",
        "# TYPE DCGM_FI_DEV_THERMAL_VIOLATION counter",
        "# TYPE DCGM_FI_DEV_XID_ERRORS gauge",
    ]
    times = [START + 60 * k for k in range(int((END - START) / 60))]
    for host in HOSTS:
        shown = host.split(".")[0] if short_names else host
        for g in range(4):
            me = (host, g)
            ts = [t for t in times if not (me == stopped and t > START + 1800)]
            is_hot = me in hot if isinstance(hot, (set, frozenset)) else me == hot
            clock = 1410.0 if is_hot else 1980.0
            lines += _series("DCGM_FI_DEV_SM_CLOCK", shown, g, [(t, clock) for t in ts])
            rate = 0.5e9 if is_hot else 0.0  # ns of violation per second of wall time
            lines += _series("DCGM_FI_DEV_THERMAL_VIOLATION", shown, g, [(t, rate * (t - START)) for t in ts])
            lines += _series(
                "DCGM_FI_DEV_XID_ERRORS",
                shown,
                g,
                [(t, 43.0 if me != xid else (43.0 if t < START + 1200 else 79.0)) for t in ts],
            )
    lines.append("# EOF")
    (bundle / "metrics").mkdir(exist_ok=True)
    (bundle / "metrics" / "dcgm.om").write_text("\n".join(lines) + "\n")


def names(res):
    return {(s.name, s.component) for s in res.signals}


def test_thermal_violation_and_low_clock_on_one_gpu(make_bundle) -> None:
    b = make_bundle(None)
    write_metrics(b, hot=("node-b.example", 3))
    res = get_tool("metrics")(ToolContext(Bundle(b)), {})
    assert names(res) == {
        ("metric_thermal_violation", "node-b.example/gpu3"),
        ("metric_clock_low", "node-b.example/gpu3"),
    }


def test_series_that_stop_and_a_sticky_xid_gauge(make_bundle) -> None:
    b = make_bundle(None)
    write_metrics(b, stopped=("node-a.example", 1), xid=("node-a.example", 1))
    res = get_tool("metrics")(ToolContext(Bundle(b)), {"host": "node-a.example"})
    got = names(res)
    assert ("metric_series_stopped", "node-a.example/gpu1") in got
    assert ("xid_fell_off_bus", "node-a.example/gpu1") in got
    # 43 everywhere, all window long: the gauge is sticky, it says nothing about this incident
    assert not any(n == "xid_fell_off_bus" and c != "node-a.example/gpu1" for n, c in got)


def test_short_host_labels_resolve_to_bundle_hosts(make_bundle) -> None:
    b = make_bundle(None)
    write_metrics(b, hot=("node-a.example", 0), short_names=True)
    res = get_tool("metrics")(ToolContext(Bundle(b)), {})
    assert ("metric_thermal_violation", "node-a.example/gpu0") in names(res)


def test_quiet_fleet(make_bundle) -> None:
    b = make_bundle(None)
    write_metrics(b)
    res = get_tool("metrics")(ToolContext(Bundle(b)), {})
    assert res.status == "ok" and not res.signals


def test_most_gpus_of_one_host_in_violation_is_the_hosts_fault(make_bundle, tmp_path) -> None:
    """3 of node-b's 4 GPUs in thermal violation over the window: one host signal as well as the
    three GPU signals (its cooling, not one GPU); 2 of 4 stay GPU findings only."""
    b = make_bundle(None)
    write_metrics(b, hot={("node-b.example", g) for g in (0, 1, 3)})
    got = names(get_tool("metrics")(ToolContext(Bundle(b)), {}))
    assert ("host_thermal_violation", "node-b.example") in got
    assert {("metric_thermal_violation", f"node-b.example/gpu{g}") for g in (0, 1, 3)} <= got
    assert not any(c == "node-a.example" for _, c in got)

    b2 = build_bundle(tmp_path / "two-hot", None)
    write_metrics(b2, hot={("node-b.example", 0), ("node-b.example", 2)})
    got2 = names(get_tool("metrics")(ToolContext(Bundle(b2)), {}))
    assert {n for n, _ in got2} == {"metric_thermal_violation", "metric_clock_low"}


def test_violation_details_say_what_each_number_measures(make_bundle) -> None:
    """Reason bits set most of the time while DCGM's violation-time counter never moved: the detail
    names both measures for what they are, so "0.0%" never reads as contradicting the finding."""
    b = make_bundle(None)
    write_metrics(b)
    text = (b / "metrics" / "dcgm.om").read_text().replace("# EOF\n", "")
    times = [START + 60 * k for k in range(int((END - START) / 60))]
    extra = ["# TYPE DCGM_FI_DEV_CLOCKS_EVENT_REASONS gauge"]
    for g in range(4):
        hot = g == 2
        extra += _series(
            "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
            "node-a.example",
            g,
            [(t, 0x40 if hot and k % 10 < 7 else 0) for k, t in enumerate(times)],
        )
    (b / "metrics" / "dcgm.om").write_text(text + "\n".join(extra) + "\n# EOF\n")
    res = get_tool("metrics")(ToolContext(Bundle(b)), {})
    sig = next(s for s in res.signals if s.name == "metric_thermal_violation")
    assert sig.component == "node-a.example/gpu2"
    assert "thermal throttle reasons set in 70% of samples" in sig.detail
    assert "DCGM thermal-violation time 0.0% of the window" in sig.detail
    assert "in thermal violation 0.0%" not in sig.detail
