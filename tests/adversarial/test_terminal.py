"""Terminal escapes from bundle text never reach a person's terminal.

Item 3: a bundle whose title, job name, host names and log lines carry an OSC window title, an
OSC 52 clipboard write, CSI clear-screen and cursor-up-and-erase sequences, an 8-bit CSI and a
right-to-left override. Every command that prints it (investigate piped and on a terminal,
``--json``, list, show, approve, execute, chat --plain, error lines) prints none of those
characters raw; they show as visible ``\\uXXXX`` escapes, the approve commands stay whole lines,
the JSON documents still parse to the original strings, and rich markup in the data is printed
as text, not obeyed.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from forensic.harness.cli._terminal import SafeStream, clean_text, terminal_safe
from forensic.harness.render import approve_commands

from tests import cli
from tests.conftest import build_bundle

#: Every hostile sequence the adversarial run used, together in one string.
HOSTILE = "\x1b]0;pwned\x07 \x1b]52;c;ZWNobyBoaQ==\x07 \x1b[2J \x1b[1A\x1b[2K \x9b31m \u202e [red]x[/] [link=https://e.example]y[/link]"
TITLE = "MFU dropped " + HOSTILE
#: The same in a host name (a file name under nodes/: no slash).
HOST_HOSTILE = "\x1b]0;pwned\x07\x1b]52;c;ZWNobyBoaQ==\x07\x1b[2J\x1b[1A\x1b[2K\x9b31m\u202e[red]x"
#: What a terminal must never receive raw: C0 but newline and tab, DEL, C1, bidi overrides.
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def forensic(*args: str, state: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    return cli.forensic(*args, state=state, stdin=stdin, env={"COLUMNS": "100", "LANG": "C.UTF-8"})


def _rename_host(root: Path, old: str, new: str) -> None:
    topo = json.loads((root / "topology.json").read_text())
    for h in topo["hosts"]:
        h["name"] = new if h["name"] == old else h["name"]
    for r in topo["ranks"]:
        r["host"] = new if r["host"] == old else r["host"]
    (root / "topology.json").write_text(json.dumps(topo))
    (root / "nodes" / old).rename(root / "nodes" / new)


def hostile_bundle(root: Path, *, culprit_name: str | None = None) -> Path:
    """The unit bundle (a PCIe downtrain on node-b) with hostile text wherever a bundle has text."""
    build_bundle(root, "pcie_downtrain")
    inc = json.loads((root / "incident.json").read_text())
    inc["title"] = TITLE
    inc["job"]["name"] = "unit" + HOSTILE
    (root / "incident.json").write_text(json.dumps(inc))
    with (root / "nodes" / "node-b.example" / "cmd" / "dmesg.txt").open("a") as f:
        f.write(
            f"[  99.000000] NVRM: Xid (PCI:0000:18:00): 13, pid=1, name=python3{HOSTILE}, Graphics Exception\n"
        )
    _rename_host(root, "spare-c.example", "spare" + HOST_HOSTILE)
    if culprit_name is not None:
        _rename_host(root, "node-b.example", culprit_name)
    return root


def assert_clean(text: str) -> None:
    bad = UNSAFE.search(text)
    assert bad is None, (
        f"raw {bad.group()!r} at {bad.start()}: {text[max(0, bad.start() - 80) : bad.start() + 80]!r}"
    )


@pytest.fixture(scope="module")
def investigated(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, Path, dict, subprocess.CompletedProcess]:
    """(bundle, state dir, JSON report, the readable investigate run) of one hostile investigation."""
    tmp = tmp_path_factory.mktemp("hostile")
    bundle, state = hostile_bundle(tmp / "bundle"), tmp / "state"
    out = forensic("investigate", str(bundle), "--thread", "t-hostile", state=state)
    assert out.returncode == 0, out.stderr
    report = json.loads(forensic("show", "t-hostile", "--json", state=state).stdout)
    return bundle, state, report, out


def test_investigate_piped_prints_no_control_and_whole_approve_lines(investigated) -> None:
    _, _, report, out = investigated
    assert_clean(out.stdout)
    assert_clean(out.stderr)
    assert clean_text(TITLE) in " ".join(out.stdout.split())  # shown, visibly escaped
    assert "[red]x[/] [link=https://e.example]y[/link]" in out.stdout  # markup printed as text
    cmds = approve_commands(report, "t-hostile")
    assert cmds and all(c in out.stdout.splitlines() for c in cmds)


def test_json_keeps_the_original_strings(investigated, tmp_path: Path) -> None:
    bundle, _, report, _ = investigated
    assert report["title"] == TITLE
    out = forensic("investigate", str(bundle), "--json", "--no-checkpoint", state=tmp_path)
    assert out.returncode == 0, out.stderr
    assert_clean(out.stdout)
    assert json.loads(out.stdout)["title"] == TITLE


def test_show_list_and_full_print_no_control(investigated) -> None:
    _, state, report, _ = investigated
    for args in (("show", "t-hostile"), ("show", "t-hostile", "--full"), ("list",)):
        out = forensic(*args, state=state)
        assert out.returncode == 0, out.stderr
        assert_clean(out.stdout + out.stderr)
    shown = forensic("show", "t-hostile", state=state).stdout
    assert all(c in shown.splitlines() for c in approve_commands(report, "t-hostile"))


def test_approve_execute_and_refusals_print_no_control(investigated, tmp_path: Path) -> None:
    _, state, report, _ = investigated
    # a copy of the state: approving here must not change what the other tests read
    mine = tmp_path / "state"
    shutil.copytree(state, mine)
    p1, p2 = report["proposals"][:2]
    out = forensic(
        "approve",
        "t-hostile",
        "--approve",
        f"{p1['id']}={p1['content_hash']}",
        "--comment",
        HOSTILE,
        state=mine,
    )
    assert out.returncode == 0, out.stderr
    assert_clean(out.stdout + out.stderr)
    assert "approved" in out.stdout
    refused = forensic("approve", "t-hostile", "--approve", f"{p2['id']}=bad{HOSTILE}", state=mine)
    assert refused.returncode == 2
    assert_clean(refused.stdout + refused.stderr)
    for args in (
        ("execute", "t-hostile", p2["id"] + HOSTILE),
        ("show", "t" + HOSTILE),
        ("investigate", str(tmp_path / HOSTILE)),
    ):
        out = forensic(*args, state=mine)
        assert out.returncode == 2, out.stdout + out.stderr
        assert len(out.stderr.splitlines()) == 1 and "Traceback" not in out.stderr
        assert_clean(out.stdout + out.stderr)


def test_chat_plain_prints_no_control(tmp_path: Path) -> None:
    bundle = hostile_bundle(tmp_path / "bundle", culprit_name="node-b" + HOST_HOSTILE)
    out = forensic(
        "chat",
        str(bundle),
        "--plain",
        state=tmp_path / "s",
        stdin="what is wrong?\nwhich host?\n/report\n/evidence ev-1\n/approve rp-9\n/nonsense "
        + HOSTILE
        + "\n",
    )
    assert out.returncode == 0, out.stderr
    assert_clean(out.stdout + out.stderr)
    assert (
        "Leading: pcie_downtrain on node-b\\u001b]0;pwned\\u0007" in out.stdout
    )  # the answer names the host, escaped


def test_a_hostile_culprit_host_name_prints_no_control(tmp_path: Path) -> None:
    bundle = hostile_bundle(tmp_path / "bundle", culprit_name="node-b" + HOST_HOSTILE)
    out = forensic(
        "investigate",
        str(bundle),
        "--no-checkpoint",
        "--full",
        "--budget-tool-calls",
        "12",
        state=tmp_path / "s",
    )
    assert out.returncode == 0, out.stderr
    assert_clean(out.stdout + out.stderr)
    assert "\\u001b]0;pwned\\u0007" in out.stdout


def on_a_terminal(*args: str, state: Path, until: str | None = None) -> str:
    """What ``forensic ARGS`` writes to a terminal (a pty for stdin, stdout and stderr), raw; with
    ``until``, the command is stopped (SIGTERM) once that text appeared."""
    pid, fd = pty.fork()
    if pid == 0:  # the child
        os.environ.update(
            {"FORENSIC_STATE_DIR": str(state), "TERM": "xterm-256color", "COLUMNS": "100", "LANG": "C.UTF-8"}
        )
        os.execv(sys.executable, [sys.executable, "-m", "forensic.harness.cli", *args])
    raw = b""
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            raw += chunk
            if until is not None and until.encode() in raw:
                os.kill(pid, signal.SIGTERM)
                until = None
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) in (0, -signal.SIGTERM), raw[-2000:]
    return raw.decode("utf-8", errors="replace")


def test_investigate_on_a_terminal_writes_no_hostile_sequence(tmp_path: Path) -> None:
    """On a TTY rich styles the report (its own escape sequences); the bundle's never pass."""
    text = on_a_terminal(
        "investigate", str(hostile_bundle(tmp_path / "bundle")), "--thread", "t-tty", state=tmp_path / "s"
    )
    assert "\x1b[1m" in text  # styled: this really was a terminal
    for seq in ("\x1b]", "\x07", "\x1b[2J", "\x9b", "\u202e", "\x1b[1A\x1b[2K\u202e"):
        assert seq not in text, seq
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text).replace("\r", "")
    assert "\\u001b]0;pwned\\u0007" in plain
    assert re.search(r"^forensic approve t-tty --approve rp-1=[0-9a-f]{64}$", plain, re.M)


