"""The fleet file and the live-fleet source, with recorded hosts at the Host seam."""

from __future__ import annotations

from pathlib import Path

import pytest
from forensic.harness.graph import Investigator
from forensic.sandbox import Bundle, EvidenceSource, RemoteHostError
from forensic.sandbox.fleet import FleetFileError, FleetSource, load_fleet, open_fleet, parse_since
from forensic.sandbox.memory import MemorySource

EXAMPLES = Path(__file__).resolve().parents[2] / "evals" / "examples"


def _write(tmp: Path, text: str) -> Path:
    (tmp / "token").write_text("s3cret-token-value\n")
    p = tmp / "fleet.toml"
    p.write_text(text)
    return p


GOOD = """
gpus_per_node = 8
[prometheus]
url = "http://prometheus:9090"
[agents]
url_template = "http://{host}:9401"
token_file = "token"
hosts = ["gpu-a001", "gpu-a002"]
[job]
dir = "/shared/jobs/{job}"
"""


def test_a_fleet_file_parses_with_relative_paths_from_its_folder(tmp_path: Path) -> None:
    cfg = load_fleet(_write(tmp_path, GOOD))
    assert cfg.prometheus and cfg.prometheus.url == "http://prometheus:9090"
    assert cfg.agent_url("gpu-a002") == "http://gpu-a002:9401"
    assert cfg.path(cfg.agents.token_file) == tmp_path.resolve() / "token"


@pytest.mark.parametrize(
    "text, expect",
    [
        ("[agents\n", "not valid TOML"),
        ('[agents]\ntoken_file = "t"\n', "agents: give url_template or [agents.urls]"),
        (
            '[agents]\ntoken_file = "t"\nurl_template = "http://x:1"\n',
            "agents.url_template: must be an http(s) URL containing {host}",
        ),
        (
            '[prometheus]\nurl = "prom:9090"\n[agents]\ntoken_file = "t"\nurl_template = "http://{host}"\n',
            "prometheus.url: must start with http",
        ),
        (
            'colour = "blue"\n[agents]\ntoken_file = "t"\nurl_template = "http://{host}"\n',
            "colour: Extra inputs are not permitted",
        ),
        (
            '[agents]\ntoken_file = "t"\nurl_template = "http://{host}"\nhosts = ["../etc"]\n',
            "is not a host name",
        ),
        (
            '[agents]\ntoken_file = "t"\nurl_template = "http://{host}"\n[topology]\nfile = "t.json"\nprometheus_label = "Hostname"\n',
            "not both",
        ),
    ],
)
def test_bad_fleet_files_get_one_clear_line_naming_file_and_key(
    tmp_path: Path, text: str, expect: str
) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(FleetFileError) as exc:
        load_fleet(path)
    assert expect in str(exc.value) and str(path) in str(exc.value) and "\n" not in str(exc.value)


def test_missing_fleet_file_and_token(tmp_path: Path) -> None:
    with pytest.raises(FleetFileError, match="no such fleet file"):
        load_fleet(tmp_path / "nope.toml")
    path = _write(tmp_path, GOOD.replace('token_file = "token"', 'token_file = "missing"'))
    with pytest.raises(FleetFileError, match="agent token file"):
        open_fleet(path, job="j", since="1h", host_factory=lambda *a: None)


def test_durations() -> None:
    assert parse_since("2h") == 7200 and parse_since("1h30m") == 5400 and parse_since("45s") == 45
    for bad in ("", "2x", "-1h", "0s", "h"):
        with pytest.raises(ValueError):
            parse_since(bad)


def _fleet_over(bundle: Bundle, tmp_path: Path, *, broken: dict[str, str] | None = None) -> FleetSource:
    """A fleet whose hosts are the bundle's recorded hosts at the Host seam (no HTTP), with the
    bundle's metrics and topology; ``broken`` hosts fail as an unreachable agent does."""
    memory = MemorySource.from_bundle(bundle)
    topo = tmp_path / "topology.json"
    topo.write_text(bundle.topology.model_dump_json() if bundle.topology else '{"hosts": []}')
    path = _write(
        tmp_path,
        f"""
gpus_per_node = {bundle.gpus_per_node}
[agents]
url_template = "http://{{host}}:9401"
token_file = "token"
[topology]
file = "topology.json"
[job]
dir = "{bundle.root / "job"}"
""",
    )

    class Down:
        def __init__(self, name: str, why: str) -> None:
            self.name, self.why, self.calls = name, why, 0

        def _fail(self, *a: object) -> None:
            self.calls += 1
            raise RemoteHostError(f"agent http://{self.name}:9401: {self.why}")

        read = list = exists = run = nvml = has_command = _fail

    downs: dict[str, Down] = {}

    def factory(name, url, token, timeout, snapshot):
        assert token == "s3cret-token-value" and url == f"http://{name}:9401"
        if broken and name in broken:
            return downs.setdefault(name, Down(name, broken[name]))
        return memory.host(name, snapshot)

    start, end = bundle.window
    src = FleetSource(
        load_fleet(path),
        job=bundle.incident.job.name,
        start=start,
        end=end,
        title=bundle.incident.title,
        ranks=bundle.incident.job.ranks,
        host_factory=factory,
        metrics=memory.metrics,
        probe=True,
    )
    src.downs = downs  # type: ignore[attr-defined]
    return src


