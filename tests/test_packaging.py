"""Every package folder ships in the wheel under the one ``forensic`` import root."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_folder_is_listed_in_pyproject() -> None:
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(cfg["packages"])
    mapped = {folder: name for name, folder in cfg["package-dir"].items()}
    found = set()
    for folder, root_name in mapped.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            found.add(".".join([root_name, *rel.parts]))
    assert found - listed == set(), "package folders missing from pyproject.toml [tool.setuptools] packages"
    assert listed - found == set(), "pyproject.toml lists packages that do not exist"
