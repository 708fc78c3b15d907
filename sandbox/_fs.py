"""Read-only, confined file access under one root folder.

Every path a tool names is relative to the root; ``..`` components are refused before anything
is opened. The walk itself is ``openat``-style: each component is opened relative to the file
descriptor of its parent folder with ``O_NOFOLLOW``, so no symlink is ever followed by the
kernel. A symlink met on the way is read (``readlinkat``) and followed by hand, lexically, and
only while it stays inside the root (absolute targets are refused). What is opened is checked
after opening (``fstat``): a read must land on a regular file, never a FIFO, device or socket.
Nothing is checked first and opened later, so a symlink swapped during a read cannot redirect it.

Text files may be stored gzip-compressed with a ``.gz`` suffix and are decompressed
transparently. Every read is capped (:data:`MAX_READ_BYTES`, decompressed) and checks the
working-time deadline (:mod:`forensic.sandbox.deadline`) between chunks.
"""

from __future__ import annotations

import builtins
import errno
import gzip
import os
import stat
import zlib
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from forensic.sandbox import deadline
from forensic.sandbox.errors import (
    CorruptInputError,
    NotAllowedError,
    NotFoundError,
    PathEscapeError,
    TruncatedStreamError,
)

#: Decompressed bytes one read may return. A bundle file larger than this is refused rather
#: than exhausting memory; real command outputs and logs are far smaller.
MAX_READ_BYTES = 256 * 1024 * 1024
#: Decompressed bytes a streaming reader that keeps only a bounded summary may pass through (the
#: fleet-wide counter scan reads a 2,048-host DCGM file of ~500 MB); the deadline still applies.
MAX_STREAM_BYTES = 4 * 1024 * 1024 * 1024
#: Longest line :meth:`ConfinedFS.iter_lines` yields; the rest of a longer line is dropped.
MAX_LINE_BYTES = 64 * 1024
#: Symlinks followed in one path before the walk gives up (the kernel's own limit is 40).
MAX_SYMLINKS = 40

_CHUNK = 1 << 20
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO must not wait for a writer; O_NOCTTY: a tty never becomes ours.
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY


class _Symlink(Exception):
    def __init__(self, index: int, target: str) -> None:
        self.index, self.target = index, target


