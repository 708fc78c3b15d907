"""Bundles shipped as one file: ``.tar.gz`` / ``.tgz`` / ``.tar`` / ``.zip``.

An archive is unpacked into a private temporary folder (mode 0700) under the same rules that
confine every read: no absolute member names, no ``..``, no links (a link inside a bundle is
never needed, and one that leaves it is an escape), no devices or FIFOs, and no member or total
that expands past a cap. Every member is checked before anything is written, so a refused
archive leaves nothing behind. A tar archive is checked as it is read, member by member, so one
whose declared sizes pass the caps is refused at that member, before the rest is decompressed.
Unpacking checks the working-time deadline (:mod:`forensic.sandbox.deadline`) per member and per
chunk, so ``--budget-wall-s`` bounds it: running out raises WallTimeExceeded naming the archive and
how far it got, and removes what was written. The caller owns the folder; :class:`forensic.sandbox.Bundle` removes
it when the bundle is garbage-collected or the process exits.
"""

from __future__ import annotations

import os
import shutil
import stat
import tarfile
import tempfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import IO

from forensic.sandbox import deadline
from forensic.sandbox._fs import MAX_READ_BYTES
from forensic.sandbox.errors import CorruptInputError, NotABundleError, PathEscapeError

#: Suffixes read as archives.
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".zip")
#: Bytes one member may expand to (the same cap as one read).
MAX_MEMBER_BYTES = MAX_READ_BYTES
#: Bytes all members together may expand to (by their declared sizes, checked as each header is
#: read). Below it, the working-time budget bounds unpacking.
MAX_TOTAL_BYTES = 8 * 1024 * 1024 * 1024
#: Members one archive may hold.
MAX_MEMBERS = 2_000_000


def is_archive(path: Path | str) -> bool:
    """Whether ``path`` names an archive by its suffix (it need not exist)."""
    return str(path).lower().endswith(ARCHIVE_SUFFIXES)


def _check_name(name: str, archive: Path) -> str:
    if "\x00" in name:
        raise PathEscapeError(f"{archive.name}: member {name!r} contains a NUL byte")
    norm = name.replace("\\", "/")
    pure = PurePosixPath(norm)
    if norm.startswith("/") or pure.is_absolute() or (len(norm) > 1 and norm[1] == ":"):
        raise PathEscapeError(f"{archive.name}: member {name!r} has an absolute name")
    parts = [p for p in pure.parts if p not in ("", ".")]
    if ".." in parts:
        raise PathEscapeError(f"{archive.name}: member {name!r} climbs out of the archive ('..')")
    return "/".join(parts)


class _Budget:
    def __init__(self, archive: Path, max_member: int, max_total: int) -> None:
        self.archive, self.max_member, self.max_total = archive, max_member, max_total
        self.total = 0
        self.count = 0
        self.written = 0

    def check_time(self, doing: str) -> None:
        """Raise WallTimeExceeded, naming the archive and the progress, when the deadline has passed."""
        deadline.check(
            f"{doing} {self.archive.name} ({self.count} members checked, {self.written} bytes written)"
        )

    def add(self, name: str, size: int) -> None:
        self.check_time("checking")
        self.count += 1
        if self.count > MAX_MEMBERS:
            raise CorruptInputError(f"{self.archive.name}: more than {MAX_MEMBERS} members")
        if size > self.max_member:
            raise CorruptInputError(
                f"{self.archive.name}: member {name!r} expands to {size} bytes (cap {self.max_member})"
            )
        self.total += size
        if self.total > self.max_total:
            raise CorruptInputError(
                f"{self.archive.name}: members expand past {self.max_total} bytes in total "
                f"(the archive cap; refused at member {name!r})"
            )


