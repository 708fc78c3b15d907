"""The layers of docs/architecture.md, checked on the source: no module imports a higher layer, and
no surface imports another surface. Every import counts, the lazy ones inside functions too: a
dependency deferred to run time is still a dependency."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Checkout folder -> the package it is installed as (pyproject.toml, package-dir).
PACKAGES = {
    "forensic": "forensic",
    "harness": "forensic.harness",
    "tools": "forensic.tools",
    "sandbox": "forensic.sandbox",
    "playbooks": "forensic.playbooks",
    "evals": "forensic.evals",
}
#: Eval sets written by outside authors: data generators, kept byte for byte.
OUTSIDE = {
    "blind",
    "fresh",
    "frontier",
    "independent",
    "outside",
    "sealed",
    "rehearsal",
    "drill",
    "keystone",
    "summit",
    "meridian",
    "horizon",
    "zenith",
    "examples",
}

#: Layers from the bottom up: (name, module prefixes). The longest matching prefix decides.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "foundation",
        (
            "forensic.names",
            "forensic.times",
            "forensic.configfile",
            "forensic.errors",
            "forensic.text",
            "forensic.openmetrics",
            "forensic.logs",
            "forensic.settings",
            "forensic.record",
            "forensic.record_bench",
            "forensic.playbooks",
        ),
    ),
    ("sandbox", ("forensic.sandbox",)),
    ("tools", ("forensic.tools",)),
    ("core", ("forensic.harness",)),
    # Above the core: what acts on the world after an approval, and what draws or packs its results.
    (
        "outputs",
        (
            "forensic.harness.executors",
            "forensic.harness.collect",
            "forensic.harness.plots",
            "forensic.harness.render",
            "forensic.harness.series",
        ),
    ),
    (
        "surfaces",
        (
            "forensic.harness.service",
            "forensic.harness.chat",
            "forensic.harness.mcp_server",
            "forensic.harness.node_agent",
        ),
    ),
    ("evals", ("forensic.evals",)),
    # The command line starts every other surface and the eval runner; the package root re-exports
    # the public API from every layer.
    ("entry", ("forensic.harness.cli", "forensic")),
]
#: Surfaces are peers: none imports another.
SURFACES = dict(LAYERS)["surfaces"]

#: Known crossings, each with why it is allowed; a new one fails the test.
ALLOWED: dict[tuple[str, str], str] = {
    # The execution ledger shares PostgreSQL with the service and takes the service's migration
    # lock (its executions table is one of the store's Alembic revisions).
    ("forensic.harness.executors.ledger", "forensic.harness.service.schema"): "one schema and migration lock",
    # The intake benchmark (`forensic bench intake`) posts a simulated fault's alerts, made by the
    # eval generator; nothing on the service's request path imports it.
    ("forensic.harness.service.bench", "forensic.evals"): "a benchmark's alerts",
}


def _layer(module: str) -> tuple[int, str]:
    best = (-1, "", "")
    for rank, (name, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > len(best[2]):
                best = (rank, name, p)
    return best[0], best[2]


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT / folder)
            if folder == "evals" and rel.parts[0] in OUTSIDE:
                continue
            if "migrations" in rel.parts:  # Alembic's own scripts, run by Alembic
                continue
            parts = [package, *rel.with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


@cache
def _imports(module: str, path: Path) -> frozenset[str]:
    tree = ast.parse(path.read_text(), str(path))
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base if is_package else base[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            found.add(target)
            if target != "forensic":  # the root's names are checked where they are defined
                found.update(f"{target}.{a.name}" for a in node.names)
    # The package root itself (its ``__version__``) loads nothing; its API names are other modules.
    return frozenset(m for m in found if m.startswith("forensic."))


def _crossings(modules: dict[str, Path]) -> list[str]:
    bad: list[str] = []
    for module, path in modules.items():
        if module == "forensic":  # the public API re-exports every layer, on first use
            continue
        rank, own = _layer(module)
        for target in sorted(_imports(module, path)):
            if target not in modules and target.rsplit(".", 1)[0] in modules:
                target = target.rsplit(".", 1)[0]  # `from package import name`: the package
            if target not in modules or (module, target) in ALLOWED:
                continue
            t_rank, t_own = _layer(target)
            if t_rank > rank:
                bad.append(f"{module} ({LAYERS[rank][0]}) imports {target} ({LAYERS[t_rank][0]})")
            elif own in SURFACES and t_own in SURFACES and own != t_own:
                bad.append(f"surface {module} imports another surface, {target}")
    return sorted(set(bad))


def test_no_module_imports_a_higher_layer_or_another_surface() -> None:
    assert _crossings(_modules()) == []


def test_every_module_has_a_layer() -> None:
    assert [m for m in _modules() if _layer(m)[0] < 0] == []


@pytest.mark.parametrize(
    "module,source,expected",
    [
        (
            "forensic.sandbox.sources",
            "from forensic.tools.parsers.openmetrics import Series",
            "(sandbox) imports",
        ),
        ("forensic.harness.graph", "from forensic.harness.service.store import Store", "(core) imports"),
        ("forensic.settings", "from forensic.sandbox.errors import SettingsError", "(foundation) imports"),
        ("forensic.harness.chat.terminal", "from ..service import api", "another surface"),
        ("forensic.harness.report", "def f():\n    from forensic.harness import plots", "(core) imports"),
    ],
)
def test_the_check_finds_an_upward_import(tmp_path: Path, module: str, source: str, expected: str) -> None:
    """The check itself: an upward import planted in a real module's place is reported."""
    real = _modules()
    planted = tmp_path / ("__init__.py" if real[module].name == "__init__.py" else "m.py")
    planted.write_text(source + "\n")
    found = _crossings({**real, module: planted})
    assert any(module in line and expected in line for line in found), found
