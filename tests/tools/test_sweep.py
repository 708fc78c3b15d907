"""Fleet-wide sweeps read suspects plus a fixed sample on a large fleet, and say what they left out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from forensic.harness.graph import Investigator
from forensic.sandbox import Bundle
from forensic.sandbox.metric_scan import scan_counters
from forensic.sandbox.sources import BundleSource
from forensic.tools import _sweep
from forensic.tools.base import ToolContext, get_tool

#: Larger than the sample plus one, so sweeps sample; small enough to generate in seconds.
HOSTS = 80


@pytest.fixture(scope="module")
def incident(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from forensic.evals.generator.incident import IncidentSpec, generate

    out = tmp_path_factory.mktemp("fleet")
    generate(IncidentSpec(case="link", cause="link_degradation", seed=1, hosts=HOSTS), out)
    return out / "link"


def _truth(case: Path) -> dict:
    return json.loads((case / "truth.json").read_text())


def test_a_sampled_investigation_is_right_and_opens_no_path_twice(incident: Path) -> None:
    truth = _truth(incident)
    bundle = Bundle(incident, verify_gzip="lazy")
    report = Investigator(bundle).run(thread_id="t")
    assert [report["verdict"]["root_cause"], report["verdict"]["component"]] == [
        truth["root_cause"],
        truth["component"],
    ]
    twice = {rel: n for rel, n in bundle.fs.opened.items() if n > 1}
    assert twice == {}, f"opened more than once: {twice}"
    faulty = truth["component"].split("/")[0]
    sweeps = [e for e in report["evidence"] if (e.get("data") or {}).get("sweep")]
    # Which sweeps run is the planner's choice (it stops once the leader is confirmed and nothing
    # left could refute it); job_logs' own sampling is checked on its own below.
    assert "kernel_log" in {e["tool"] for e in sweeps}
    for e in sweeps:
        _check_sampled(e, faulty)


def _check_sampled(e: dict, faulty: str) -> None:
    sw = e["data"]["sweep"]
    assert sw["sampled"] and sw["hosts_total"] == HOSTS
    assert sw["hosts_read"] + sw["hosts_not_read"] == HOSTS and sw["hosts_not_read"] > 0
    assert sw["peers_sampled"] == _sweep.SAMPLE and faulty in sw["suspects"]
    assert f"{sw['hosts_not_read']} not read" in e["summary"]


def test_job_logs_sweep_is_sampled(incident: Path) -> None:
    res = get_tool("job_logs")(ToolContext(Bundle(incident, verify_gzip="lazy")), {})
    assert res.status == "ok"
    _check_sampled({"data": res.data, "summary": res.summary}, _truth(incident)["component"].split("/")[0])


def test_a_sweep_covers_only_the_hosts_it_read(incident: Path) -> None:
    ctx = ToolContext(Bundle(incident, verify_gzip="lazy"))
    plan = _sweep.plan(ctx, ("gpu",))
    assert not plan.whole and len(plan.hosts) == len(plan.suspects) + _sweep.SAMPLE
    assert _sweep.plan(ctx, ("gpu",)).hosts == plan.hosts  # the same sample for every call
    result = get_tool("gpu_health")(ctx, {})
    covered_hosts = {c.split("/")[0] for c in result.covered}
    assert covered_hosts == set(plan.hosts)
    unread = set(ctx.source.host_names()) - set(plan.hosts)
    assert unread and not unread & covered_hosts  # an unread host is never evidence of health
    assert result.data["sweep"]["hosts_not_read"] == len(unread)


def test_evidence_names_suspects_and_the_sample_size_does_not_grow(incident: Path) -> None:
    ctx = ToolContext(Bundle(incident, verify_gzip="lazy"))
    names = ctx.source.host_names()
    named = names[3]
    ctx.note_evidence(
        [
            {
                "id": "ev-1",
                "status": "ok",
                "signals": [
                    {"name": "straggler", "component": f"{named}/gpu2", "kind": "gpu"},
                    {"name": "job_slowdown", "component": "job", "kind": "job"},
                ],
            },
            {
                "id": "ev-2",
                "status": "error",
                "signals": [{"name": "straggler", "component": f"{names[5]}/gpu0", "kind": "gpu"}],
            },
        ]
    )
    plan = _sweep.plan(ctx, ("gpu",))
    assert named in plan.hosts and "ev-1" in plan.suspects[named]
    assert names[5] not in plan.suspects  # a failed call names nothing
    assert plan.sampled == _sweep.SAMPLE


def test_a_small_fleet_is_read_whole(make_bundle) -> None:
    ctx = ToolContext(Bundle(make_bundle("pcie_downtrain"), verify_gzip="lazy"))
    plan = _sweep.plan(ctx, ("gpu", "nic"))
    assert plan.whole and plan.hosts == ctx.source.host_names() and "small fleet" in plan.why
    assert "sweep" not in get_tool("gpu_health")(ctx, {}).data


def test_without_the_fleet_wide_counters_a_sweep_reads_every_host(make_bundle, monkeypatch) -> None:
    ctx = ToolContext(Bundle(make_bundle("pcie_downtrain"), verify_gzip="lazy"))
    monkeypatch.setattr(_sweep, "SAMPLE", 1)  # a "large" fleet of a few hosts
    plan = _sweep.plan(ctx, ("nic",))
    assert plan.whole and plan.hosts == ctx.source.host_names()
    assert "InfiniBand" in plan.why and "every host read" in plan.why


def test_the_counter_scan_agrees_with_the_parsed_series(incident: Path) -> None:
    names = ("node_infiniband_port_errors_received_total", "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_SM_CLOCK")
    fast_src = BundleSource(Bundle(incident, verify_gzip="lazy"))
    fast = scan_counters(fast_src, names, *fast_src.window)
    slow_src = BundleSource(Bundle(incident, verify_gzip="lazy"))
    slow_src.metrics.series("DCGM_FI_DEV_SM_CLOCK")  # parsed: the scan now reads the parsed series
    slow = scan_counters(slow_src, names, *slow_src.window)
    assert fast.series == slow.series and fast.series["DCGM_FI_DEV_SM_CLOCK"] == HOSTS * 8

    def moved(scan):
        return {
            (s.name, tuple(sorted(s.labels.items()))): (s.increase(), s.peak)
            for s in scan.spans
            if s.increase() or (s.first is not None and s.first != s.last)
        }

    assert moved(fast) == moved(slow) and moved(fast)
    assert scan_counters(fast_src, names, *fast_src.window) is fast  # one read per source


def test_a_one_host_nic_call_on_a_large_fleet_reads_a_fixed_number_of_peers(incident: Path) -> None:
    bundle = Bundle(incident, verify_gzip="lazy")
    ctx = ToolContext(bundle)
    host = _truth(incident)["component"].split("/")[0]
    result = get_tool("nic_counters")(ctx, {"host": host})
    assert result.status == "ok" and any(s.name == "link_errors" for s in result.signals)
    read = {
        rel.split("/")[1] for rel in bundle.fs.opened if rel.startswith("nodes/") and "/infiniband/" in rel
    }
    assert host in read and len(read) == 1 + _sweep.NIC_PEERS


def test_the_counter_scan_reads_every_sample_form_as_the_parser_does(make_bundle) -> None:
    root = make_bundle(None)
    src0 = BundleSource(Bundle(root, verify_gzip="lazy"))
    start, end = src0.window
    t0 = int(start)
    lines = ["# TYPE scan_total counter"]
    for i, v in enumerate([1, 1, 5, 9]):  # one series with a space in a label value, stamped in ms
        lines.append(
            f'scan_total{{host="node-a.example",model="H100 80GB"}} {v} {(t0 - 600 + 400 * i) * 1000}'
        )
    for i, v in enumerate([3, 3, 3]):  # a quiet series, stamped in seconds
        lines.append(f'scan_total{{host="node-b.example"}} {v} {t0 + 300 * i}')
    lines += ['scan_total{host="node-c.example"} NaN', "scan_plain 7", "scan_plain 8", "# EOF"]
    (root / "metrics").mkdir(exist_ok=True)
    (root / "metrics" / "scan.om").write_text("\n".join(lines) + "\n")
    fast_src = BundleSource(Bundle(root, verify_gzip="lazy"))
    fast = scan_counters(fast_src, ("scan_total", "scan_plain"), start, end)
    slow_src = BundleSource(Bundle(root, verify_gzip="lazy"))
    slow_src.metrics.series("scan_total")
    slow = scan_counters(slow_src, ("scan_total", "scan_plain"), start, end)
    assert fast.series == slow.series == {"scan_total": 3, "scan_plain": 1}
    a = next(s for s in fast.spans if s.labels.get("host") == "node-a.example")
    assert a.labels["model"] == "H100 80GB" and (a.before, a.last, a.increase()) == (1.0, 9.0, 8.0)
    b = next(s for s in slow.spans if s.labels.get("host") == "node-a.example")
    assert (b.before, b.last, b.increase()) == (a.before, a.last, a.increase())
    assert not any(s.labels.get("host") == "node-b.example" for s in fast.spans)  # held one value: not listed
    plain = next(s for s in fast.spans if s.name == "scan_plain")
    assert (plain.first, plain.last) == (7.0, 8.0)


def test_the_metrics_tool_after_a_sampled_sweep_opens_no_metric_file_again(incident: Path) -> None:
    bundle = Bundle(incident, verify_gzip="lazy")
    ctx = ToolContext(bundle)
    assert not _sweep.plan(ctx, ("gpu",)).whole  # the counter scan ran
    scanned = {rel: n for rel, n in bundle.fs.opened.items() if rel.startswith("metrics/")}
    assert scanned and set(scanned.values()) == {1}
    result = get_tool("metrics")(ctx, {})
    assert result.status == "ok" and result.covered
    assert {rel: n for rel, n in bundle.fs.opened.items() if rel.startswith("metrics/")} == scanned
