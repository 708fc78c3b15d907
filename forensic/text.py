"""Input helpers the text parsers share: coercion to text, capped line reading, bounded warnings.

Below the sandbox and the tools (:mod:`forensic.tools.parsers._text` re-exports it), so the
OpenMetrics parser the sandbox's metric sources use needs neither.

Caps stay with each parser module (its ``_MAX_LINE`` / ``_MAX_WARNINGS``), which passes them in.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from forensic.errors import ParseError


def as_text(text: object) -> str:
    """``text`` as ``str``; bytes are decoded as UTF-8 with replacement. Anything else raises :class:`ParseError`."""
    if isinstance(text, str):
        return text
    if isinstance(text, (bytes, bytearray)):
        return bytes(text).decode("utf-8", errors="replace")
    raise ParseError(f"expected text, got {type(text).__name__}")


def _split_lazily(text: str, keep_ends: bool) -> Iterator[str]:
    """``text.split("\\n")`` (or with the ``\\n`` kept, as ``io.StringIO`` iterates) one line at a
    time: a 250 MB text is not copied into a list of millions of strings."""
    start, n = 0, len(text)
    while True:
        end = text.find("\n", start)
        if end < 0:
            if not keep_ends or start < n:
                yield text[start:]
            return
        yield text[start : end + 1 if keep_ends else end]
        start = end + 1


def as_lines(source: object) -> Iterable[str]:
    """Lines of ``source``: text or bytes (split on ``\\n``), or already an iterable of lines
    (``ConfinedFS.iter_lines``), which is consumed one line at a time, never held whole."""
    if isinstance(source, (str, bytes, bytearray)):
        return _split_lazily(as_text(source), keep_ends=True)
    if isinstance(source, Iterable) and not isinstance(source, (dict, set)):
        return source
    raise ParseError(f"expected text, got {type(source).__name__}")


def plain_lines(source: object) -> Iterable[str]:
    """Lines without their ``\\n``: text and bytes split whole (as before), an iterable of lines
    (a stream from the sandbox) passed through one line at a time."""
    if isinstance(source, (str, bytes, bytearray)):
        return _split_lazily(as_text(source), keep_ends=False)
    return as_lines(source)


def numbered_lines(
    text: str | Iterable[str], max_line: int, warnings: BoundedWarnings | None = None
) -> Iterator[tuple[int, str | None]]:
    """(1-based line number, line without its ending) pairs, split on ``\\n`` only.

    ``text`` may also be an iterable of lines, read as a stream (bounded memory).
    A line longer than ``max_line`` characters (its ending included) is too long to be real output:
    it comes back as None and, when ``warnings`` is given, adds ``line N: longer than ... skipped``.
    """
    for number, line in enumerate(as_lines(text), start=1):
        if not isinstance(line, str):
            raise ParseError(f"expected lines of text, got {type(line).__name__}")
        if len(line) > max_line:
            if warnings is not None:
                warnings.add(f"line {number}: longer than {max_line} bytes, skipped")
            yield number, None
        else:
            yield number, line.rstrip("\r\n")


class BoundedWarnings(list[str]):
    """A warning list that stops growing at ``cap``, so a hostile file cannot make it huge.

    The first ``cap`` messages are kept; past that one marker is appended: ``further warnings
    suppressed``, or with ``count_dropped`` ``... and N more warnings`` (kept up to date).
    """

    def __init__(self, cap: int, *, count_dropped: bool = False) -> None:
        super().__init__()
        self.cap = cap
        self.count_dropped = count_dropped
        self.dropped = 0
        self._marker_at: int | None = None

    def add(self, message: str) -> None:
        if self._marker_at is None and len(self) < self.cap:
            self.append(message)
            return
        self.dropped += 1
        marker = (
            f"... and {self.dropped} more warnings" if self.count_dropped else "further warnings suppressed"
        )
        if self._marker_at is None:
            self._marker_at = len(self)
            self.append(marker)
        else:
            self[self._marker_at] = marker


__all__ = ["BoundedWarnings", "as_lines", "as_text", "numbered_lines", "plain_lines"]
