"""The playbooks are the vocabulary: tools declare their signals, the loader checks every playbook
against them, and a new failure class is one new file that reaches the verdict."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from forensic.harness.failure_graph import PLAYBOOK_DIR, default_graph, load_failure_graph
from forensic.harness.models import Verdict
from forensic.sandbox import PlaybookError
from forensic.tools import all_tools
from pydantic import ValidationError

from tests import cli

ROOT = Path(__file__).resolve().parents[2]
HEALTHY = ROOT / "evals" / "examples" / "healthy-control"

# A new failure class, using signals that existing tools emit: correctable PCIe errors on a GPU's
# link that kept its width and speed (no shipped root cause blames pcie_aer on its own).
PCIE_BUS_ERRORS = """id = "pcie_bus_errors"
title = "A GPU's PCIe link keeps logging AER errors without training down"
kinds = ["gpu"]
mechanisms = ["link_errors"]
prior = 0.02

[[tests]]
tool = "kernel_log"
signal = "pcie_aer"
weight = 8.0

[[tests]]
tool = "pcie_link"
signal = "pcie_degraded"
weight = -3.0

[confirm]
require = [["pcie_aer"]]

[[remediation]]
action = "open_ticket"
target = "{component}"
risk = "low"
reason = "Inspect the slot and riser of {component}: its PCIe link keeps logging AER errors"
blast_radius = "None"
rollback = "Close the ticket"
"""


def _playbooks(tmp_path: Path) -> Path:
    pb = tmp_path / "pb"
    shutil.copytree(PLAYBOOK_DIR, pb, ignore=shutil.ignore_patterns("__init__.py", "__pycache__"))
    return pb


def test_every_tool_declares_what_it_emits_and_the_cli_shows_it() -> None:
    tools = all_tools()
    assert all(isinstance(t.emits, frozenset) and t.emits for t in tools.values())
    out = subprocess.run(
        [sys.executable, "-m", "forensic.harness.cli", "tools", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    listed = {s["name"]: set(s["emits"]) for s in json.loads(out.stdout)}
    assert listed == {n: set(t.emits) for n, t in tools.items()}


def test_every_signal_the_shipped_playbooks_test_is_emitted_by_its_tool() -> None:
    tools = all_tools()
    for rc in default_graph().root_causes.values():
        for t in rc.tests:
            assert t.signal in tools[t.tool].emits, (rc.id, t.tool, t.signal)


# (what the new file gets wrong, the error it must give: the file's line and what is wrong)
REFUSED = {
    "signal no tool emits": (
        ('signal = "pcie_aer"', 'signal = "pcie_gremlins"'),
        r":9: test of pcie_bus_errors waits for signal 'pcie_gremlins', which tool 'kernel_log' never emits \(no tool",
    ),
    "signal of another tool": (
        ('signal = "pcie_aer"', 'signal = "pcie_degraded"'),
        r":9: .*'pcie_degraded', which tool 'kernel_log' never emits \(emitted by pcie_link\)",
    ),
    "unknown tool": (
        ('tool = "pcie_link"', 'tool = "oscilloscope"'),
        r":13: .*unknown tool 'oscilloscope'; known: error_counters, fabric, ",
    ),
    "confirmation on a signal no tool emits": (
        ('require = [["pcie_aer"]]', 'require = [["pcie_aer", "aer_storm"]]'),
        r":18: confirmation rule of pcie_bus_errors needs signal 'aer_storm'",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_playbook_outside_the_tools_vocabulary_is_refused_with_file_and_line(
    case: str, tmp_path: Path
) -> None:
    (old, new), message = REFUSED[case]
    pb = _playbooks(tmp_path)
    path = pb / "root_causes" / "pcie_bus_errors.toml"
    path.write_text(PCIE_BUS_ERRORS.replace(old, new))
    with pytest.raises(PlaybookError) as exc:
        load_failure_graph(pb)
    assert str(exc.value).startswith(f"{path}:") and re.search(message, str(exc.value)), str(exc.value)


def test_a_graph_node_listing_a_signal_no_tool_emits_is_refused(tmp_path: Path) -> None:
    pb = _playbooks(tmp_path)
    text = (pb / "graph.toml").read_text()
    (pb / "graph.toml").write_text(
        text.replace('signals = ["replica_divergence"]', 'signals = ["replica_divergence", "loss_spike"]')
    )
    line = next(i for i, s in enumerate(text.splitlines(), 1) if s.startswith("[symptoms.loss_anomaly]")) + 2
    with pytest.raises(PlaybookError, match=rf"graph\.toml:{line}: symptoms\.loss_anomaly .*'loss_spike'"):
        load_failure_graph(pb)


def test_the_verdict_vocabulary_is_the_loaded_graph() -> None:
    known = default_graph().root_causes
    assert Verdict.model_validate(
        {"root_cause": "pcie_downtrain", "component": "h/gpu0", "confidence": 0.9},
        context={"root_causes": known},
    )
    with pytest.raises(ValidationError, match="unknown root cause 'fan_failure'"):
        Verdict.model_validate(
            {"root_cause": "fan_failure", "component": "h/gpu0", "confidence": 0.9},
            context={"root_causes": known},
        )
    # a class from another playbook folder is a valid verdict where that graph is loaded
    assert Verdict.model_validate(
        {"root_cause": "fan_failure", "component": "h/gpu0", "confidence": 0.9},
        context={"root_causes": {**known, "fan_failure": None}},
    )


def _with_aer_errors(tmp_path: Path) -> tuple[Path, str]:
    """The healthy example with correctable AER errors on one GPU's link during the window."""
    case = tmp_path / "case"
    shutil.copytree(HEALTHY, case)
    host = "node-r04-s01"
    dmesg = case / "bundle" / "nodes" / host / "cmd" / "dmesg.txt"
    bdf = "0000:3a:00.0"
    lines = []
    for stamp in ("Wed Jan 14 00:52:10 2026", "Wed Jan 14 01:05:41 2026", "Wed Jan 14 01:20:03 2026"):
        lines += [
            f"[{stamp}] pcieport 0000:39:00.0: AER: Multiple Correctable error message received from {bdf}",
            f"[{stamp}] nvidia {bdf}: PCIe Bus Error: severity=Correctable, type=Physical Layer, (Receiver ID)",
            f"[{stamp}] nvidia {bdf}:   device [10de:2330] error status/mask=00000001/0000e000",
            f"[{stamp}] nvidia {bdf}:    [ 0] RxErr                  (First)",
        ]
    dmesg.write_text(dmesg.read_text() + "\n".join(lines) + "\n")
    return case, host


