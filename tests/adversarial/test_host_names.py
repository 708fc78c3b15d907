"""Host names of any valid length are read, evidence that cannot be read
is named and never taken for health, and no name check lets a trailing newline through.

- Item 1: a faulty host whose name is a valid DNS name longer than 64 characters (76, and 251)
  gets the verdict it gets under its short name (``test_a_long_host_name_gets_the_short_names_verdict``),
  and the one validator accepts exactly the hostname grammar (``test_the_one_host_name_check``).
- Item 1, the rule behind it: a host whose name is truly invalid (``..``, a space) makes the run
  inconclusive and is named (``test_a_refused_host_is_named_and_never_healthy``); so does a file
  that cannot be parsed on a host of a healthy fleet
  (``test_an_unreadable_file_makes_a_healthy_fleet_inconclusive``); the tools that used to skip
  an unreadable file without a word name it (``test_tools_name_what_they_could_not_read``); a
  fleet whose Prometheus labels name an invalid host says so (``test_a_fleet_names_hosts_it_refused``).
- Item 17: every name check refuses ``"name\\n"`` (``test_a_trailing_newline_is_refused``).
"""

from __future__ import annotations

import gzip
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from forensic.harness.graph import Investigator
from langgraph.checkpoint.memory import InMemorySaver

ROOT = Path(__file__).resolve().parents[2]
HBM = ROOT / "evals" / "examples" / "hbm-dbe-crash"
FAULTY = "gpu1510.dc2.internal"
LONG = "gpu1510.rack12.row03.datacenter-frankfurt-2.production.example-corp.internal"
# 251 characters: four labels of 63 (the most a label may have), the last one cut short.
LONGEST = ".".join(
    ["gpu1510-" + "r" * 55, "row03-" + "a" * 57, "datacenter-" + "f" * 52, "example-corp-" + "i" * 46]
)


def _renamed(tmp_path: Path, new: str) -> Path:
    """The hbm-dbe-crash case with its faulty host renamed: its node folder and every mention in the
    files (gzip members too). Log file names keep the short name: a file name has at most 255 bytes."""
    out = tmp_path / "case"
    for p in sorted(HBM.rglob("*")):
        q = out.joinpath(*(new if part == FAULTY else part for part in p.relative_to(HBM).parts))
        if p.is_dir():
            q.mkdir(parents=True, exist_ok=True)
            continue
        q.parent.mkdir(parents=True, exist_ok=True)
        data = p.read_bytes()
        if p.suffix == ".gz":
            q.write_bytes(gzip.compress(gzip.decompress(data).replace(FAULTY.encode(), new.encode())))
        else:
            q.write_bytes(data.replace(FAULTY.encode(), new.encode()))
    return out


def _investigate(where: Any) -> dict:
    return Investigator(where, checkpointer=InMemorySaver()).run()


def test_the_names_of_this_test_are_what_they_claim() -> None:
    assert len(LONG) == 76 and len(LONGEST) == 251 and all(len(label) <= 63 for label in LONGEST.split("."))


@pytest.mark.parametrize("name", [LONG, LONGEST], ids=["76-chars", "251-chars"])
def test_a_long_host_name_gets_the_short_names_verdict(tmp_path: Path, name: str) -> None:
    short = _investigate(HBM)
    long = _investigate(_renamed(tmp_path, name))
    assert short["status"] == "confirmed" and short["verdict"]["component"] == f"{FAULTY}/gpu5"
    assert long["status"] == short["status"]
    assert long["verdict"] == {**short["verdict"], "component": f"{name}/gpu5"}
    assert long["unread"] == [] and [p["target"].replace(name, FAULTY) for p in long["proposals"]] == [
        p["target"] for p in short["proposals"]
    ]


@pytest.mark.parametrize("name", ["gpu1510..dc2.internal", "gpu1510 dc2.internal", "-gpu1510.dc2.internal"])
def test_a_refused_host_is_named_and_never_healthy(tmp_path: Path, name: str) -> None:
    report = _investigate(_renamed(tmp_path, name))
    assert report["status"] == "inconclusive"
    assert report["verdict"]["root_cause"] != "healthy" and report["leading"]
    assert report["unread"][0].startswith(f"host {name}: not a valid host name (ev-")
    assert any(n.startswith("could not read") and name in n for n in report["notes"])