def extract_archive(
    archive: Path | str, *, max_member_bytes: int = MAX_MEMBER_BYTES, max_total_bytes: int = MAX_TOTAL_BYTES
) -> Path:
    """Check then unpack ``archive`` into a new private temporary folder; return that folder.

    Raises PathEscapeError for a member that would leave the folder (absolute, ``..``, a link),
    CorruptInputError for an unreadable archive or one past the caps, NotABundleError when the
    file does not exist or is not an archive, WallTimeExceeded when the deadline in force passes.
    """
    archive = Path(archive)
    if not archive.is_file():
        raise NotABundleError(f"{archive}: no such file")
    if not is_archive(archive):
        raise NotABundleError(f"{archive}: not a bundle archive (expected {', '.join(ARCHIVE_SUFFIXES)})")
    dest = Path(tempfile.mkdtemp(prefix="forensic-bundle-"))
    os.chmod(dest, 0o700)
    try:
        if archive.name.lower().endswith(".zip"):
            _unzip(archive, dest, _Budget(archive, max_member_bytes, max_total_bytes))
        else:
            _untar(archive, dest, _Budget(archive, max_member_bytes, max_total_bytes))
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    return dest


def _untar(archive: Path, dest: Path, budget: _Budget) -> None:
    try:
        with tarfile.open(archive, "r:*") as tf:
            # One member at a time (not getmembers): a member past the caps is refused before the
            # stream behind it is decompressed, and the deadline is checked between members. The
            # whole stream is still read before anything is written: a truncated archive fails here.
            members = []
            while (m := tf.next()) is not None:
                members.append(m)
                name = _check_name(m.name, archive)
                if m.issym() or m.islnk():
                    raise PathEscapeError(f"{archive.name}: member {m.name!r} is a link (links are refused)")
                if not (m.isfile() or m.isdir()):
                    raise PathEscapeError(
                        f"{archive.name}: member {m.name!r} is a device, FIFO or other special file"
                    )
                budget.add(name, m.size if m.isfile() else 0)
            for m in members:
                name = _check_name(m.name, archive)
                if not name:
                    continue
                target = dest / name
                if m.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                src = tf.extractfile(m)
                if src is None:
                    raise CorruptInputError(f"{archive.name}: member {m.name!r} cannot be read")
                _copy_capped(src, target, m.size, archive, m.name, budget)
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise CorruptInputError(f"{archive.name}: unreadable tar archive ({exc})") from None


def _unzip(archive: Path, dest: Path, budget: _Budget) -> None:
    try:
        with zipfile.ZipFile(archive) as zf:
            infos = zf.infolist()
            for info in infos:
                name = _check_name(info.filename, archive)
                mode = info.external_attr >> 16
                kind = stat.S_IFMT(mode)  # 0 when the zip was written without Unix modes
                if stat.S_ISLNK(mode):
                    raise PathEscapeError(
                        f"{archive.name}: member {info.filename!r} is a link (links are refused)"
                    )
                if kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
                    raise PathEscapeError(f"{archive.name}: member {info.filename!r} is a special file")
                budget.add(name, info.file_size)
            for info in infos:
                name = _check_name(info.filename, archive)
                if not name:
                    continue
                target = dest / name
                if info.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src:
                    _copy_capped(src, target, info.file_size, archive, info.filename, budget)
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        EOFError,
        OSError,
        NotImplementedError,
        RuntimeError,
    ) as exc:
        raise CorruptInputError(f"{archive.name}: unreadable zip archive ({exc})") from None


def _copy_capped(
    src: IO[bytes], target: Path, declared: int, archive: Path, name: str, budget: _Budget
) -> None:
    # The declared size was checked against the caps; never write more than it, whatever the stream says.
    written = 0
    with open(target, "xb") as out:
        while True:
            budget.check_time("unpacking")
            chunk = src.read(1 << 20)
            if not chunk:
                break
            budget.written += len(chunk)
            written += len(chunk)
            if written > declared:
                raise CorruptInputError(f"{archive.name}: member {name!r} is larger than it declares")
            out.write(chunk)


def bundle_root(folder: Path) -> Path:
    """The bundle inside an unpacked archive: the folder itself, or its one top-level folder."""
    if (
        (folder / "incident.json").is_file()
        or (folder / "incident.json.gz").is_file()
        or (folder / "bundle").is_dir()
    ):
        return folder
    entries = [p for p in folder.iterdir() if not p.name.startswith(".")]
    if len(entries) == 1 and entries[0].is_dir():
        return entries[0]
    return folder
