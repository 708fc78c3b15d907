"""The audit log: append-only JSON lines, each carrying the hash of the line before it.

Every decision on a proposal, counted or refused, becomes one line. Each line holds
``prev`` = SHA-256 of the previous line's bytes (64 zeros for the first), so editing,
removing or reordering any line breaks the chain at the line after it, and
:func:`verify` (``forensic audit verify``) says where. The last line has no successor to
vouch for it: compare the head hash that ``verify`` prints with one kept elsewhere to
detect a truncated or rewritten tail.

The file is opened with ``O_NOFOLLOW`` and must be a regular file owned by the user writing
it; a symlink, FIFO or another user's file is refused (:class:`AuditError`). Appends take an
exclusive ``flock`` so that two ``approve`` commands never interleave or fork the chain.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from forensic.sandbox.errors import ForensicError

GENESIS = "0" * 64


class AuditError(ForensicError):
    """The audit log cannot be written or read safely."""


def _digest(line: bytes) -> str:
    return hashlib.sha256(line.rstrip(b"\n")).hexdigest()


def _open(path: Path, flags: int) -> int:
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o600)
    except OSError as exc:
        why = "it is a symlink" if exc.errno == 40 else exc.strerror
        raise AuditError(f"audit log {path}: cannot open ({why})") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise AuditError(f"audit log {path}: not a regular file; refused")
    if flags & os.O_WRONLY or flags & os.O_RDWR:
        if st.st_uid != os.getuid():
            os.close(fd)
            raise AuditError(f"audit log {path}: owned by another user (uid {st.st_uid}); refused")
    return fd


def _last_line(fd: int) -> bytes | None:
    size = os.fstat(fd).st_size
    if size == 0:
        return None
    pos, tail = size, b""
    while pos > 0:
        step = min(65536, pos)
        pos -= step
        tail = os.pread(fd, step, pos) + tail
        body = tail[:-1] if tail.endswith(b"\n") else tail
        if (nl := body.rfind(b"\n")) >= 0:
            return body[nl + 1 :]
    return tail.rstrip(b"\n")


def append(path: Path, entries: list[dict[str, Any]]) -> None:
    """Append ``entries`` as chained JSON lines; existing lines are never rewritten."""
    if not entries:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AuditError(f"audit log {path}: cannot create its folder ({exc.strerror})") from None
    fd = _open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        last = _last_line(fd)
        prev = GENESIS if last is None else _digest(last)
        out = bytearray()
        for entry in entries:
            line = json.dumps({**entry, "prev": prev}, sort_keys=True, allow_nan=False).encode()
            out += line + b"\n"
            prev = _digest(line)
        try:
            os.write(fd, bytes(out))
            os.fsync(fd)
        except OSError as exc:
            raise AuditError(f"audit log {path}: cannot write ({exc.strerror})") from None
    finally:
        os.close(fd)


def verify(path: Path) -> tuple[int, str]:
    """(lines, head hash) of an intact chain; AuditError naming the first broken line."""
    n, head = 0, GENESIS
    for line_no, _, line_hash in _chain(path):
        n, head = line_no, line_hash
    return n, head


def entries(path: Path) -> list[dict[str, Any]]:
    """Every entry of an intact chain, oldest first; AuditError naming the first broken line."""
    return [entry for _, entry, _ in _chain(path)]


def _chain(path: Path) -> Iterator[tuple[int, dict[str, Any], str]]:
    """(line number, entry, hash of the line) for each line, checking each link as it goes."""
    fd = _open(path, os.O_RDONLY)
    prev = GENESIS
    with os.fdopen(fd, "rb") as fh:
        for n, line in enumerate(fh, start=1):
            try:
                entry = json.loads(line)
            except (ValueError, RecursionError):
                raise AuditError(f"audit log {path}: line {n} is not JSON") from None
            if not isinstance(entry, dict) or entry.get("prev") != prev:
                raise AuditError(
                    f"audit log {path}: the chain breaks at line {n} "
                    f"(a line before it was edited, removed or reordered)"
                )
            prev = _digest(line)
            yield n, entry, prev
