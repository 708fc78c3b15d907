"""Type-check the ``forensic`` package with mypy, as it is installed.

.venv/bin/python scripts/typecheck.py [mypy options]

The checkout keeps ``harness/``, ``tools/``, ... at its top level and ``pyproject.toml`` maps them
under ``forensic`` (``package-dir``). The editable install does that mapping with an import hook,
which mypy does not run, so mypy would see ``harness/graph.py`` as ``harness.graph`` while the code
imports ``forensic.harness.graph``. This script lays the same mapping out as links under
``build/typecheck/forensic`` (read from ``package-dir``, so a new top-level package needs no edit
here), runs mypy on that tree with the settings in ``[tool.mypy]`` (whose ``mypy_path`` names the
tree), and prints the checkout's own paths in mypy's messages so that editors and terminals jump
to the real files.
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


def link_tree(tree: Path = TREE) -> dict[str, str]:
    """Lay ``forensic`` out under ``tree`` as installed; each linked folder -> its checkout folder,
    both relative to the checkout (``forensic/harness`` -> ``harness``)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    package_dir: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    shutil.rmtree(tree, ignore_errors=True)
    top = tree / "forensic"
    top.mkdir(parents=True)
    # The root package's own modules, one link each: its folder cannot be linked whole, since its
    # mapped subpackages live beside it in the checkout, not inside it.
    for src in sorted((ROOT / package_dir["forensic"]).glob("*.py")):
        (top / src.name).symlink_to(src)
    folders = {"forensic": package_dir["forensic"]}
    for name, folder in package_dir.items():
        parts = name.split(".")
        if len(parts) == 2 and parts[0] == "forensic":
            (top / parts[1]).symlink_to(ROOT / folder, target_is_directory=True)
            folders[name.replace(".", "/")] = folder
    return folders


def checkout_paths(text: str, tree: str, folders: dict[str, str]) -> str:
    """mypy's output with paths in the link tree (``tree``, relative to the checkout) written as
    the checkout's paths."""
    prefixes = {f"{tree}/{linked}/": f"{folder}/" for linked, folder in folders.items()}
    # Longest first, so build/typecheck/forensic/harness/ wins over build/typecheck/forensic/.
    pattern = re.compile("|".join(re.escape(p) for p in sorted(prefixes, key=len, reverse=True)))
    return pattern.sub(lambda m: prefixes[m.group(0)], text)


def main(argv: list[str]) -> int:
    folders = link_tree()
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", *argv],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "MYPY_FORCE_COLOR": "0"},  # plain paths, so they can be rewritten
        check=False,
    )
    sys.stdout.write(checkout_paths(proc.stdout, TREE.relative_to(ROOT).as_posix(), folders))
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
