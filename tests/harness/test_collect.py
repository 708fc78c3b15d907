"""``forensic collect``: live hosts (replay agents over HTTP, this machine) into a bundle that replays
to the same verdict; hosts that cannot be read cost only themselves; bad input is exit 2."""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import pytest
from forensic.harness.collect import CollectError, collect_bundle, parse_since
from forensic.harness.node_agent import AgentServer
from forensic.sandbox import Bundle, NotFoundError, RemoteHost
from forensic.sandbox.agent import replay_agent

from tests import cli
from tests.conftest import HOSTS

TOKEN = "collect-token-0123456789abcdef"


def forensic(*args: str, env_dir: Path, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return cli.forensic(*args, state=env_dir, cwd=cwd, path="/usr/sbin:/usr/bin:/sbin:/bin")


def verdict(bundle: Path, env_dir: Path) -> dict[str, Any]:
    out = forensic("investigate", str(bundle), "--json", "--no-checkpoint", env_dir=env_dir)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["verdict"]


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    f = tmp_path / "token"
    f.write_text(TOKEN)
    return f


class Agents:
    """One replay agent per host of a bundle, on loopback."""

    def __init__(self, bundle: Path, down: tuple[str, ...] = ()) -> None:
        b = Bundle(bundle)
        self.servers = {h: AgentServer(replay_agent(b, h, TOKEN)) for h in b.host_names() if h not in down}
        self.down = down

    def __enter__(self) -> dict[str, str]:
        urls = {h: s.start().url for h, s in self.servers.items()}
        for h in self.down:
            urls[h] = "http://127.0.0.1:9"  # discard port: nothing listens
        return urls

    def __exit__(self, *exc: Any) -> None:
        for s in self.servers.values():
            s.stop()


@pytest.mark.parametrize("fault", ["pcie_downtrain", "gpu_fell_off_bus"])
def test_collect_through_agents_then_investigate_the_archive_gives_the_same_verdict(
    make_bundle, tmp_path: Path, token_file: Path, fault: str
) -> None:
    bundle = make_bundle(fault)
    want = verdict(bundle, tmp_path)
    out = tmp_path / "incident.tar.gz"
    with Agents(bundle) as urls:
        args = [a for h, u in urls.items() for a in ("--agent", f"{h}={u}")]
        done = forensic(
            "collect",
            *args,
            "--token-file",
            str(token_file),
            "--job-dir",
            str(bundle / "job"),
            "--topology",
            str(bundle / "topology.json"),
            "--job",
            "unit",
            "--out",
            str(out),
            env_dir=tmp_path,
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(out) and "FAILED" not in done.stderr
    with tarfile.open(out) as tf:
        names = tf.getnames()
    assert "incident.json" in names and "job/steps.csv" in names and f"nodes/{HOSTS[1]}/nvml.json" in names
    assert f"nodes/{HOSTS[1]}/sys/bus/pci/devices/0000:5d:00.0/current_link_width" in names
    got = verdict(out, tmp_path)
    assert (got["root_cause"], got["component"]) == (want["root_cause"], want["component"])


def test_an_agent_that_is_down_costs_only_its_host(make_bundle, tmp_path: Path) -> None:
    bundle = make_bundle("pcie_downtrain")
    with Agents(bundle, down=(HOSTS[0],)) as urls:
        hosts = [(h, RemoteHost(u, TOKEN, name=h, attempts=1, timeout_s=5)) for h, u in urls.items()]
        res = collect_bundle(
            hosts,
            tmp_path / "out",
            incident={"id": "x", "title": "t"},
            job_dir=bundle / "job",
            topology=json.loads((bundle / "topology.json").read_text()),
        )
    assert res.hosts[HOSTS[0]].error and "unreachable" in res.hosts[HOSTS[0]].error
    assert res.hosts[HOSTS[1]].error is None and res.hosts[HOSTS[1]].files > 4
    collected = json.loads((tmp_path / "out" / "nodes" / HOSTS[0] / "collected.json").read_text())
    assert "unreachable" in collected["error"]
    b = Bundle(tmp_path / "out")
    assert b.host(HOSTS[1]).nvml()["devices"][2]["nvmlDeviceGetCurrPcieLinkWidth"] == 8


class _HostileHost:
    """A host (e.g. a compromised agent) whose listings try to steer the collector's writes."""

    name = "evil"

    def list(self, path: str) -> list[str]:
        return ["../../../../escaped", "..", "a/b", "0000:18:00.0", "x" * 500, "\x00"]

    def read(self, path: str) -> str:
        return "0x030200\n" if path.endswith("/class") else "16\n"

    def exists(self, path: str) -> bool:
        return True

    def run(self, argv):
        return "out\n"

    def nvml(self):
        return {"driver_version": "1", "devices": [{"index": 0, "pci_bus_id": "../../x"}]}


def test_a_hostile_host_cannot_steer_writes_out_of_its_folder(tmp_path: Path) -> None:
    res = collect_bundle([("evil", _HostileHost())], tmp_path / "out", incident={"id": "x"})
    assert res.hosts["evil"].error is None
    written = [p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()]
    assert all(p.startswith("out/") for p in written), written
    assert not list(tmp_path.rglob("escaped"))
    assert (
        tmp_path / "out/nodes/evil/sys/bus/pci/devices/0000:18:00.0/current_link_width"
    ).read_text() == "16\n"


def test_no_nvml_is_a_valid_empty_reading_that_says_why(tmp_path: Path) -> None:
    class NoGpu(_HostileHost):
        name = "plain"

        def list(self, path: str) -> list[str]:
            return []

        def nvml(self):
            return None

    collect_bundle([("plain", NoGpu())], tmp_path / "out", incident={"id": "x"})
    nvml = json.loads((tmp_path / "out/nodes/plain/nvml.json").read_text())
    assert nvml["devices"] == [] and "no NVIDIA driver" in nvml["unavailable"]
    assert Bundle(tmp_path / "out").host("plain").nvml() == nvml


def test_the_summary_describes_the_host_now_not_its_window_start_snapshot(tmp_path: Path) -> None:
    """A window-start snapshot without NVML or commands (an agent keeps only sysfs from then) used
    to turn the host's summary into 'NVML unavailable; not available: ...' with every command
    listed twice, while the current files were in the bundle."""

    class Before(_HostileHost):
        def run(self, argv):
            raise NotFoundError("not recorded at the window's start")

        def nvml(self):
            return None

    res = collect_bundle(
        [("evil", _HostileHost())], tmp_path / "out", incident={"id": "x"}, before={"evil": Before()}
    )
    o = res.hosts["evil"]
    assert o.nvml == "1 devices" and not o.missed and o.commands
    assert (tmp_path / "out/nodes/evil/nvml.json").is_file() and (tmp_path / "out/nodes/evil/before").is_dir()


def test_collect_local_then_investigate(tmp_path: Path) -> None:
    out = tmp_path / "local.tar.gz"
    done = forensic(
        "collect", "--local", "--host", "this-node", "--out", str(out), "--since", "30m", env_dir=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "this-node:" in done.stderr and "NVML" in done.stderr
    b = Bundle(out)
    assert b.host_names() == ["this-node"] and b.incident.window.end - b.incident.window.start == 1800
    nvml = b.host("this-node").nvml()
    if not nvml["devices"]:
        assert nvml["unavailable"]
    run = forensic("investigate", str(out), "--json", "--no-checkpoint", env_dir=tmp_path)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["status"] in {"confirmed", "probable", "inconclusive", "healthy"} and report["evidence"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--out", "{tmp}/x.tar.gz"], "choose one source"),
        (["--local", "--agent", "a=http://x", "--out", "{tmp}/x.tar.gz"], "choose one source"),
        (["--local", "--out", "{tmp}/exists"], "already exists"),
        (["--local", "--out", "{tmp}/x.zip"], "write a .tar.gz"),
        (["--local", "--out", "{tmp}/nope/x.tar.gz"], "no such folder"),
        (["--local", "--since", "yesterday", "--out", "{tmp}/x.tar.gz"], "expected a duration"),
        (["--agent", "a=http://127.0.0.1:9", "--out", "{tmp}/x.tar.gz"], "needs --token-file"),
        (
            ["--agent", "noequals", "--token-file", "{tmp}/token", "--out", "{tmp}/x.tar.gz"],
            "expected NAME=http",
        ),
        (
            ["--agent", "../x=http://127.0.0.1:9", "--token-file", "{tmp}/token", "--out", "{tmp}/x.tar.gz"],
            "not a valid host name",
        ),
        (["--local", "--job-dir", "{tmp}/nojob", "--out", "{tmp}/x.tar.gz"], "not a folder"),
        (["--local", "--topology", "{tmp}/token", "--out", "{tmp}/x.tar.gz"], "not a usable topology.json"),
        (["--fleet", "{tmp}/fleet.toml", "--job", "j", "--out", "{tmp}/x.tar.gz"], "no such fleet file"),
        (["--fleet", "{tmp}/token", "--out", "{tmp}/x.tar.gz"], "--fleet needs --job"),
    ],
)
def test_bad_collect_input_is_one_line_and_exit_2(args, message, tmp_path: Path, token_file: Path) -> None:
    (tmp_path / "exists").mkdir()
    out = forensic("collect", *[a.replace("{tmp}", str(tmp_path)) for a in args], env_dir=tmp_path)
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert message in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x.tar.gz").exists() and not list(tmp_path.glob(".forensic-collect-*"))


def test_parse_since() -> None:
    assert parse_since("2h") == 7200 and parse_since("90") == 90 and parse_since("1.5d") == 129600
    for bad in ("", "-1h", "0", "2w", "h"):
        with pytest.raises(CollectError):
            parse_since(bad)


def test_an_archive_of_cases_can_be_evaluated(tmp_path: Path) -> None:
    cases = Path(__file__).resolve().parents[2] / "evals" / "examples"
    arch = tmp_path / "cases.tar.gz"
    with tarfile.open(arch, "w:gz") as tf:
        for name in ("healthy-control", "pcie-x8-mfu-drop"):
            tf.add(cases / name, arcname=f"cases/{name}")
    out = forensic("eval", str(arch), "--json", "--no-baselines", env_dir=tmp_path)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert len(result["cases"]) == 2
    assert shutil.which("true")  # sanity: PATH is usable in the subprocess env


def test_collect_from_a_live_fleet_then_investigate_gives_the_replay_verdict(tmp_path: Path) -> None:
    import os

    from forensic.evals.fleet_rig import FleetRig, prometheus_binaries

    if prometheus_binaries() is None:
        if os.environ.get("CI") == "true":
            pytest.fail("prometheus/promtool missing in CI (apt-get install prometheus)")
        pytest.skip("prometheus not installed")
    case = Path(__file__).resolve().parents[2] / "evals" / "examples" / "pcie-x8-mfu-drop"
    want = verdict(case, tmp_path)
    out = tmp_path / "fleet.tar.gz"
    with FleetRig(case / "bundle", tmp_path / "rig") as rig:
        done = forensic("collect", *rig.investigate_args(), "--out", str(out), env_dir=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "FAILED" not in done.stderr
    b = Bundle(out)
    assert b.fs.list("metrics") and b.fs.exists("job/steps.csv") and b.topology is not None
    first = b.host_names()[0]
    assert b.fs.is_dir(f"nodes/{first}/before")  # replay agents serve the window-start snapshot
    got = verdict(out, tmp_path)
    assert (got["root_cause"], got["component"]) == (want["root_cause"], want["component"])
