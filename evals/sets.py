"""The generated evaluation sets: regenerated on first use, checked against a committed manifest.

The sets are tens of thousands of small files, all of them a deterministic function of the
generator code. The repository keeps the generators and ``evals/manifests/<set>.sha256`` (one
digest per case); :func:`ensure_set` writes a set into a cache folder the first time it is asked
for, verifies every case against the manifest, and fails loudly, naming the cases, when the bytes
differ. A verified set is marked with a stamp so later uses cost nothing.

Only ``evals/examples`` stays in the repository as plain folders: they are documentation.

    forensic eval incidents            # a set by name (regenerated on first use)
    python -m forensic.evals.sets --write-manifest incidents   # after changing a generator
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

EVALS = Path(__file__).resolve().parent
MANIFESTS = EVALS / "manifests"


class EvalSetError(RuntimeError):
    """A set could not be made, or what was made differs from the committed manifest."""


def _build_incidents(out: Path) -> None:
    from .generator.incident import generate
    from .generator.suite import HOLDOUT, INCIDENTS

    for spec in INCIDENTS:
        generate(spec, out)
    for spec in HOLDOUT:
        generate(spec, out / "holdout")


def _script(name: str) -> Callable[[Path], None]:
    """A builder that runs ``evals/<name>/write_incidents.py --out <set>/holdout`` (an outside author's set)."""

    def build(out: Path) -> None:
        script = EVALS / name / "write_incidents.py"
        done = subprocess.run(
            [sys.executable, str(script), "--out", str(out / "holdout")], capture_output=True, text=True
        )
        if done.returncode:
            raise EvalSetError(f"{name}: {script.name} failed: {done.stderr.strip()[-500:]}")

    return build


#: Set name -> function that writes the whole set into an empty folder.
BUILDERS: dict[str, Callable[[Path], None]] = {
    "incidents": _build_incidents,
    "independent": _script("independent"),
    "outside": _script("outside"),
    "blind": _script("blind"),
    "sealed": _script("sealed"),
    "fresh": _script("fresh"),
    # Scored once only after the work it measures, so no change is tuned to it: see evals/frontier/README.md.
    "frontier": _script("frontier"),
    "rehearsal": _script("rehearsal"),
    "drill": _script("drill"),
    # Scored once only after the work it measures, so no change is tuned to it: see evals/keystone/README.md.
    "keystone": _script("keystone"),
    # Scored once only after the work it measures, so no change is tuned to it: see evals/summit/README.md.
    "summit": _script("summit"),
    # Scored once only after the work it measures, so no change is tuned to it: see evals/meridian/README.md.
    "meridian": _script("meridian"),
    # Scored once only after the work it measures, so no change is tuned to it: see evals/horizon/README.md.
    "horizon": _script("horizon"),
    # Scored once only after the work it measures, so no change is tuned to it: see evals/zenith/README.md.
    "zenith": _script("zenith"),
}


def cache_root() -> Path:
    """Where generated sets live: ``$FORENSIC_EVALS_CACHE``, else the user's cache folder."""
    from forensic.settings import get_settings

    return get_settings().evals_cache_path()


def case_digests(root: Path) -> dict[str, str]:
    """``{case path relative to root: sha256 over its files' relative paths and bytes}``."""
    out: dict[str, str] = {}
    for truth in sorted(root.rglob("truth.json")):
        case = truth.parent
        h = hashlib.sha256()
        for f in sorted(p for p in case.rglob("*") if p.is_file()):
            h.update(f.relative_to(case).as_posix().encode() + b"\0")
            h.update(hashlib.sha256(f.read_bytes()).digest())
        out[case.relative_to(root).as_posix()] = h.hexdigest()
    return out


def read_manifest(name: str) -> dict[str, str]:
    path = MANIFESTS / f"{name}.sha256"
    if not path.is_file():
        raise EvalSetError(f"{name}: no manifest at {path}")
    rows = (
        line.split() for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")
    )
    return {case: digest for digest, case in rows}


def _manifest_id(name: str) -> str:
    return hashlib.sha256((MANIFESTS / f"{name}.sha256").read_bytes()).hexdigest()[:12]


def _diff(expected: dict[str, str], got: dict[str, str]) -> list[str]:
    bad = [f"{c} (differs)" for c in sorted(expected) if c in got and got[c] != expected[c]]
    bad += [f"{c} (missing)" for c in sorted(set(expected) - set(got))]
    bad += [f"{c} (unexpected)" for c in sorted(set(got) - set(expected))]
    return bad


def ensure_set(name: str, *, progress: Callable[[str], None] | None = None) -> Path:
    """The folder holding set ``name``, generated and verified on first use."""
    if name not in BUILDERS:
        raise EvalSetError(f"unknown evaluation set {name!r}; known: {', '.join(sorted(BUILDERS))}")
    expected = read_manifest(name)
    final = cache_root() / f"{name}-{_manifest_id(name)}"
    stamp = final / ".verified"
    if stamp.is_file():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    if progress:
        progress(f"generating evaluation set {name!r} into {final} (first use only)")
    work = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=final.parent))
    try:
        BUILDERS[name](work)
        bad = _diff(expected, case_digests(work))
        if bad:
            raise EvalSetError(
                f"{name}: generated set does not match evals/manifests/{name}.sha256 "
                f"({len(bad)} cases): {', '.join(bad[:8])}"
            )
        (work / ".verified").write_text(_manifest_id(name) + "\n")
        try:
            work.rename(final)
        except OSError:
            if not stamp.is_file():  # not another process winning the same race
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return final


def write_manifest(name: str) -> Path:
    """Regenerate set ``name`` and write its manifest (after a deliberate generator change)."""
    with tempfile.TemporaryDirectory() as tmp:
        BUILDERS[name](Path(tmp))
        digests = case_digests(Path(tmp))
    MANIFESTS.mkdir(exist_ok=True)
    path = MANIFESTS / f"{name}.sha256"
    lines = [
        f"# sha256 per case of evals set {name!r}; regenerate with python -m forensic.evals.sets --write-manifest {name}"
    ]
    lines += [f"{d}  {c}" for c, d in sorted(digests.items())]
    path.write_text("\n".join(lines) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    import argparse

    p = argparse.ArgumentParser(
        prog="python -m forensic.evals.sets",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("names", nargs="*", default=sorted(BUILDERS), help="sets (default: all)")
    p.add_argument("--write-manifest", action="store_true", help="regenerate and rewrite the manifests")
    a = p.parse_args(argv)
    for name in a.names:
        if a.write_manifest:
            print(write_manifest(name))
        else:
            print(ensure_set(name, progress=lambda m: print(m, file=sys.stderr)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
