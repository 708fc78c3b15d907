"""The on-call terminal: approve commands for every proposal, refusals on stderr, comments on the
record, honest inconclusive headlines, resume with a larger budget, list and show, reuse."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

from forensic.harness.graph import Investigator
from forensic.harness.render import headline, render_report
from rich.console import Console

EXAMPLES = Path(__file__).resolve().parents[3] / "evals" / "examples"


def forensic(*args: str, env_dir: Path, columns: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "forensic.harness.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={
            "FORENSIC_STATE_DIR": str(env_dir),
            "PATH": "/usr/bin:/bin",
            "HOME": str(env_dir),
            "COLUMNS": str(columns),
        },
    )


def _investigated(bundle: Path, tmp_path: Path, thread: str, *extra: str) -> dict:
    out = forensic("investigate", str(bundle), "--json", "--thread", thread, *extra, env_dir=tmp_path)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_the_readable_report_prints_every_approve_command_with_blast_radius_and_rollback(
    tmp_path: Path,
) -> None:
    bundle = EXAMPLES / "thermal-throttle-straggler"
    out = forensic("investigate", str(bundle), "--thread", "t-read", env_dir=tmp_path, columns=80)
    assert out.returncode == 0, out.stderr
    report = json.loads(forensic("show", "t-read", "--json", env_dir=tmp_path).stdout)
    assert len(report["proposals"]) >= 2
    text = " ".join(out.stdout.split())
    for p in report["proposals"]:
        # printed unwrapped, so each command is one line, whole
        assert f"forensic approve t-read --approve {p['id']}={p['content_hash']}" in out.stdout.splitlines()
        assert " ".join(p["blast_radius"].split()) in text and " ".join(p["rollback"].split()) in text
    # the verdict comes after the details: the last screen holds it
    assert (
        out.stdout.index("CONFIRMED")
        > out.stdout.index("Proposed remediations")
        > out.stdout.index("Findings")
    )


def test_names_are_never_split_and_continuations_hang(tmp_path: Path) -> None:
    out = forensic(
        "investigate",
        str(EXAMPLES / "thermal-throttle-straggler"),
        "--no-checkpoint",
        env_dir=tmp_path,
        columns=80,
    )
    lines = out.stdout.splitlines()
    host = "gpu1227.dc6.internal"
    for i, line in enumerate(lines[:-1]):
        # a host name never ends one line and continues on the next
        for cut in range(4, len(host)):
            assert not (
                line.rstrip().endswith(host[:cut]) and lines[i + 1].lstrip().startswith(host[cut:])
            ), (line, lines[i + 1])
    claim_cont = [
        ln
        for ln in lines
        if ln.startswith("    ") and not ln.strip().startswith(("-", "rp-", "why", "blast", "rollback"))
    ]
    assert claim_cont, "long findings wrap onto indented continuation lines"
    assert not any(
        ln and not ln[0].isspace() and ln.split()[0].startswith(("1980", "rank", "90")) for ln in lines
    )


def test_a_refused_decision_exits_non_zero_with_the_reason_on_stderr(tmp_path: Path) -> None:
    report = _investigated(EXAMPLES / "pcie-x8-mfu-drop", tmp_path, "t-ref")
    p1 = report["proposals"][0]
    wrong = forensic("approve", "t-ref", "--approve", f"{p1['id']}={'0' * 64}", env_dir=tmp_path)
    assert wrong.returncode == 2
    assert "refused approve rp-1" in wrong.stderr and "hash does not match" in wrong.stderr
    unknown = forensic("approve", "t-ref", "--reject", "rp-99=abc", env_dir=tmp_path)
    assert unknown.returncode == 2 and "no such proposal" in unknown.stderr
    ok = forensic("approve", "t-ref", "--approve", f"{p1['id']}={p1['content_hash']}", env_dir=tmp_path)
    assert ok.returncode == 0 and ok.stderr == ""


def test_the_comment_is_recorded_in_the_audit_log(tmp_path: Path) -> None:
    report = _investigated(EXAMPLES / "pcie-x8-mfu-drop", tmp_path, "t-com")
    p = report["proposals"][1]
    out = forensic(
        "approve",
        "t-com",
        "--reject",
        f"{p['id']}={p['content_hash']}",
        "--comment",
        "ticket FAC-12 already open",
        env_dir=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    audit = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert audit[-1]["outcome"] == "rejected" and audit[-1]["comment"] == "ticket FAC-12 already open"


def test_an_exhausted_budget_never_reads_healthy(tmp_path: Path) -> None:
    bundle = EXAMPLES / "thermal-throttle-straggler"
    report = _investigated(bundle, tmp_path, "t-inc", "--budget-tool-calls", "1")
    assert report["status"] == "inconclusive"
    assert report["leading"] and all(v["root_cause"] != "healthy" for v in report["leading"])
    assert any(u.startswith("gpu_health") for u in report["untested"])
    head = headline(report)
    assert (
        head.startswith("INCONCLUSIVE")
        and "healthy" not in head
        and report["leading"][0]["root_cause"] in head
    )
    out = forensic("show", "t-inc", env_dir=tmp_path, columns=100)
    box = out.stdout[out.stdout.index("INCONCLUSIVE") :]
    assert "healthy" not in box.split("Leading")[0] and "Not tested" in box and "Leading" in box
    # nothing tested at all: still not healthy
    zero = _investigated(bundle, tmp_path, "t-zero", "--budget-tool-calls", "0")
    assert zero["status"] == "inconclusive" and "healthy" not in headline(zero)


def test_resume_with_a_larger_budget_continues_and_with_the_same_says_why_not(tmp_path: Path) -> None:
    bundle = EXAMPLES / "thermal-throttle-straggler"
    first = _investigated(bundle, tmp_path, "t-res", "--budget-tool-calls", "1")
    assert first["status"] == "inconclusive" and first["budget"]["tool_calls"] == 1
    same = forensic(
        "investigate",
        str(bundle),
        "--json",
        "--resume",
        "t-res",
        "--budget-tool-calls",
        "1",
        env_dir=tmp_path,
    )
    assert same.returncode == 0 and "not continued" in same.stderr and "--budget-tool-calls" in same.stderr
    assert json.loads(same.stdout)["status"] == "inconclusive"
    more = forensic(
        "investigate",
        str(bundle),
        "--json",
        "--resume",
        "t-res",
        "--budget-tool-calls",
        "10",
        env_dir=tmp_path,
    )
    assert more.returncode == 0, more.stderr
    done = json.loads(more.stdout)
    assert done["status"] == "confirmed" and done["verdict"]["root_cause"] == "thermal_throttle"
    assert done["budget"]["tool_calls"] > 1 and done["budget"]["tool_calls_limit"] == 10
    assert [e["id"] for e in done["evidence"]][:1] == ["ev-1"] and len(done["evidence"]) == done["budget"][
        "tool_calls"
    ]


def test_resume_of_a_finished_thread_says_a_larger_budget_changes_nothing() -> None:
    from forensic.harness.budget import Limits
    from langgraph.checkpoint.memory import InMemorySaver

    saver = InMemorySaver()
    bundle = EXAMPLES / "healthy-control"
    Investigator(bundle, checkpointer=saver).run(thread_id="t")
    again = Investigator(bundle, checkpointer=saver, limits=Limits(tool_calls=80)).resume("t")
    assert any(n.startswith("not continued: the investigation had finished") for n in again["notes"])


def test_list_and_show(tmp_path: Path) -> None:
    empty = forensic("list", env_dir=tmp_path)
    assert empty.returncode == 0 and "no investigations" in empty.stdout
    _investigated(EXAMPLES / "pcie-x8-mfu-drop", tmp_path, "t-a")
    _investigated(EXAMPLES / "healthy-control", tmp_path, "t-b")
    rows = {r["thread"]: r for r in json.loads(forensic("list", "--json", env_dir=tmp_path).stdout)}
    assert rows["t-a"]["state"] == "waiting" and rows["t-a"]["pending"] == 2
    assert (
        rows["t-a"]["verdict"] == "pcie_downtrain on gpu-e126/gpu0" and rows["t-a"]["status"] == "confirmed"
    )
    assert (
        rows["t-b"]["state"] == "done" and rows["t-b"]["pending"] == 0 and rows["t-b"]["verdict"] == "healthy"
    )
    table = forensic("list", env_dir=tmp_path).stdout
    assert "t-a" in table and "waiting" in table and "pcie_downtrain" in table
    assert rows["t-a"]["title"].startswith("MFU down") and "updated" in table and "title" in table
    shown = forensic("show", "t-a", env_dir=tmp_path)
    assert (
        shown.returncode == 0
        and "CONFIRMED" in shown.stdout
        and shown.stdout.count("forensic approve t-a --approve") == 2
    )
    healthy = forensic("show", "t-b", env_dir=tmp_path)
    assert "HEALTHY" in healthy.stdout and "forensic approve" not in healthy.stdout
    missing = forensic("show", "nope", env_dir=tmp_path)
    assert missing.returncode == 2 and "nope" in missing.stderr and "Traceback" not in missing.stderr


def test_a_rerun_offers_the_waiting_thread(tmp_path: Path) -> None:
    bundle = EXAMPLES / "pcie-x8-mfu-drop"
    _investigated(bundle, tmp_path, "t-first")
    piped = forensic("investigate", str(bundle), "--json", env_dir=tmp_path)
    assert piped.returncode == 0 and "t-first" in piped.stderr and "--reuse" in piped.stderr
    assert json.loads(piped.stdout)["thread"] != "t-first"
    reused = forensic("investigate", str(bundle), "--json", "--reuse", env_dir=tmp_path)
    assert json.loads(reused.stdout)["thread"] in ("t-first", json.loads(piped.stdout)["thread"])
    threads = json.loads(forensic("list", "--json", env_dir=tmp_path).stdout)
    assert len(threads) == 2  # the reuse added none
    new = forensic("investigate", str(bundle), "--json", "--new", env_dir=tmp_path)
    assert new.stderr == "" and len(json.loads(forensic("list", "--json", env_dir=tmp_path).stdout)) == 3


def test_progress_shows_each_tool_call_and_is_quiet_when_piped(tmp_path: Path) -> None:
    from forensic.harness.cli._progress import Progress

    buf = io.StringIO()
    con = Console(file=buf, force_terminal=True, width=100)
    progress = Progress(con)
    report = Investigator(EXAMPLES / "thermal-throttle-straggler").run(on_step=progress)
    progress.close()
    text = buf.getvalue()
    for e in report["evidence"]:
        assert e["id"] in text and e["tool"] in text
    assert "gpu1227.dc6.internal" in text and "concluded: confirmed" in text
    piped = forensic(
        "investigate", str(EXAMPLES / "thermal-throttle-straggler"), "--no-checkpoint", env_dir=tmp_path
    )
    assert piped.returncode == 0 and piped.stderr == ""


def test_render_is_a_view_of_the_json(tmp_path: Path) -> None:
    report = Investigator(EXAMPLES / "hbm-dbe-crash").run()
    buf = io.StringIO()
    render_report(report, Console(file=buf, width=120), thread="t-x")
    text = buf.getvalue()
    assert headline(report) in text
    for f in report["findings"]:
        assert f["evidence"][0] in text
