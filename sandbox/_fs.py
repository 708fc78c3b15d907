"""Read-only, confined file access under one root folder.

Every path a tool names is relative to the root; ``..`` components, absolute escapes and
symlinks that resolve outside the root are refused before anything is opened. Text files may be
stored gzip-compressed with a ``.gz`` suffix and are decompressed transparently.
"""

from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path, PurePosixPath

from forensic.sandbox.errors import CorruptInputError, NotFoundError, PathEscapeError

#: Decompressed bytes one read may return. A bundle file larger than this is refused rather
#: than exhausting memory; real command outputs and logs are far smaller.
MAX_READ_BYTES = 256 * 1024 * 1024


class ConfinedFS:
    """Read-only access to the files under ``root``; nothing outside it is reachable."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root).resolve()

    def _resolve(self, rel: str) -> Path:
        if "\x00" in rel:
            raise PathEscapeError(f"path {rel!r} contains a NUL byte")
        pure = PurePosixPath(rel.replace("\\", "/"))
        # Absolute paths are read as relative to the root: a replayed host's "/sys/..." lives
        # under its node folder. ".." is refused outright rather than normalised, so a path
        # that names a parent never reaches the filesystem at all.
        parts = [p for p in pure.parts if p not in ("/", "", ".")]
        if any(p == ".." for p in parts):
            raise PathEscapeError(f"path {rel!r} climbs out of the sandbox root ('..' is refused)")
        candidate = self.root.joinpath(*parts)
        real = Path(os.path.realpath(candidate))
        if real != self.root and self.root not in real.parents:
            raise PathEscapeError(f"path {rel!r} resolves outside the sandbox root (symlink escape)")
        return real

    def exists(self, rel: str) -> bool:
        try:
            p = self._resolve(rel)
        except PathEscapeError:
            return False
        if p.exists():
            return True
        return p.suffix != ".gz" and Path(str(p) + ".gz").is_file() and self._gz_ok(rel)

    def _gz_ok(self, rel: str) -> bool:
        try:
            self._resolve(rel + ".gz")
        except PathEscapeError:
            return False
        return True

    def is_dir(self, rel: str) -> bool:
        try:
            return self._resolve(rel).is_dir()
        except PathEscapeError:
            return False

    def list(self, rel: str) -> list[str]:
        """Entry names in a folder (``.gz`` suffixes removed), sorted; [] when absent."""
        p = self._resolve(rel)
        if not p.is_dir():
            return []
        names = set()
        for entry in p.iterdir():
            name = entry.name
            names.add(name[:-3] if name.endswith(".gz") and entry.is_file() else name)
        return sorted(names)

    def source_of(self, rel: str) -> str:
        """The bundle-relative path that actually holds ``rel`` (with ``.gz`` when compressed)."""
        p = self._resolve(rel)
        if not p.exists() and Path(str(p) + ".gz").is_file():
            p = self._resolve(rel + ".gz")
        return p.relative_to(self.root).as_posix()

    def read_bytes(self, rel: str) -> bytes:
        p = self._resolve(rel)
        if p.is_file():
            if p.suffix == ".gz":
                return _gunzip(p, rel)
            if p.stat().st_size > MAX_READ_BYTES:
                raise CorruptInputError(f"{rel}: file is larger than {MAX_READ_BYTES} bytes")
            return p.read_bytes()
        gz = Path(str(p) + ".gz")
        if gz.is_file():
            self._resolve(rel + ".gz")
            return _gunzip(gz, rel + ".gz")
        raise NotFoundError(f"{rel}: no such file in the sandbox")

    def read_text(self, rel: str) -> str:
        # Recorded outputs are whatever the machine printed: undecodable bytes become U+FFFD
        # instead of failing the read, so a stray binary byte loses one character, not a file.
        return self.read_bytes(rel).decode("utf-8", errors="replace")


def _gunzip(path: Path, rel: str) -> bytes:
    out = bytearray()
    try:
        with gzip.open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                out += chunk
                if len(out) > MAX_READ_BYTES:
                    raise CorruptInputError(f"{rel}: decompresses to more than {MAX_READ_BYTES} bytes")
    except (EOFError, gzip.BadGzipFile, zlib.error, OSError) as exc:
        raise CorruptInputError(f"{rel}: corrupt or truncated gzip ({exc})") from None
    return bytes(out)


def check_gzip(path: Path) -> str | None:
    """Return a reason when ``path`` is not a complete gzip stream, else None."""
    try:
        with gzip.open(path, "rb") as fh:
            while fh.read(1 << 22):
                pass
    except (EOFError, gzip.BadGzipFile, zlib.error, OSError) as exc:
        return str(exc) or type(exc).__name__
    return None