class ConfinedFS:
    """Read-only access to the files under ``root``; nothing outside it is reachable."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root).resolve()
        #: Files opened for reading (real bundle-relative path -> times) and their stored bytes:
        #: what an investigation cost, for ``forensic bench investigate``.
        self.opened: dict[str, int] = {}
        self.bytes_opened = 0

    # -- the walk --------------------------------------------------------------------------
    def _parts(self, rel: str) -> list[str]:
        if "\x00" in rel:
            raise PathEscapeError(f"path {rel!r} contains a NUL byte")
        pure = PurePosixPath(rel.replace("\\", "/"))
        # Absolute paths are read as relative to the root: a replayed host's "/sys/..." lives
        # under its node folder. ".." is refused outright rather than normalised, so a path
        # that names a parent never reaches the filesystem at all.
        parts = [p for p in pure.parts if p not in ("/", "", ".")]
        if any(p == ".." for p in parts):
            raise PathEscapeError(f"path {rel!r} climbs out of the sandbox root ('..' is refused)")
        return parts

    def _open(self, rel: str, *, directory: bool = False) -> tuple[int, list[str]]:
        """An fd for ``rel`` (a folder with ``directory``) and the real parts below the root.

        FileNotFoundError when it does not exist; PathEscapeError when a symlink leads out.
        """
        parts = self._parts(rel)
        for _ in range(MAX_SYMLINKS + 1):
            try:
                return self._walk(parts, directory), parts
            except _Symlink as link:
                parts = self._follow(rel, parts, link)
        raise PathEscapeError(f"path {rel!r}: too many levels of symbolic links")

    def _follow(self, rel: str, parts: list[str], link: _Symlink) -> list[str]:
        if link.target.startswith("/"):
            raise PathEscapeError(f"path {rel!r} resolves outside the sandbox root (absolute symlink)")
        base = parts[: link.index]
        for p in PurePosixPath(link.target).parts:
            if p in ("", "."):
                continue
            if p == "..":
                if not base:
                    raise PathEscapeError(f"path {rel!r} resolves outside the sandbox root (symlink escape)")
                base.pop()
            else:
                base.append(p)
        return base + parts[link.index + 1 :]

    def _walk(self, parts: list[str], directory: bool) -> int:
        if not parts and not directory:
            raise IsADirectoryError(errno.EISDIR, "the root is a folder", "")
        fd = os.open(self.root, _DIR_FLAGS)
        try:
            for i, name in enumerate(parts):
                last = i == len(parts) - 1
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                if stat.S_ISLNK(st.st_mode):
                    raise _Symlink(i, os.readlink(name, dir_fd=fd))
                if not last or directory:
                    if not stat.S_ISDIR(st.st_mode):
                        raise NotADirectoryError(errno.ENOTDIR, "not a folder", name)
                    flags = _DIR_FLAGS
                else:
                    if not stat.S_ISREG(st.st_mode):
                        # Never open a FIFO, device or socket: opening one can block or act.
                        raise (
                            IsADirectoryError(errno.EISDIR, "not a regular file", name)
                            if stat.S_ISDIR(st.st_mode)
                            else _NotRegular(name)
                        )
                    flags = _FILE_FLAGS
                try:
                    nfd = os.open(name, flags, dir_fd=fd)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.EMLINK):  # swapped for a symlink since the stat
                        raise _Symlink(i, os.readlink(name, dir_fd=fd)) from None
                    raise
                os.close(fd)
                fd = nfd
                # The check that counts is this one, on what was actually opened.
                opened = os.fstat(fd)
                want = stat.S_ISDIR if (not last or directory) else stat.S_ISREG
                if not want(opened.st_mode):
                    raise _NotRegular(name)
            return fd
        except BaseException:
            os.close(fd)
            raise

    def _kind(self, rel: str) -> str | None:
        """'file', 'dir', 'other' or None (absent or outside), following inner symlinks."""
        for directory in (False, True):
            try:
                fd, _ = self._open(rel, directory=directory)
            except IsADirectoryError:
                continue
            except _NotRegular:
                return "other"
            except (OSError, PathEscapeError):
                return None
            os.close(fd)
            return "dir" if directory else "file"
        return None

    # -- queries ---------------------------------------------------------------------------
    def exists(self, rel: str) -> bool:
        kind = self._kind(rel)
        if kind is not None:
            return True
        return not rel.endswith(".gz") and self._kind(rel + ".gz") == "file"

    def is_dir(self, rel: str) -> bool:
        return self._kind(rel) == "dir"

    def list(self, rel: str) -> list[str]:
        """Entry names in a folder (``.gz`` suffixes removed), sorted; [] when absent."""
        try:
            fd, _ = self._open(rel, directory=True)
        except (FileNotFoundError, NotADirectoryError, _NotRegular):
            return []
        except OSError as exc:
            raise NotAllowedError(f"{rel}: cannot list ({exc.strerror})") from None
        try:
            names = set()
            with os.scandir(fd) as it:
                for entry in it:
                    name = entry.name
                    gz = name.endswith(".gz") and entry.is_file(follow_symlinks=False)
                    names.add(name[:-3] if gz else name)
            return sorted(names)
        finally:
            os.close(fd)

    def source_of(self, rel: str) -> str:
        """The bundle-relative path that actually holds ``rel`` (with ``.gz`` when compressed)."""
        try:
            fd, parts = self._open_file(rel)
        except NotFoundError:
            return "/".join(self._parts(rel))
        os.close(fd)
        return "/".join(parts)

    # -- reads -----------------------------------------------------------------------------
    def _open_file(self, rel: str) -> tuple[int, builtins.list[str]]:
        """An fd on the regular file holding ``rel`` (or ``rel.gz``) and its real parts."""
        for candidate in (rel, rel + ".gz") if not rel.endswith(".gz") else (rel,):
            try:
                return self._open(candidate)
            except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
                continue
            except _NotRegular:
                raise NotAllowedError(
                    f"{rel}: not a regular file (FIFO, device or socket); refused"
                ) from None
            except PermissionError:
                raise NotAllowedError(f"{rel}: permission denied") from None
            except OSError as exc:
                raise CorruptInputError(f"{rel}: cannot be read ({exc.strerror})") from None
        raise NotFoundError(f"{rel}: no such file in the sandbox")

    def open_binary(self, rel: str, *, cap: int | None = None):
        """A binary stream of the decompressed content of ``rel``, capped and deadline-checked.

        ``cap`` may lower the cap for a file whose parse costs many times its size (topology.json);
        it may be raised only by a reader that keeps nothing of what it streams past
        (:data:`MAX_STREAM_BYTES`, the counter scan of :mod:`forensic.sandbox.metric_scan`)."""
        fd, parts = self._open_file(rel)
        real = "/".join(parts)
        self.opened[real] = self.opened.get(real, 0) + 1
        try:
            self.bytes_opened += os.fstat(fd).st_size
        except OSError:
            pass
        raw = os.fdopen(fd, "rb", buffering=0)
        if parts[-1].endswith(".gz"):  # errors name the file as stored, .gz included
            return _Capped(gzip.GzipFile(fileobj=raw, mode="rb"), real, raw, cap)
        return _Capped(raw, rel, raw, cap)

    def read_bytes(self, rel: str, *, cap: int | None = None) -> bytes:
        """The decompressed content of ``rel``; ``cap`` (bytes) lowers the per-file cap for this read."""
        with self.open_binary(rel, cap=cap) as fh:
            return fh.read_all()

    def read_text(self, rel: str, *, cap: int | None = None) -> str:
        # Recorded outputs are whatever the machine printed: undecodable bytes become U+FFFD
        # instead of failing the read, so a stray binary byte loses one character, not a file.
        return self.read_bytes(rel, cap=cap).decode("utf-8", errors="replace")

    def iter_lines(self, rel: str, *, max_line: int = MAX_LINE_BYTES) -> Iterator[str]:
        """The lines of ``rel`` one at a time (without line ends), in bounded memory.

        A line longer than ``max_line`` bytes is cut there; the rest of it is skipped.
        """
        with self.open_binary(rel) as fh:
            pending = b""
            skipping = False
            while chunk := fh.read_chunk():
                start = 0
                while (nl := chunk.find(b"\n", start)) >= 0:
                    piece = chunk[start:nl]
                    if not skipping:
                        yield (pending + piece)[:max_line].decode("utf-8", errors="replace").rstrip("\r")
                    pending, skipping, start = b"", False, nl + 1
                if not skipping:
                    pending += chunk[start:]
                    if len(pending) > max_line:
                        yield pending[:max_line].decode("utf-8", errors="replace")
                        pending, skipping = b"", True
            if pending and not skipping:
                yield pending.decode("utf-8", errors="replace").rstrip("\r")

    def check_gzip(self, rel: str) -> str | None:
        """A reason when ``rel`` (a ``.gz``) is not a complete gzip stream, else None.

        Bounded like any read: a stream that decompresses past the cap is not judged here (the
        read that wants it will refuse it), so a gzip bomb costs at most the cap, not its size.
        """
        try:
            with self.open_binary(rel) as fh:
                while fh.read_chunk():
                    pass
        except CorruptInputError as exc:
            return None if "decompresses to more than" in str(exc) else str(exc)
        return None


class _NotRegular(Exception):
    """The walk met a FIFO, device or socket (or a folder swapped for one)."""


class _Capped:
    """Chunked reads with the size cap and the deadline checked between chunks."""

    def __init__(self, fh, rel: str, raw, cap: int | None = None) -> None:
        self._fh, self._rel, self._raw = fh, rel, raw
        # Read at open, not at import: the cap is one module constant that tests may lower.
        self._cap = MAX_READ_BYTES if cap is None else min(cap, MAX_STREAM_BYTES)
        self._total = 0
        self._gz = isinstance(fh, gzip.GzipFile)

    def __enter__(self) -> _Capped:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self._fh.close()
        finally:
            self._raw.close()

    def read_chunk(self) -> bytes:
        deadline.check(f"reading {self._rel}")
        try:
            # One raw read per chunk for a gzip stream: a buffered read that meets the end of a
            # truncated stream part way would drop what it had decompressed before it.
            chunk = self._fh.read1(_CHUNK) if self._gz else self._fh.read(_CHUNK)
        except BlockingIOError:
            raise NotAllowedError(f"{self._rel}: not a regular file; refused") from None
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise TruncatedStreamError(f"{self._rel}: corrupt or truncated gzip ({exc})") from None
        except OSError as exc:
            if self._gz:
                raise TruncatedStreamError(f"{self._rel}: corrupt or truncated gzip ({exc})") from None
            raise CorruptInputError(f"{self._rel}: cannot be read ({exc.strerror or exc})") from None
        self._total += len(chunk)
        if self._total > self._cap:
            what = "decompresses to" if self._gz else "is"
            which = "the per-file cap" if self._cap == MAX_READ_BYTES else "its cap"
            raise CorruptInputError(f"{self._rel}: {what} more than {self._cap} bytes ({which})")
        return chunk

    def read_all(self) -> bytes:
        out = bytearray()
        try:
            while chunk := self.read_chunk():
                out += chunk
        except TruncatedStreamError as exc:
            # A stream cut short (or broken part way): what decompressed before the damage is
            # handed on with the error, so a reader can use it and say what was lost.
            raise TruncatedStreamError(str(exc), readable=bytes(out)) from None
        return bytes(out)
