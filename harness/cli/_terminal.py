"""Text from a bundle or a model, made safe to print on a terminal: one choke point for output.

A title, a host or file name, a log line quoted in a finding, a model's answer: any of them may
carry escape sequences (clear the screen, retitle the window, write the clipboard with OSC 52,
move the cursor up and rewrite a printed ``forensic approve`` line) or bidirectional overrides
that make a line read differently from what it holds. :func:`clean_text` shows every such
character as a visible ``\\uXXXX`` escape instead: the C0 controls but newline and tab, DEL, the
C1 controls (U+0080-U+009F, CSI among them) and the bidi overrides and isolates (U+202A-U+202E,
U+2066-U+2069). The escape is JSON's own, so a JSON document that carried such a character raw
still parses to the same strings.

Two places apply it to everything a command prints, so that no call site can forget:

- :func:`guard_streams` puts :class:`SafeStream` around ``sys.stdout`` and ``sys.stderr`` while a
  command runs (the root command group does this): plain writes, ``typer.echo``, error lines
  and log records all pass through it. Only a protocol spoken to a program on stdout (``forensic
  mcp`` over stdio) is let past, by :func:`program_stdout`.
- :class:`SafeConsole` (made by :func:`console`) is the rich console every command prints with:
  it cleans the text of every segment it renders and keeps its own styling. Rich consoles write
  beneath the guard (it names the stream beneath as ``rich_proxied_file``, which rich honours),
  since styling is escape sequences the guard would show as text; so a command never prints
  through a plain ``rich.console.Console`` (a test holds the code to that), and typer's own rich
  console prints only its help. Rich markup in data (``[red]``, ``[link=...]``) is another matter:
  data goes to rich as :class:`rich.text.Text` or through :func:`rich.markup.escape`, never as markup.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import IO, Any

from rich.console import Console
from rich.segment import Segment

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _visible(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def clean_text(text: str) -> str:
    """``text`` with every control character (but newline and tab) and bidi override shown as ``\\uXXXX``."""
    return _UNSAFE.sub(_visible, text)


def terminal_safe(value: Any) -> Any:
    """A copy of a JSON-like value with every string (keys too) cleaned."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {terminal_safe(k): terminal_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [terminal_safe(v) for v in value]
    return value


class SafeStream:
    """A text stream that cleans what is written to it before the stream beneath sees it.

    It has no ``buffer``: writers that would go round the text layer (click's echo looks for
    one) write text here instead. Rich consoles write to :attr:`rich_proxied_file`, beneath it.
    """

    def __init__(self, raw: IO[str]) -> None:
        self.raw = raw

    @property
    def rich_proxied_file(self) -> IO[str]:
        return self.raw

    def write(self, text: str) -> int:
        self.raw.write(clean_text(text))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        if name == "buffer":
            raise AttributeError(name)
        return getattr(self.raw, name)


@contextmanager
def guard_streams() -> Iterator[None]:
    """Clean everything written to ``sys.stdout`` and ``sys.stderr`` until the block ends."""
    saved = sys.stdout, sys.stderr
    if sys.stdout is not None and not isinstance(sys.stdout, SafeStream):
        sys.stdout = SafeStream(sys.stdout)
    if sys.stderr is not None and not isinstance(sys.stderr, SafeStream):
        sys.stderr = SafeStream(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


@contextmanager
def program_stdout() -> Iterator[None]:
    """``sys.stdout`` as it was, while it carries a protocol to a program (MCP over stdio: JSON-RPC
    frames, which the SDK writes to the binary buffer), not text to a person."""
    saved = sys.stdout
    if isinstance(saved, SafeStream):
        sys.stdout = saved.raw
    try:
        yield
    finally:
        sys.stdout = saved


class SafeConsole(Console):
    """A rich console that keeps its own styling and cleans the text it was given."""

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        # Control segments are rich's own cursor moves (status lines); every other segment's
        # text came from a caller and may hold anything.
        return super()._render_buffer(
            seg if seg.control else Segment(clean_text(seg.text), seg.style) for seg in buffer
        )


def console(*, stderr: bool = False, **options: Any) -> Console:
    """The console a command prints with (``stderr`` for messages beside the output)."""
    return SafeConsole(stderr=stderr, **options)
