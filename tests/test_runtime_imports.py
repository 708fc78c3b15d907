"""What the runtime loads: an investigation never imports the eval code, the model client or pandas;
a missing optional package is a one-line message naming the extra to install."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "evals" / "examples" / "pcie-x8-mfu-drop" / "bundle"


def _python(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "FORENSIC_STATE_DIR": str(tmp_path)},
    )


def test_the_cli_and_an_investigation_load_neither_evals_nor_openai_nor_pandas(tmp_path: Path) -> None:
    # nor numba: the compiled scan kernel is imported only for arrays of millions of values
    out = _python(
        f"""
import contextlib, io, json, sys
from forensic.harness.cli import main
sys.argv = ["forensic", "investigate", {str(EXAMPLE)!r}, "--json", "--no-checkpoint"]
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    try:
        main()
    except SystemExit as exc:
        assert not exc.code, exc.code
verdict = json.loads(buf.getvalue())["verdict"]["root_cause"]
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("openai", "pandas", "numba", "llvmlite", "fastapi", "matplotlib")
                or m.startswith("forensic.evals"))
print(json.dumps({{"verdict": verdict, "loaded": loaded}}))
""",
        tmp_path,
    )
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.splitlines()[-1])
    assert got == {"verdict": "pcie_downtrain", "loaded": []}


def test_the_llm_planner_without_openai_names_the_extra(tmp_path: Path) -> None:
    out = _python(
        """
import sys
sys.modules["openai"] = None  # as if the llm extra were not installed
from forensic.harness.planners import make_planner, planner_names
from forensic.sandbox import PlannerError
assert "llm" in planner_names()
try:
    make_planner("llm", model="m")
except PlannerError as exc:
    print(exc)
""",
        tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert "pip install 'forensic-harness[llm]'" in out.stdout and "openai" in out.stdout


def test_bench_detectors_without_pandas_says_what_to_install(tmp_path: Path) -> None:
    out = _python(
        """
import sys
sys.modules["pandas"] = None  # as if the bench extra were not installed
from forensic.harness.cli import main
sys.argv = ["forensic", "bench", "detectors", "--ranks", "64", "--steps", "100"]
main()
""",
        tmp_path,
    )
    assert out.returncode == 2
    assert out.stderr.strip() == (
        "forensic: bench detectors measures a naive pandas baseline, and pandas is not "
        "installed: pip install 'forensic-harness[bench]'"
    )


@pytest.mark.parametrize(
    "blocked,argv,extra,missing",
    [
        (("fastapi",), ["serve", "--config", "serve.toml"], "serve", "fastapi"),
        (("prometheus_client",), ["serve", "--config", "serve.toml"], "serve", "prometheus_client"),
        (("fastapi",), ["bench", "intake"], "serve", "fastapi"),
        (("matplotlib",), ["plot", "some-thread", "timeline"], "plot", "matplotlib"),
    ],
)
def test_a_command_whose_extra_is_missing_names_it(
    tmp_path: Path, blocked: tuple[str, ...], argv: list[str], extra: str, missing: str
) -> None:
    out = _python(
        f"""
import sys
for name in {blocked!r}:
    sys.modules[name] = None  # as if the extra were not installed
from forensic.harness.cli import main
sys.argv = ["forensic", *{argv!r}]
main()
""",
        tmp_path,
    )
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip() == (
        f"forensic: forensic {' '.join(argv[:2]) if argv[0] == 'bench' else argv[0]} needs {missing}, "
        f"which is not installed: pip install 'forensic-harness[{extra}]'"
    )


def test_a_node_agent_runs_without_the_serve_and_plot_extras(tmp_path: Path) -> None:
    """What `pip install forensic-harness` on a GPU node gets: the agent's HTTP app answers a read,
    and neither FastAPI nor matplotlib is imported (nor needed: both are blocked here)."""
    out = _python(
        f"""
import json, sys
for name in ("fastapi", "matplotlib", "prometheus_client"):
    sys.modules[name] = None
from starlette.testclient import TestClient
from forensic.sandbox import Bundle
from forensic.sandbox.agent import replay_agent
from forensic.harness.node_agent import make_app
bundle = Bundle({str(EXAMPLE)!r})
host = bundle.host_names()[0]
app = make_app(replay_agent(bundle, host, "t" * 32))
with TestClient(app) as client:
    r = client.post("/v1/list", json={{"path": "."}}, headers={{"Authorization": "Bearer " + "t" * 32}})
print(json.dumps({{"status": r.status_code}}))
""",
        tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.splitlines()[-1])["status"] == 200


def test_the_public_api_loads_on_use_and_import_forensic_stays_free(tmp_path: Path) -> None:
    out = _python(
        """
import json, sys
import forensic
light = sorted(m for m in sys.modules if m.startswith(("forensic.", "pydantic", "langgraph", "numpy")))
exported = {name: getattr(forensic, name).__module__ for name in forensic.__all__ if name != "__version__"}
print(json.dumps({"light": light, "exported": exported, "dir": dir(forensic) == sorted(forensic.__all__),
                  "listed": sorted(forensic.__all__) == sorted(["__version__", *forensic._EXPORTS])}))
""",
        tmp_path,
    )
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.splitlines()[-1])
    assert got["light"] == []  # the step recorder inside a training job pays for nothing
    assert got["dir"] and got["listed"]
    # every public name resolves to a module of its own layer (a tool's base, the sandbox, ...)
    assert {"Tool", "register", "Investigator", "load_failure_graph", "ForensicError"} <= set(got["exported"])
    assert all(m.startswith("forensic.") for m in got["exported"].values())