def test_an_unreadable_file_makes_a_healthy_fleet_inconclusive(make_bundle) -> None:
    healthy = make_bundle(None)
    assert _investigate(healthy)["status"] == "healthy"
    (healthy / "nodes" / "node-b.example" / "nvml.json").write_text('{"devices": [')  # cut off mid-write
    report = _investigate(healthy)
    assert report["status"] == "inconclusive"
    assert report["unread"] and all("node-b.example" in u and "nvml.json" in u for u in report["unread"])
    assert any("could not read" in n and "node-b.example" in n for n in report["notes"])
    # The calls that met it say so in their own records, too.
    assert any(e["unread"] for e in report["evidence"] if e["tool"] == "gpu_health")


@pytest.mark.parametrize(
    ("tool", "rel"),
    [
        ("host_load", "nodes/node-b.example/cmd/top.txt"),
        ("nic_counters", "nodes/node-b.example/cmd/ethtool-S-ibp1s0.txt"),
        ("nic_fec", "nodes/node-b.example/cmd/ethtool-I-show-fec-ibp1s0.txt"),
        ("fabric", "switches/leaf-1/cmd/show-pfcwd-stats.txt"),
    ],
)
def test_tools_name_what_they_could_not_read(tmp_path: Path, tool: str, rel: str) -> None:
    import os

    from forensic.sandbox import Bundle
    from forensic.sandbox.memory import MemorySource
    from forensic.tools.base import ToolContext, get_tool

    from tests.conftest import build_fabric_bundle

    root = build_fabric_bundle(tmp_path / "b")
    (root / rel).unlink(missing_ok=True)
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(root / rel)  # there, but never read (not a regular file)
    for source in (
        Bundle(root),
        MemorySource.from_bundle(Bundle(root)),
    ):  # read now, or loaded into memory first
        result = get_tool(tool)(ToolContext(source), {})
        assert result.status != "no_data"
        assert (
            len(result.unread) == 1 and rel in result.unread[0] and "not a regular file" in result.unread[0]
        )


def test_the_one_host_name_check() -> None:
    from forensic.names import HOST_NAME_MAX, is_host_name

    good = [
        "a",
        "node-a.example",
        "gpu_a017",
        "1.2.3.4",
        "x" * 63,
        LONG,
        LONGEST,
        ".".join(["y" * 63] * 3) + "." + "z" * 61,
    ]
    bad = [
        "",
        "x" * 64,
        ".".join(["y" * 63] * 4),
        "a..b",
        "../etc",
        "a/b",
        "a b",
        "a\x00b",
        "a\tb",
        "-a",
        "a-",
        "a.-b",
        ".a",
        "a.",
        "a\n",
        "a\r",
        "a\x1b[31m",
        "gpu1.dc2:9401",
        None,
        7,
    ]
    assert all(is_host_name(n) for n in good)
    assert not any(is_host_name(n) for n in bad)
    assert len(good[-1]) == HOST_NAME_MAX


def test_a_fleet_names_hosts_it_refused(tmp_path: Path) -> None:
    import numpy as np
    from forensic.sandbox import MetricRead
    from forensic.sandbox.fleet import FleetSource, load_fleet
    from forensic.tools.parsers.openmetrics import Series

    class Labels:
        """A Prometheus double: DCGM temperature series for two hosts, one label a path."""

        def series(
            self, name: str, labels: Any = None, start: float | None = None, end: float | None = None
        ) -> MetricRead:
            ts, vs = np.array([1.0]), np.array([60.0])
            return MetricRead(
                series=[
                    Series(
                        name=name, family=name, labels={"Hostname": h, "gpu": "0"}, timestamps=ts, values=vs
                    )
                    for h in ("gpu1.dc2.internal", "../../etc/passwd")
                ]
            )

    (tmp_path / "token").write_text("a-token-of-some-length\n")
    (tmp_path / "fleet.toml").write_text(
        '[agents]\nurl_template = "http://127.0.0.1:9/{host}"\ntoken_file = "token"\n'
        '[topology]\nprometheus_label = "Hostname"\n'
    )
    src = FleetSource(load_fleet(tmp_path / "fleet.toml"), job="train", start=0.0, end=10.0, metrics=Labels())
    assert src.host_names() == ["gpu1.dc2.internal"]
    assert list(src.unreadable_hosts()) == ["../../etc/passwd"]


