"""``forensic serve`` config errors and ``forensic bench intake`` (counts, not speed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from forensic.harness.service import ConfigError, load_config

from .conftest import EXAMPLE


def _serve(config: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "forensic.harness.cli", "serve", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def _tok(tmp_path: Path, text: str = "a-token-that-is-long-enough") -> Path:
    p = tmp_path / "t.token"
    p.write_text(text)
    return p


@pytest.mark.parametrize(
    "toml,why",
    [
        (None, "no such config file"),
        ("users = [", "not valid TOML"),
        ("", "users: Field required"),
        (
            '[[users]]\nname="a"\nrole="god"\ntoken_file="t.token"\n[[evidence.bundles]]\npath="x"\njob="j"',
            "users.0.role",
        ),
        ('[[users]]\nname="a"\nrole="viewer"\ntoken_file="t.token"', "name an evidence source"),
        (
            '[[users]]\nname="a"\nrole="viewer"\ntoken_file="t.token"\n[[evidence.bundles]]\npath="x"',
            "name a job or hosts",
        ),
        (
            '[[users]]\nname="a"\nrole="viewer"\ntoken_file="missing.token"\n[[evidence.bundles]]\npath="x"\njob="j"',
            "unreadable",
        ),
        (
            '[[users]]\nname="a"\nrole="viewer"\ntoken_file="short.token"\n[[evidence.bundles]]\npath="x"\njob="j"',
            "shorter than 16",
        ),
        (
            'bogus = 1\n[[users]]\nname="a"\nrole="viewer"\ntoken_file="t.token"\n[[evidence.bundles]]\npath="x"\njob="j"',
            "bogus",
        ),
        ('[fleet]\nfile="nope.toml"\n[[users]]\nname="a"\nrole="viewer"\ntoken_file="t.token"', "fleet.file"),
        (
            '[notify]\nslack_webhooks=["ftp://x"]\n[[users]]\nname="a"\nrole="viewer"\ntoken_file="t.token"\n[[evidence.bundles]]\npath="x"\njob="j"',
            "http(s)",
        ),
    ],
)
def test_bad_config_is_one_clear_error(tmp_path: Path, toml: str | None, why: str) -> None:
    from forensic.harness.service.config import load_tokens

    _tok(tmp_path)
    (tmp_path / "short.token").write_text("short")
    cfg = tmp_path / "serve.toml"
    if toml is not None:
        cfg.write_text(toml)
    with pytest.raises(ConfigError) as exc:
        load_tokens(load_config(cfg))
    assert why in str(exc.value) and "\n" not in str(exc.value)


@pytest.mark.parametrize(
    "toml,why",
    [
        (None, "no such config file"),
        (
            '[[users]]\nname="a"\nrole="viewer"\ntoken_file="short.token"\n[[evidence.bundles]]\npath="x"\njob="j"',
            "shorter than 16",
        ),
    ],
)
def test_bad_config_is_exit_2_with_one_line(tmp_path: Path, toml: str | None, why: str) -> None:
    (tmp_path / "short.token").write_text("short")
    cfg = tmp_path / "serve.toml"
    if toml is not None:
        cfg.write_text(toml)
    r = _serve(cfg)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("forensic: ") and why in lines[0], r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize(
    "toml",
    [
        "",  # a missing key
        '[[users]]\nname="a"\nrole="viewer"\ntoken_file="t.token"',  # a whole-file rule (no key to name)
        '[workers]\ncount="x"\n[[users]]\nname="a"\nrole="viewer"\ntoken_file="t.token"',
        "users = [",
    ],
)
def test_config_errors_name_the_file_given_once(tmp_path: Path, toml: str) -> None:
    _tok(tmp_path)
    cfg = tmp_path / "bad.toml"
    cfg.write_text(toml)
    r = _serve(cfg)
    line = r.stderr.strip()
    assert r.returncode == 2 and line.count("bad.toml") == 1 and "serve.toml" not in line, line


def test_fleet_key_is_validated_with_its_fleet_file(tmp_path: Path) -> None:
    _tok(tmp_path)
    (tmp_path / "fleet.toml").write_text(
        '[agents]\nurl_template = "http://{host}:9401"\ntoken_file = "t.token"\n'
    )
    (tmp_path / "serve.toml").write_text(
        '[fleet]\nfile="fleet.toml"\nlookback_s=600\n[[users]]\nname="a"\nrole="viewer"\ntoken_file="t.token"'
    )
    cfg = load_config(tmp_path / "serve.toml")
    assert cfg.fleet is not None and cfg.fleet.file == tmp_path / "fleet.toml"
    assert cfg.fleet.lookback_s == 600 and cfg.fleet.window_after_s == 3600
    assert cfg.database == tmp_path / "forensic-serve.sqlite"
    (tmp_path / "serve.toml").write_text(
        '[fleet]\nfile="fleet.toml"\nrefresh_s=30\n[[users]]\nname="a"\nrole="viewer"\ntoken_file="t.token"'
    )
    with pytest.raises(ConfigError, match="fleet.refresh_s"):
        load_config(tmp_path / "serve.toml")


def test_relative_paths_are_read_from_the_config_folder(tmp_path: Path) -> None:
    _tok(tmp_path)
    (tmp_path / "serve.toml").write_text(
        f'database="db/s.sqlite"\n[[users]]\nname="a"\nrole="viewer"\ntoken_file="t.token"\n'
        f'[[evidence.bundles]]\npath="{EXAMPLE}"\nhosts=["gpu-e12*"]'
    )
    cfg = load_config(tmp_path / "serve.toml")
    assert cfg.database == tmp_path / "db" / "s.sqlite" and cfg.evidence.bundles[0].hosts == ["gpu-e12*"]
    with pytest.raises(ConfigError):
        (tmp_path / "t.token").write_text("")
        from forensic.harness.service.config import load_tokens

        load_tokens(cfg)


@pytest.mark.slow
def test_bench_intake_counts(tmp_path: Path) -> None:
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "forensic.harness.cli",
            "bench",
            "intake",
            "--alerts",
            "300",
            "--concurrency",
            "8",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert {"alerts", "alerts_per_s", "p50_ms", "p99_ms", "investigations", "lost"} <= set(out)
    assert out["alerts"] == 300 and out["stored"] == 300 and out["lost"] == 0 and out["investigations"] == 1
    assert out["alerts_per_s"] > 0 and out["p99_ms"] >= out["p50_ms"] > 0


def test_chat_with_a_running_service(server, tmp_path) -> None:
    """``forensic chat --server``: the service holds the conversation; messages approve nothing."""
    import subprocess
    import sys

    from forensic.harness.service.bench import fault_alert, webhook

    from .conftest import JOB, TOKENS

    s = server().start()
    r = s.post("/api/v1/alerts", user="alertmanager", json=webhook([fault_alert(1, job=JOB)]))
    inv = r.json()["investigations"][0]
    s.wait_status(inv)
    token = tmp_path / "vic.token"
    token.write_text(TOKENS["vic"][1])
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "forensic.harness.cli",
            "chat",
            "--server",
            s.url,
            "--investigation",
            inv,
            "--token-file",
            str(token),
        ],
        input="why is it slow?\n/approve rp-1\nwhy not thermal?\n",
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "pcie_downtrain on gpu-e126/gpu0" in done.stdout and "[ev-" in done.stdout
    assert "only questions are taken" in done.stdout
    assert "forensic: conversation chat-" in done.stderr
    d = s.get(f"/api/v1/investigations/{inv}").json()
    assert all(p["status"] == "pending_approval" for p in d["report"]["proposals"])
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "forensic.harness.cli",
            "chat",
            "--server",
            s.url,
            "--investigation",
            "inv-nope",
            "--token-file",
            str(token),
        ],
        input="why?\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and "404" in bad.stderr and "Traceback" not in bad.stderr


def test_serve_says_where_it_listens_and_what_it_serves(server, tmp_path) -> None:
    """Once listening, serve prints its address, state, evidence, executors and who may do what."""
    import time

    (tmp_path / "executors.toml").write_text('[runbook]\nurl = "http://127.0.0.1:9/tickets"\n')
    srv = server(extra=f'executors = "{tmp_path / "executors.toml"}"').start()
    deadline = time.monotonic() + 20
    while "workers:" not in srv.log() and time.monotonic() < deadline:
        time.sleep(0.1)
    out = srv.log()
    assert f"listening on http://127.0.0.1:{srv.port}" in out
    assert f"page http://127.0.0.1:{srv.port}/ " in out and "/api/v1/alerts" in out
    assert f"SQLite {tmp_path}" in out
    assert f"bundle: {EXAMPLE} (for job llm-70b-pretrain)" in out
    assert "fleet: none" in out
    assert f"executors: {tmp_path / 'executors.toml'} (runbook)" in out
    assert "approver: ann" in out and "viewer: vic" in out and "admin: root" in out
    assert "tok-" not in out  # names, never tokens
    assert out.count("listening on") == 1


def test_serve_prints_no_password_of_its_database_url() -> None:
    from forensic.harness.cli.serve import _redacted

    assert _redacted("postgresql://forensic:s3cret@db.example:5432/forensic") == (
        "postgresql://forensic:***@db.example:5432/forensic"
    )
    assert _redacted("postgresql:///forensic?host=/run/pg") == "postgresql:///forensic?host=/run/pg"
