"""One line on stderr and exit 2 for every usage error, for the whole command line at once.

Typer prints a usage line, a hint and a boxed message for an option it cannot parse
(``--budget-tool-calls 1e20``, ``--size-mb abc``, an unknown choice): three to six lines, not the
one line every other refusal of bad input gets (see :func:`._common._fail`). The root group below
catches click's usage errors where parsing happens (its own arguments, then the subcommand's) and
prints one line instead::

    forensic: error: --budget-tool-calls '1e20': Input should be a valid integer, ... (forensic investigate --help)

``--help`` and a bare command (which shows its help) are untouched. The same path serves the real
entry point and ``CliRunner`` (both call the root group's ``main``).
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Sequence
from typing import Any, NoReturn

import typer
from typer.core import TyperGroup

try:  # typer >= 0.20 carries its own copy of click
    from typer import _click as _click_mod
except ImportError:  # pragma: no cover - older typer on the real click
    import click as _click_mod  # type: ignore[no-redef]

_ClickException = _click_mod.exceptions.ClickException
_BadParameter = _click_mod.exceptions.BadParameter
_MissingParameter = _click_mod.exceptions.MissingParameter
_NoArgsIsHelp = getattr(_click_mod.exceptions, "NoArgsIsHelpError", None)


def _given_value(args: Sequence[str], names: Sequence[str]) -> str | None:
    """The value the command line gave an option (``--x v`` or ``--x=v``), last one wins."""
    found = None
    for i, arg in enumerate(args):
        for name in names:
            if arg == name and i + 1 < len(args):
                found = args[i + 1]
            elif arg.startswith(name + "="):
                found = arg[len(name) + 1 :]
    return found


def one_line(exc: Any, args: Sequence[str]) -> str:
    """``forensic: error: ...`` for a click usage error: one line, control characters removed."""
    from ._terminal import clean_text

    message = exc.format_message()
    param = getattr(exc, "param", None)
    # A missing option's reason is built by format_message (its ``message`` is empty).
    if isinstance(exc, _BadParameter) and not isinstance(exc, _MissingParameter) and param is not None:
        opts = [o for o in (getattr(param, "opts", None) or []) if o.startswith("--")] or list(
            getattr(param, "opts", []) or []
        )
        hint = (
            max(opts, key=len)
            if opts and getattr(param, "param_type_name", "") == "option"
            else (param.name or "value")
        )
        value = _given_value(args, getattr(param, "opts", []) or [])
        message = f"{hint}{'' if value is None else ' ' + repr(value)}: {exc.message}"
    ctx = getattr(exc, "ctx", None)
    if ctx is not None and ctx.command.get_help_option(ctx) is not None:
        message += f" ({ctx.command_path} {ctx.help_option_names[0]})"
    return "forensic: error: " + " ".join(clean_text(message).split())


class OneLineErrorGroup(TyperGroup):
    """The root command group: usage errors are one line on stderr and exit code 2, and
    everything a command writes to stdout and stderr is cleaned of terminal controls.

    Parsing errors come from two places: the root's own arguments (:meth:`make_context`) and a
    subcommand's, parsed while the root runs (:meth:`invoke`). Both are caught here; everything
    else (exit codes, ``--help``, aborts) stays with click's standalone handling.
    """

    def main(self, *args: Any, **kwargs: Any) -> Any:
        # Every command's output, error lines and logs pass through one cleaner (see _terminal).
        from ._terminal import guard_streams

        with guard_streams():
            try:
                return super().main(*args, **kwargs)
            except Exception:
                # An internal error (exit 1): its traceback may quote a bundle, so it is printed
                # here, through the cleaner, not by typer's hook after the streams are restored.
                traceback.print_exc()
                raise SystemExit(1) from None

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any) -> Any:
        argv = list(args)
        try:
            ctx = super().make_context(info_name, args, parent=parent, **extra)
        except _ClickException as exc:
            _exit_one_line(exc, argv)
        ctx.meta["forensic.argv"] = argv
        return ctx

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except _ClickException as exc:
            _exit_one_line(exc, ctx.meta.get("forensic.argv", []))


def _exit_one_line(exc: Any, argv: Sequence[str]) -> NoReturn:
    if _NoArgsIsHelp is not None and isinstance(exc, _NoArgsIsHelp):
        raise exc  # a bare command prints its help, as before
    sys.stderr.write(one_line(exc, argv) + "\n")
    raise typer.Exit(2 if isinstance(exc, _click_mod.exceptions.UsageError) else exc.exit_code)
