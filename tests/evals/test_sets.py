"""Generated evaluation sets: regenerated on first use, verified against the committed manifest."""

from __future__ import annotations

from pathlib import Path

import pytest
from forensic.evals import sets
from forensic.evals.sets import EvalSetError, case_digests, ensure_set, read_manifest


def _tiny_builder(out: Path) -> None:
    for case, text in (("a", "one"), ("holdout/b", "two")):
        (out / case / "bundle").mkdir(parents=True)
        (out / case / "bundle" / "incident.json").write_text(text)
        (out / case / "truth.json").write_text("{}")


@pytest.fixture()
def tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FORENSIC_EVALS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(sets, "MANIFESTS", tmp_path / "manifests")
    monkeypatch.setitem(sets.BUILDERS, "tiny", _tiny_builder)
    sets.write_manifest("tiny")
    return tmp_path


def test_a_set_is_generated_once_and_verified(tiny: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = ensure_set("tiny")
    assert sorted(case_digests(root)) == ["a", "holdout/b"]
    calls = []
    monkeypatch.setitem(sets.BUILDERS, "tiny", lambda out: calls.append(out))
    assert ensure_set("tiny") == root and calls == []  # the stamp makes a second use free


def test_a_generator_that_drifts_fails_loudly(tiny: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def drifted(out: Path) -> None:
        _tiny_builder(out)
        (out / "a" / "bundle" / "incident.json").write_text("changed")

    monkeypatch.setitem(sets.BUILDERS, "tiny", drifted)
    with pytest.raises(EvalSetError, match=r"a \(differs\)"):
        ensure_set("tiny")
    assert not list((tiny / "cache").glob("tiny-*"))  # nothing half-made is left to be trusted


def test_unknown_set_is_a_clear_error() -> None:
    with pytest.raises(EvalSetError, match="unknown evaluation set"):
        ensure_set("no-such-set")


@pytest.mark.parametrize("name", sorted(sets.BUILDERS))
def test_every_set_has_a_manifest(name: str) -> None:
    assert len(read_manifest(name)) >= 14


def test_eval_given_a_generator_folder_scores_the_generated_cases(
    tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from forensic.harness.cli import _register, app
    from typer.testing import CliRunner

    _register()
    monkeypatch.setattr(sets, "EVALS", tiny / "evals")
    generator = tiny / "evals" / "tiny"
    generator.mkdir(parents=True)  # holds the generator, no cases
    res = CliRunner().invoke(app, ["eval", str(generator), "--json", "--no-baselines"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["summary"]["n"] == 2
