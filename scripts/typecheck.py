"""Type-check the ``forensic`` package with mypy, as it is installed.

.venv/bin/python scripts/typecheck.py [mypy options]

The checkout keeps ``harness/``, ``tools/``, ... at its top level and ``pyproject.toml`` maps them
under ``forensic`` (``package-dir``). The editable install does that mapping with an import hook,
which mypy does not run, so mypy would see ``harness/graph.py`` as ``harness.graph`` while the code
imports ``forensic.harness.graph``. This script lays the same mapping out as links under
``build/typecheck/forensic`` (read from ``package-dir``, so a new top-level package needs no edit
here), runs mypy on that tree with the settings in ``[tool.mypy]``, and prints the checkout's own
paths in mypy's messages so that editors and terminals jump to the real files.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREE = ROOT / "build" / "typecheck"


def link_tree() -> dict[str, str]:
    """Lay out ``forensic`` as installed; the map from each linked prefix to its checkout folder."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    package_dir: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    shutil.rmtree(TREE, ignore_errors=True)
    top = TREE / "forensic"
    top.mkdir(parents=True)
    # The root package's own modules, one link each: the folder itself cannot be linked whole,
    # since its mapped subpackages live beside it in the checkout, not inside it.
    root_dir = ROOT / package_dir["forensic"]
    for src in sorted(root_dir.glob("*.py")):
        (top / src.name).symlink_to(src)
    prefixes = {"build/typecheck/forensic/": f"{package_dir['forensic']}/"}
    for name, folder in package_dir.items():
        parts = name.split(".")
        if len(parts) != 2 or parts[0] != "forensic":
            continue
        (top / parts[1]).symlink_to(ROOT / folder, target_is_directory=True)
        prefixes[f"build/typecheck/forensic/{parts[1]}/"] = f"{folder}/"
    return prefixes


def main(argv: list[str]) -> int:
    prefixes = link_tree()
    # Longest prefix first, so build/typecheck/forensic/harness/ wins over build/typecheck/forensic/.
    pattern = re.compile("|".join(re.escape(p) for p in sorted(prefixes, key=len, reverse=True)))
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", *argv],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "MYPY_FORCE_COLOR": os.environ.get("MYPY_FORCE_COLOR", "0")},
        check=False,
    )
    sys.stdout.write(pattern.sub(lambda m: prefixes[m.group(0)], proc.stdout))
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