def test_a_real_terminal_keeps_its_title_clipboard_and_approve_lines(tmp_path: Path) -> None:
    """tmux obeys OSC 0 (the pane title) and, with set-clipboard on, OSC 52 (a paste buffer)."""
    from tests.harness.cli.test_tmux import Terminal

    tmux = shutil.which("tmux")
    if tmux is None:
        if os.environ.get("CI") == "true":
            pytest.fail("tmux is not installed (CI=true): apt-get install -y tmux")
        pytest.skip("tmux is not installed")
    bundle = hostile_bundle(tmp_path / "bundle")
    term = Terminal(tmux, tmp_path, 120, 40)
    try:
        term._tmux("set-option", "-g", "set-clipboard", "on")
        title = term._tmux("display-message", "-p", "-t", "t", "#{pane_title}")
        screen = term.run(f"forensic investigate {bundle} --thread t-tmux")
        assert "\\u001b]0;pwned\\u0007" in screen
        report = json.loads(forensic("show", "t-tmux", "--json", state=tmp_path / "state").stdout)
        joined = screen.splitlines()
        assert all(c in joined for c in approve_commands(report, "t-tmux"))
        term.run("forensic show t-tmux --full; forensic list")
        assert term._tmux("display-message", "-p", "-t", "t", "#{pane_title}") == title
        assert "pwned" not in title
        assert term._tmux("list-buffers") == ""  # no OSC 52 clipboard write reached tmux
    finally:
        term.close()