def test_fleet_source_over_recorded_hosts_reaches_the_replay_verdict(tmp_path: Path) -> None:
    bundle = Bundle(EXAMPLES / "pcie-x8-mfu-drop" / "bundle")
    src = _fleet_over(bundle, tmp_path)
    assert isinstance(src, EvidenceSource)
    live = Investigator(src).run(thread_id="t")
    replay = Investigator(bundle).run(thread_id="t")
    assert (
        (live["verdict"]["root_cause"], live["verdict"]["component"])
        == (replay["verdict"]["root_cause"], replay["verdict"]["component"])
        == ("pcie_downtrain", "gpu-e126/gpu0")
    )
    # citations name the host and what was read on it, not bundle paths
    sources = " ".join(str(r["source"]) for r in live["evidence"])
    assert "gpu-e126$ lspci -vv" in sources or "gpu-e126:/sys/" in sources
    assert "nodes/" not in sources


def test_an_unreadable_host_costs_only_its_own_evidence_and_is_named(tmp_path: Path) -> None:
    bundle = Bundle(EXAMPLES / "pcie-x8-mfu-drop" / "bundle")
    other = next(h for h in bundle.host_names() if h != "gpu-e126")
    src = _fleet_over(bundle, tmp_path, broken={other: "connection refused"})
    report = Investigator(src).run(thread_id="t")
    assert (report["verdict"]["root_cause"], report["verdict"]["component"]) == (
        "pcie_downtrain",
        "gpu-e126/gpu0",
    )
    assert any(other in n and "could not be read" in n for n in report["notes"])
    # known down after the first failure: later reads fail at once, without asking the agent again
    assert src.downs[other].calls == 1  # type: ignore[attr-defined]


def test_hosts_and_gpus_from_a_prometheus_label(tmp_path: Path) -> None:
    bundle = Bundle(EXAMPLES / "pcie-x8-mfu-drop" / "bundle")
    memory = MemorySource.from_bundle(bundle)
    asked: list[tuple] = []

    class Scripted:
        def series(self, name, labels=None, start=None, end=None):
            asked.append((name, labels))
            return memory.metrics.series(name, labels, start, end)

    path = _write(
        tmp_path,
        """
[agents]
url_template = "http://{host}:9401"
token_file = "token"
[topology]
prometheus_label = "Hostname"
""",
    )
    start, end = bundle.window
    src = FleetSource(
        load_fleet(path),
        job="j",
        start=start,
        end=end,
        metrics=Scripted(),
        host_factory=lambda n, *a: memory.host(n),
    )
    assert asked[0] == ("DCGM_FI_DEV_GPU_TEMP", None)
    with_dcgm = {s.labels["Hostname"] for s in memory.metrics.series("DCGM_FI_DEV_GPU_TEMP").series}
    assert set(src.host_names()) == with_dcgm and len(with_dcgm) >= 2
    info = src.host_info(sorted(with_dcgm)[0])
    assert info is not None and [g.index for g in info.gpus] == list(range(8))
    # default placement: 8 ranks per host in host order
    assert src.rank_map()[8] == (src.host_names()[1], 0)


def test_job_steps_and_logs_from_an_http_folder(tmp_path: Path) -> None:
    import functools
    import http.server
    import threading

    bundle = Bundle(EXAMPLES / "pcie-x8-mfu-drop" / "bundle")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(bundle.root / "job"))
    handler.log_message = lambda *a: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        path = _write(
            tmp_path,
            f"""
[agents]
url_template = "http://{{host}}:9401"
token_file = "token"
hosts = ["h1"]
[job]
url = "http://127.0.0.1:{server.server_address[1]}"
""",
        )
        start, end = bundle.window
        src = FleetSource(load_fleet(path), job="j", start=start, end=end, host_factory=lambda *a: None)
        replay = Investigator(bundle).source
        assert src.log_names() == replay.log_names() and len(src.log_names()) == 8
        name = src.log_names()[0]
        assert src.log(name).text == replay.log(name).text
        assert src.log(name).source.endswith(f"/logs/{name}.gz")
        assert src.steps()[0].text == replay.steps()[0].text
        with pytest.raises(Exception, match="no job log"):
            src.log("../incident.json")
    finally:
        server.shutdown()
        server.server_close()


def test_a_fleet_locator_reopens_the_same_incident(tmp_path: Path) -> None:
    """A checkpointed run (approve, resume) reopens its fleet from the locator it stored."""
    from forensic.sandbox import open_source

    path = _write(
        tmp_path,
        '[agents]\nurl_template = "http://127.0.0.1:9/{host}"\ntoken_file = "token"\nhosts = ["h1"]\n'
        "timeout_s = 1\n",
    )
    first = open_fleet(
        path, job="train", since="90m", until=1_700_000_000.0, title="MFU drop", ranks=8, probe=False
    )
    again = open_source(first.locator)
    assert again.incident.model_dump() == first.incident.model_dump()
    assert again.window == (1_700_000_000.0 - 5400, 1_700_000_000.0) and again.host_names() == ["h1"]
    with pytest.raises(FleetFileError):
        open_source("fleet:{not json")


def test_one_duration_grammar_for_every_since() -> None:
    """collect --since and investigate --fleet --since read durations the same way."""
    from forensic.harness.collect import CollectError
    from forensic.harness.collect import parse_since as collect_since

    for text, seconds in (
        ("90", 90),
        ("1h30m", 5400),
        ("1.5d", 129600),
        ("2h", 7200),
        (" 45s ", 45),
        ("1d2h3m4s", 93784),
    ):
        assert parse_since(text) == collect_since(text) == seconds
    for bad in ("", "2x", "-1h", "0s", "h", "30m1h", "1h1h", "2w", "1 h"):
        with pytest.raises(ValueError):
            parse_since(bad)
        with pytest.raises(CollectError):
            collect_since(bad)
