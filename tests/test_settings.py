"""One settings object reads the environment; bad values are one line, exit 2; logs are structured."""

from __future__ import annotations

import io
import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
from forensic.sandbox import SettingsError

from forensic.logs import configure
from forensic.settings import get_settings

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "evals" / "examples" / "pcie-x8-mfu-drop" / "bundle"


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    for name in (
        "FORENSIC_STATE_DIR",
        "FORENSIC_EVALS_CACHE",
        "XDG_STATE_HOME",
        "XDG_CACHE_HOME",
        "FORENSIC_LLM_MODEL",
        "FORENSIC_LLM_API_KEY",
        "FORENSIC_LLM_TIMEOUT_S",
        "FORENSIC_LOG_LEVEL",
        "FORENSIC_LOG_FORMAT",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    return monkeypatch


def test_defaults_follow_xdg_and_the_home_folder(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    s = get_settings()
    assert s.state_path() == tmp_path / ".local" / "state" / "forensic"
    assert s.evals_cache_path() == tmp_path / ".cache" / "forensic" / "evals"
    clean_env.setenv("XDG_STATE_HOME", "/xdg/state")
    clean_env.setenv("XDG_CACHE_HOME", "/xdg/cache")
    s = get_settings()
    assert (s.state_path(), s.evals_cache_path()) == (
        Path("/xdg/state/forensic"),
        Path("/xdg/cache/forensic/evals"),
    )


def test_forensic_variables_win_and_empty_means_unset(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean_env.setenv("XDG_STATE_HOME", "/xdg/state")
    clean_env.setenv("FORENSIC_STATE_DIR", "/srv/forensic")
    clean_env.setenv("FORENSIC_EVALS_CACHE", "")
    clean_env.setenv("FORENSIC_LLM_API_KEY", "sk-secret")
    clean_env.setenv("FORENSIC_LOG_LEVEL", "debug")
    s = get_settings()
    assert s.state_path() == Path("/srv/forensic")
    assert s.evals_cache_path() == tmp_path / ".cache" / "forensic" / "evals"
    assert s.log_level == "DEBUG"
    assert s.llm_api_key is not None and s.llm_api_key.get_secret_value() == "sk-secret"
    assert "sk-secret" not in repr(s)


def test_a_bad_value_names_the_variable(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("FORENSIC_LLM_TIMEOUT_S", "soon")
    with pytest.raises(SettingsError, match="^FORENSIC_LLM_TIMEOUT_S: "):
        get_settings()


def test_the_modules_read_the_settings(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from forensic.evals.sets import cache_root
    from forensic.harness.cli._common import default_state_dir

    clean_env.setenv("FORENSIC_STATE_DIR", str(tmp_path / "state"))
    clean_env.setenv("FORENSIC_EVALS_CACHE", str(tmp_path / "evals"))
    assert default_state_dir() == tmp_path / "state"
    assert cache_root() == tmp_path / "evals"


def _cli(*args: str, env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "forensic.harness.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "FORENSIC_STATE_DIR": str(tmp_path), **env},
    )


def test_a_bad_environment_is_exit_2_with_one_line(tmp_path: Path) -> None:
    out = _cli("tools", env={"FORENSIC_LOG_FORMAT": "xml"}, tmp_path=tmp_path)
    assert (
        out.returncode == 2
        and out.stderr == "forensic: FORENSIC_LOG_FORMAT: Input should be 'text' or 'json'\n"
    )
    out = _cli("--log-level", "chatty", "tools", env={}, tmp_path=tmp_path)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "--log-level 'chatty'" in out.stderr


def test_json_logs_on_stderr_keep_stdout_for_the_report(tmp_path: Path) -> None:
    out = _cli(
        "--log-level",
        "debug",
        "--log-format",
        "json",
        "investigate",
        str(EXAMPLE),
        "--json",
        "--no-checkpoint",
        env={},
        tmp_path=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    logs = [json.loads(line) for line in out.stderr.splitlines()]
    calls = [r for r in logs if r["message"] == "tool call"]
    assert [c["evidence"] for c in calls] == [e["id"] for e in report["evidence"]]
    assert all(c["logger"] == "forensic.harness.graph" and c["level"] == "DEBUG" for c in calls)
    verdict = next(r for r in logs if r["message"] == "verdict")
    assert (verdict["root_cause"], verdict["component"]) == (
        report["verdict"]["root_cause"],
        report["verdict"]["component"],
    )


def test_the_default_level_is_quiet(tmp_path: Path) -> None:
    out = _cli("investigate", str(EXAMPLE), "--json", "--no-checkpoint", env={}, tmp_path=tmp_path)
    assert out.returncode == 0 and out.stderr == ""
    out = _cli(
        "investigate",
        str(EXAMPLE),
        "--json",
        "--no-checkpoint",
        env={"FORENSIC_LOG_LEVEL": "info"},
        tmp_path=tmp_path,
    )
    assert "INFO forensic.harness.graph: verdict" in out.stderr


def test_configure_replaces_its_own_handler() -> None:
    root = logging.getLogger("forensic")
    saved = (list(root.handlers), root.level, root.propagate)
    first, second = io.StringIO(), io.StringIO()
    configure("INFO", "text", first)
    configure("INFO", "json", second)
    logging.getLogger("forensic.tools.x").info("hello", extra={"n": 3})
    assert first.getvalue() == ""
    assert json.loads(second.getvalue()) | {"time": None} == {
        "time": None,
        "level": "INFO",
        "logger": "forensic.tools.x",
        "message": "hello",
        "n": 3,
    }
    root.handlers[:], root.level, root.propagate = saved[0], saved[1], saved[2]