def test_serve_logs_on_a_terminal_are_plain_text(tmp_path: Path) -> None:
    """uvicorn colours its log lines on a terminal; through the cleaner they would read \\u001b[32m."""
    (tmp_path / "t.token").write_text("a-token-that-is-long-enough")
    bundle = build_bundle(tmp_path / "bundle", "pcie_downtrain")
    (tmp_path / "serve.toml").write_text(
        '[[users]]\nname="a"\nrole="viewer"\ntoken_file="t.token"\n'
        f'[[evidence.bundles]]\npath="{bundle}"\njob="unit"\n'
    )
    text = on_a_terminal(
        "serve",
        "--config",
        str(tmp_path / "serve.toml"),
        "--port",
        "0",
        "--log-level",
        "info",
        state=tmp_path,
        until="Uvicorn running",
    )
    assert "INFO" in text and "Uvicorn running" in text
    assert "\\u001b" not in text and "\x1b" not in text


def test_help_on_a_terminal_keeps_its_styling(tmp_path: Path) -> None:
    text = on_a_terminal("--help", state=tmp_path)
    assert "\x1b[" in text and "\\u001b" not in text  # typer's own console writes beneath the cleaner
    assert "investigate" in text


def test_every_console_the_commands_print_with_cleans_its_text() -> None:
    """Rich consoles write beneath the cleaner (their styling is escape sequences): a plain
    rich Console in the code would print bundle text raw, so only SafeConsole is constructed."""
    root = Path(__file__).resolve().parents[2] / "harness"
    direct = [
        f"{p.relative_to(root)}:{n}"
        for p in root.rglob("*.py")
        if p.name != "_terminal.py"
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if re.search(r"\bConsole\(", line)
    ]
    assert direct == []


def test_the_cleaner_keeps_text_and_shows_controls() -> None:
    assert clean_text("a\tb\nc") == "a\tb\nc"
    assert clean_text("\x1b[2J\x9b\u202e\x7f\x00") == "\\u001b[2J\\u009b\\u202e\\u007f\\u0000"
    # inside a JSON string the visible escape is JSON's own: the document still means the same
    doc = json.dumps({"t": "x\x9by\u2066"}, ensure_ascii=False)
    assert json.loads(clean_text(doc)) == {"t": "x\x9by\u2066"}
    assert terminal_safe({"a\x1b": ["x\x00y", 3]}) == {"a\\u001b": ["x\\u0000y", 3]}


def test_the_guarded_stream_has_no_buffer_to_go_round_it() -> None:
    import io

    raw = io.StringIO()
    s = SafeStream(raw)
    s.write("ok\x1b]0;t\x07")
    assert raw.getvalue() == "ok\\u001b]0;t\\u0007"
    assert not hasattr(s, "buffer")
