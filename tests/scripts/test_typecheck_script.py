"""scripts/typecheck.py: mypy sees the package as installed, and its messages name the checkout's files."""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("typecheck", ROOT / "scripts" / "typecheck.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_tree_maps_every_package_dir_entry_under_forensic(tmp_path: Path) -> None:
    folders = _script().link_tree(tmp_path / "tree")
    package_dir = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    top = tmp_path / "tree" / "forensic"
    for name, folder in package_dir.items():
        linked = top.joinpath(*name.split(".")[1:])
        # The same files as the checkout's folder, under the name the code imports.
        assert (linked / "__init__.py").resolve() == (ROOT / folder / "__init__.py").resolve(), name
        assert folders[name.replace(".", "/")] == folder
    assert (top / "harness" / "graph.py").resolve() == (ROOT / "harness" / "graph.py").resolve()
    assert (top / "settings.py").resolve() == (ROOT / "forensic" / "settings.py").resolve()


def test_a_second_run_replaces_the_tree(tmp_path: Path) -> None:
    script = _script()
    script.link_tree(tmp_path / "tree")
    (tmp_path / "tree" / "forensic" / "stale.py").write_text("")
    script.link_tree(tmp_path / "tree")
    assert not (tmp_path / "tree" / "forensic" / "stale.py").exists()


def test_messages_name_the_checkout_paths() -> None:
    script = _script()
    folders = {"forensic": "forensic", "forensic/harness": "harness", "forensic/tools": "tools"}
    out = script.checkout_paths(
        "build/typecheck/forensic/harness/graph.py:12: error: x  [arg-type]\n"
        "build/typecheck/forensic/record.py:3: note: y\n"
        "build/typecheck/forensic/tools/detectors/core.py:9: error: z  [misc]\n"
        "Found 3 errors in 3 files (checked 404 source files)\n",
        "build/typecheck",
        folders,
    )
    assert out.splitlines() == [
        "harness/graph.py:12: error: x  [arg-type]",
        "forensic/record.py:3: note: y",
        "tools/detectors/core.py:9: error: z  [misc]",
        "Found 3 errors in 3 files (checked 404 source files)",
    ]
