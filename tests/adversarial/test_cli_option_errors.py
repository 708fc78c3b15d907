"""An option value typer cannot parse is one line on stderr and exit 2, on every command.

The commands and their typed options are found by walking the app's registrations (the command
functions' annotations), so a new command or option is covered without editing this file.
"""

from __future__ import annotations

import enum
import inspect
import types
import typing
from collections.abc import Iterator

import pytest
import typer
from forensic.harness.cli import _register, app
from typer.testing import CliRunner

_register()
runner = CliRunner()


def _commands(typer_app: typer.Typer, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], object]]:
    for info in typer_app.registered_commands:
        name = info.name or info.callback.__name__.replace("_", "-")
        yield path + (name,), info.callback
    for group in typer_app.registered_groups:
        yield from _commands(group.typer_instance, path + (group.name,))


def _base(annotation: object) -> object:
    """int, float, an Enum or Literal: the type under Annotated/Optional."""
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        annotation = args[0] if len(args) == 1 else annotation
    return annotation


def _bad_value(kind: object) -> str | None:
    if kind is bool:
        return None
    if kind is int:
        return "1e20"
    if kind is float:
        return "abc"
    if isinstance(kind, type) and issubclass(kind, enum.Enum) or typing.get_origin(kind) is typing.Literal:
        return "no-such-choice"
    return None


def _typed_options() -> list[tuple[tuple[str, ...], str, str]]:
    cases = []
    for path, callback in _commands(app):
        hints = typing.get_type_hints(callback, include_extras=True)
        for name, param in inspect.signature(callback).parameters.items():
            annotation = hints.get(name)
            meta = (
                [m for m in typing.get_args(annotation)[1:] if isinstance(m, typer.models.OptionInfo)]
                if typing.get_origin(annotation) is typing.Annotated
                else []
            )
            if not meta and not isinstance(param.default, typer.models.OptionInfo):
                continue  # an argument, not an option
            info = meta[0] if meta else param.default
            bad = _bad_value(_base(annotation))
            if bad is None:
                continue
            decls = [d.split("/")[0] for d in (info.param_decls or ()) if d.startswith("--")]
            if info.default is not ... and isinstance(info.default, str) and info.default.startswith("--"):
                decls.insert(0, info.default.split("/")[0])  # typer.Option("--name", ...) positional form
            flag = decls[0] if decls else "--" + name.replace("_", "-")
            cases.append((path, flag, bad))
    return cases


CASES = _typed_options()


def test_the_walk_finds_the_commands_and_options_it_should() -> None:
    flags = {(" ".join(p), f) for p, f, _ in CASES}
    assert ("investigate", "--budget-tool-calls") in flags
    assert ("investigate", "--budget-wall-s") in flags
    assert ("bench parsers", "--size-mb") in flags
    assert ("bench fleet", "--hosts") in flags
    assert len({p for p, _, _ in CASES}) >= 8, CASES


@pytest.mark.parametrize("path,flag,bad", CASES, ids=[f"{' '.join(p)} {f}" for p, f, _ in CASES])
def test_every_typed_option_refuses_a_bad_value_in_one_line(
    path: tuple[str, ...], flag: str, bad: str
) -> None:
    res = runner.invoke(app, [*path, flag, bad])
    assert res.exit_code == 2, (res.exit_code, res.output)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("forensic: error: ") and flag in lines[0] and repr(bad) in lines[0], lines[0]
    assert "╭" not in res.stderr and "Usage:" not in res.stderr and "Traceback" not in res.output


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["investigate", "B", "--budget-tool-calls", "1e20"], "--budget-tool-calls '1e20'"),
        (["investigate", "B", "--budget-wall-s=abc"], "--budget-wall-s 'abc'"),
        (["investigate", "--no-such-flag"], "No such option: --no-such-flag"),
        (["no-such-command"], "No such command"),
        (
            ["investigate", "B", "--budget-wall-s", "\x1b[2Jabc"],
            "--budget-wall-s '\\x1b[2Jabc'",
        ),  # shown, not obeyed
    ],
)
def test_usage_errors_are_one_line(argv: list[str], needle: str) -> None:
    res = runner.invoke(app, argv)
    assert res.exit_code == 2
    assert res.stderr.count("\n") == 1 and needle in res.stderr, res.stderr
    assert "\x1b" not in res.stderr


@pytest.mark.parametrize("path", sorted({p for p, _ in _commands(app)}), ids=" ".join)
def test_help_still_works_on_every_command(path: tuple[str, ...]) -> None:
    res = runner.invoke(app, [*path, "--help"])
    assert res.exit_code == 0, res.output
    assert "Usage:" in res.output and "forensic: error" not in res.output


def test_a_bare_group_still_shows_its_help() -> None:
    res = runner.invoke(app, ["bench"])
    assert "Usage:" in res.output and "forensic: error" not in res.output