def _investigate(*args: str, state: Path) -> subprocess.CompletedProcess:
    return cli.forensic("investigate", *args, "--json", "--no-checkpoint", state=state)


def test_a_new_failure_class_is_one_new_file_and_reaches_the_verdict(tmp_path: Path) -> None:
    case, host = _with_aer_errors(tmp_path)
    pb = _playbooks(tmp_path)
    (pb / "root_causes" / "pcie_bus_errors.toml").write_text(PCIE_BUS_ERRORS)

    out = _investigate(str(case / "bundle"), "--playbooks", str(pb), state=tmp_path)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["verdict"]["root_cause"] == "pcie_bus_errors", report["verdict"]
    assert report["verdict"]["component"].startswith(f"{host}/gpu"), report["verdict"]
    assert report["status"] == "confirmed"
    aer = [
        e
        for e in report["evidence"]
        if e["tool"] == "kernel_log"
        and any(
            s["name"] == "pcie_aer" and s["component"] == report["verdict"]["component"] for s in e["signals"]
        )
    ]
    assert aer and all(f["evidence"] for f in report["findings"])
    assert any(
        p["action"] == "open_ticket" and p["target"] == report["verdict"]["component"]
        for p in report["proposals"]
    )

    # The same bundle with the shipped playbooks: no class for it, so no such verdict.
    shipped = json.loads(_investigate(str(case / "bundle"), state=tmp_path).stdout)
    assert shipped["verdict"]["root_cause"] != "pcie_bus_errors"


def test_eval_takes_another_playbook_folder(tmp_path: Path) -> None:
    case, host = _with_aer_errors(tmp_path)
    truth = case / "truth.json"
    pb = _playbooks(tmp_path)
    (pb / "root_causes" / "pcie_bus_errors.toml").write_text(PCIE_BUS_ERRORS)
    first = json.loads(_investigate(str(case / "bundle"), "--playbooks", str(pb), state=tmp_path).stdout)[
        "verdict"
    ]
    truth.write_text(json.dumps({"root_cause": "pcie_bus_errors", "component": first["component"]}))
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "forensic.harness.cli",
            "eval",
            str(case),
            "--json",
            "--no-baselines",
            "--playbooks",
            str(pb),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["summary"]["exact_accuracy"] == 1.0


def test_a_bad_playbook_folder_is_exit_2_with_one_line(tmp_path: Path) -> None:
    pb = _playbooks(tmp_path)
    (pb / "root_causes" / "pcie_bus_errors.toml").write_text(
        PCIE_BUS_ERRORS.replace('"pcie_aer"', '"pcie_gremlins"')
    )
    out = _investigate(str(HEALTHY / "bundle"), "--playbooks", str(pb), state=tmp_path)
    assert out.returncode == 2
    assert (
        out.stderr.count("\n") == 1
        and "pcie_bus_errors.toml:9:" in out.stderr
        and "Traceback" not in out.stderr
    )