def _checks(tmp: Path) -> dict[str, Callable[[str], object]]:
    """Every name check, as a call that raises for a name it refuses and returns for one it accepts."""
    from forensic.harness.collect import collect_bundle
    from forensic.harness.executors.config import NodeMap
    from forensic.harness.executors.slurm import SlurmConfig, SlurmExecutor
    from forensic.sandbox import (
        ConfinedFS,
        NotFoundError,
        ReplayHost,
        ReplaySwitch,
        command_file,
    )
    from forensic.sandbox.fleet import (
        AgentsConfig,
        FleetConfig,
        FleetSource,
        load_fleet,
    )
    from forensic.sandbox.host import HOST_COMMANDS
    from forensic.sandbox.prometheus import selector
    from forensic.tools.base import HostScope

    from forensic.record import StepRecorder

    fs = ConfinedFS(HBM / "bundle")
    (tmp / "token").write_text("a-token-of-some-length\n")
    (tmp / "fleet.toml").write_text(
        '[agents]\nurl_template = "http://127.0.0.1:9/{host}"\ntoken_file = "token"\n'
    )
    agents = {"url_template": "http://{host}:9401", "token_file": "token"}

    class Bare:
        """A host with nothing recorded: collect gets past the name check and writes an empty folder."""

        name = "bare"

        def _none(self, *_: object) -> str:
            raise NotFoundError("nothing here")

        read = list = run = _none

        def exists(self, path: str) -> bool:
            return False

        def nvml(self) -> None:
            return None

    def collect(name: str) -> object:
        out = tmp / "out"
        shutil.rmtree(out, ignore_errors=True)
        return collect_bundle([(name, Bare())], out, incident={})  # type: ignore[list-item]

    return {
        "replay host": lambda n: ReplayHost(fs, n),
        "replay switch": lambda n: ReplaySwitch(fs, n),
        "ethtool -S netdev": lambda n: command_file(["ethtool", "-S", n], HOST_COMMANDS),
        "ethtool --show-fec netdev": lambda n: command_file(
            ["ethtool", "-I", "--show-fec", n], HOST_COMMANDS
        ),
        "tool host argument": lambda n: HostScope(host=n),
        "prometheus metric name": lambda n: selector(n),
        "prometheus label name": lambda n: selector("up", {n: "x"}),
        "slurm reason": lambda n: SlurmExecutor(SlurmConfig(nodes={"h": "h"})).plan(
            "drain_node", "h", reason=n, context={}
        ),
        "executor node name": lambda n: NodeMap(nodes={"h": n}),
        "executor node pattern": lambda n: NodeMap(node_pattern=n).node_for("h"),
        "step recorder host": lambda n: StepRecorder(tmp / "steps", host=n),
        "fleet agent host": lambda n: FleetConfig(agents=AgentsConfig(hosts=[n], **agents)),
        "fleet job": lambda n: FleetSource(load_fleet(tmp / "fleet.toml"), job=n, start=0.0, end=1.0),
        "collect host": collect,
    }


CHECKS = [
    "collect host",
    "ethtool --show-fec netdev",
    "ethtool -S netdev",
    "executor node name",
    "executor node pattern",
    "fleet agent host",
    "fleet job",
    "prometheus label name",
    "prometheus metric name",
    "replay host",
    "replay switch",
    "slurm reason",
    "step recorder host",
    "tool host argument",
]


@pytest.mark.parametrize("check", CHECKS)
def test_a_trailing_newline_is_refused(tmp_path: Path, check: str) -> None:
    checks = _checks(tmp_path)
    assert sorted(checks) == CHECKS
    accept_or_raise = checks[check]
    name = {
        "prometheus metric name": "up",
        "prometheus label name": "job",
        "slurm reason": "forensic drain",
        "ethtool -S netdev": "eth0",
        "ethtool --show-fec netdev": "eth0",
    }.get(check, "gpu1.dc2")
    accept_or_raise(name)  # the name itself passes
    with pytest.raises(Exception):  # noqa: B017 - each check raises its own error class
        accept_or_raise(name + "\n")


def test_a_host_with_no_node_data_is_absence_not_unread(make_bundle) -> None:
    """A host the topology lists but the bundle recorded nothing for (a spare, a host outside the
    collection) is not evidence that could not be read: a healthy fleet stays healthy, and every
    tool that met it says nothing of it in ``unread``."""
    import json as _json
    import shutil

    from forensic.harness.graph import Investigator

    from tests.conftest import HOSTS as UNIT_HOSTS

    root = make_bundle(None)
    shutil.rmtree(root / "nodes" / "spare-c.example")
    report = Investigator(root).run()
    assert report["status"] == "healthy", (report["status"], report.get("unread"), report["notes"])
    assert not report.get("unread")
    topo = _json.loads((root / "topology.json").read_text())
    assert "spare-c.example" in {h["name"] for h in topo["hosts"]} and "spare-c.example" not in UNIT_HOSTS
