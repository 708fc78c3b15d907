"""The one way a TOML file becomes a validated pydantic model: fleet files, serve.toml,
executors.toml, price tables and playbooks all load through :func:`load_toml`.

Every failure is one line that names the file, raised as the caller's own error class (each layer
keeps its place in the error tree of :mod:`forensic.sandbox.errors`):

- ``fleet.toml: no such fleet file``
- ``fleet.toml: cannot read: Permission denied`` (unreadable, a folder, not UTF-8)
- ``fleet.toml: not valid TOML (Expected '=' after a key ... (line 3, column 7))``
- ``fleet.toml: agents.url_template: Field required`` (the first validation error, with its key
  path; ``(top level)`` for the whole document)

Standard library and pydantic only.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

__all__ = ["first_error", "load_toml", "read_toml"]

M = TypeVar("M", bound=BaseModel)


def first_error(exc: ValidationError) -> str:
    """``key.path: message`` of a validation error's first problem, as a person reads it."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "(top level)"
    return f"{where}: {first['msg'].removeprefix('Value error, ')}"


def read_toml(path: Path | str, *, error: type[Exception], what: str = "config file") -> dict[str, Any]:
    """The parsed document at ``path``; ``error`` with one line naming the file otherwise."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{path}: no such {what}") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise error(f"{path}: cannot read: {reason}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: not valid TOML ({exc})") from None
    except RecursionError:  # tomllib recurses once per nested array or inline table
        raise error(f"{path}: not valid TOML (nested too deeply)") from None


def load_toml(
    path: Path | str,
    model: type[M],
    *,
    error: type[Exception],
    what: str = "config file",
    extra: dict[str, Any] | None = None,
) -> M:
    """``model`` validated from the TOML file at ``path`` (with ``extra`` keys merged over it)."""
    data = read_toml(path, error=error, what=what)
    try:
        return model.model_validate({**data, **(extra or {})})
    except ValidationError as exc:
        raise error(f"{path}: {first_error(exc)}") from None
