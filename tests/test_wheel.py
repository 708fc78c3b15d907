"""The package installs from a wheel: built from the sources, installed into a fresh virtual
environment outside the checkout, it investigates the example from another folder and installs
nothing at the top level but ``forensic``.

Slow (a wheel build and a dependency install, a minute or two on a warm pip cache); it needs the
package index that ``pip install -e '.[test]'`` used.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "evals" / "examples" / "pcie-x8-mfu-drop"
# What the checkout has at its top level and a wheel must never install there.
FOLDERS = ("harness", "tools", "sandbox", "evals", "playbooks")

pytestmark = pytest.mark.slow


def _run(argv: list[str], cwd: Path, timeout: int = 900, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        argv,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={"PATH": "/usr/bin:/bin", "HOME": str(cwd), **env},
    )


def _pip(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """pip as the developer runs it: their index settings, certificates and cache, nothing of this venv."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=900, env=env)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(wheel, venv) with the wheel installed, no extras, nothing from the checkout on its path."""
    tmp = tmp_path_factory.mktemp("wheel")
    # Build from a copy: an in-tree build would leave build/ and *.egg-info in the checkout.
    src = tmp / "src"
    shutil.copytree(
        ROOT,
        src,
        ignore=shutil.ignore_patterns(
            ".venv", ".git", "__pycache__", "*.egg-info", "build", "dist", ".pytest_cache", "examples"
        ),
    )
    built = _pip(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp / "dist"), str(src)], tmp
    )
    assert built.returncode == 0, built.stderr[-3000:]
    wheel = next((tmp / "dist").glob("forensic_harness-*.whl"))
    env_dir = tmp / "venv"
    venv.create(env_dir, with_pip=True, system_site_packages=False, clear=True)
    done = _pip([str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)], tmp)
    assert done.returncode == 0, done.stderr[-3000:]
    return wheel, env_dir


def test_the_wheel_holds_one_import_root_and_its_data(installed: tuple[Path, Path]) -> None:
    wheel, _ = installed
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/", 1)[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"forensic"}
    assert "forensic/playbooks/graph.toml" in names and "forensic/playbooks/root_causes/healthy.toml" in names
    assert "forensic/evals/manifests/incidents.sha256" in names
    # The Alembic environment and revisions that `forensic db upgrade` and `serve --db` run.
    assert "forensic/harness/service/migrations/env.py" in names
    assert "forensic/harness/service/migrations/versions/0001_initial.py" in names


def test_the_installed_command_investigates_the_example_from_another_folder(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    _, env_dir = installed
    elsewhere = tmp_path / "elsewhere"
    # Folders named like the checkout's, in the working directory, must not shadow anything.
    for name in FOLDERS:
        (elsewhere / name).mkdir(parents=True)
        (elsewhere / name / "__init__.py").write_text("raise ImportError('shadowed')\n")
    out = _run(
        [str(env_dir / "bin" / "forensic"), "investigate", str(EXAMPLE), "--json", "--no-checkpoint"],
        elsewhere,
        FORENSIC_STATE_DIR=str(tmp_path / "state"),
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    truth = json.loads((EXAMPLE / "truth.json").read_text())
    assert (report["verdict"]["root_cause"], report["verdict"]["component"]) == (
        truth["root_cause"],
        truth["component"],
    )
    assert report["status"] == "confirmed" and report["findings"]
    # python -m puts the working directory first on sys.path: the decoys are right there.
    as_module = _run(
        [str(env_dir / "bin" / "python"), "-m", "forensic.harness.cli", "tools", "--json"], elsewhere
    )
    assert as_module.returncode == 0, as_module.stderr
    assert "pcie_link" in {t["name"] for t in json.loads(as_module.stdout)}


def test_no_top_level_module_but_forensic_is_importable(installed: tuple[Path, Path], tmp_path: Path) -> None:
    _, env_dir = installed
    code = (
        "import importlib.util, json, forensic; "
        f"print(json.dumps([[n, importlib.util.find_spec(n) is not None] for n in {list(FOLDERS)!r}] "
        "+ [['forensic', forensic.__file__]]))"
    )
    out = _run([str(env_dir / "bin" / "python"), "-c", code], tmp_path)
    assert out.returncode == 0, out.stderr
    found = json.loads(out.stdout)
    assert found[:-1] == [[n, False] for n in FOLDERS]
    assert found[-1][1].startswith(str(env_dir))


def test_without_extras_the_optional_paths_say_what_to_install(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    _, env_dir = installed
    py = str(env_dir / "bin" / "python")
    missing = _run(
        [
            py,
            "-c",
            "import importlib.util as u; print([m for m in ('openai', 'pandas', 'pynvml', 'fastapi', 'matplotlib') "
            "if u.find_spec(m)])",
        ],
        tmp_path,
    )
    assert missing.stdout.strip() == "[]", (
        "openai, pandas, nvidia-ml-py, FastAPI and matplotlib are extras, not dependencies (a node agent needs none)"
    )
    serve = _run([str(env_dir / "bin" / "forensic"), "serve", "--config", "serve.toml"], tmp_path)
    assert serve.returncode == 2 and "pip install 'forensic-harness[serve]'" in serve.stderr
    plot = _run([str(env_dir / "bin" / "forensic"), "plot", "t", "timeline"], tmp_path)
    assert plot.returncode == 2 and "pip install 'forensic-harness[plot]'" in plot.stderr
    bench = _run([str(env_dir / "bin" / "forensic"), "bench", "detectors"], tmp_path)
    assert bench.returncode == 2 and "pip install 'forensic-harness[bench]'" in bench.stderr
    llm = _run(
        [
            str(env_dir / "bin" / "forensic"),
            "investigate",
            str(EXAMPLE),
            "--planner",
            "llm",
            "--llm-model",
            "m",
            "--no-checkpoint",
        ],
        tmp_path,
        FORENSIC_STATE_DIR=str(tmp_path / "state"),
    )
    assert (
        llm.returncode == 2
        and "pip install 'forensic-harness[llm]'" in llm.stderr
        and "Traceback" not in llm.stderr
    )
