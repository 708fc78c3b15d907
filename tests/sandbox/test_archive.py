"""Bundles as archives: read like folders, and confined like files."""

from __future__ import annotations

import gc
import io
import os
import tarfile
import tempfile
import zipfile
from pathlib import Path

import pytest
from forensic.sandbox import Bundle, CorruptInputError, NotABundleError, PathEscapeError
from forensic.sandbox.archive import extract_archive, is_archive

from tests.conftest import HOSTS, build_bundle


def _tar(path: Path, folder: Path, arc_prefix: str = "") -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for p in sorted(folder.rglob("*")):
            tf.add(p, arcname=arc_prefix + p.relative_to(folder).as_posix(), recursive=False)
    return path


def _zip(path: Path, folder: Path, arc_prefix: str = "") -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                zf.write(p, arc_prefix + p.relative_to(folder).as_posix())
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return build_bundle(tmp_path / "src", "pcie_downtrain")


@pytest.mark.parametrize(
    "kind, prefix", [("tar.gz", ""), ("tar.gz", "incident-42/"), ("zip", ""), ("zip", "x/")]
)
def test_an_archive_reads_exactly_like_its_folder(
    folder: Path, tmp_path: Path, kind: str, prefix: str
) -> None:
    make = _tar if kind == "tar.gz" else _zip
    archive = make(tmp_path / f"b.{kind}", folder, prefix)
    a, f = Bundle(archive), Bundle(folder)
    assert a.incident == f.incident and a.topology == f.topology and a.host_names() == f.host_names()
    dev = "/sys/bus/pci/devices/0000:5d:00.0/current_link_width"
    assert a.host(HOSTS[1]).read(dev) == f.host(HOSTS[1]).read(dev)
    assert a.fs.read_text("job/steps.csv") == f.fs.read_text("job/steps.csv")
    unpacked = a.root
    assert (
        unpacked != f.root
        and oct(os.stat(unpacked if not prefix else unpacked.parent).st_mode & 0o777) == "0o700"
    )
    host = a.host(HOSTS[1])
    del a
    gc.collect()
    assert host.read(dev) == "16\n"  # a host handed out keeps the copy alive
    del host
    gc.collect()
    assert not unpacked.exists()  # the private copy goes with the last reader


def test_an_evaluation_case_archive_is_read_from_its_bundle(folder: Path, tmp_path: Path) -> None:
    case = tmp_path / "case"
    (case).mkdir()
    folder.rename(case / "bundle")
    (case / "truth.json").write_text('{"root_cause": "pcie_downtrain"}')
    b = Bundle(_tar(tmp_path / "case.tgz", case))
    assert b.root.name == "bundle" and not b.fs.exists("truth.json")


def _hostile_tar(path: Path, build) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        inc = b'{"id": "x"}'
        ti = tarfile.TarInfo("incident.json")
        ti.size = len(inc)
        tf.addfile(ti, io.BytesIO(inc))
        build(tf)
    return path


def _file(tf: tarfile.TarFile, name: str, data: bytes = b"pwned") -> None:
    ti = tarfile.TarInfo(name)
    ti.size = len(data)
    tf.addfile(ti, io.BytesIO(data))


def _link(tf: tarfile.TarFile, name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> None:
    ti = tarfile.TarInfo(name)
    ti.type = kind
    ti.linkname = target
    tf.addfile(ti)


def _special(tf: tarfile.TarFile, name: str, kind: bytes) -> None:
    ti = tarfile.TarInfo(name)
    ti.type = kind
    tf.addfile(ti)


HOSTILE_TARS = {
    "absolute": (lambda tf: _file(tf, "/tmp/forensic-pwned-abs"), PathEscapeError),
    "dotdot": (lambda tf: _file(tf, "nodes/../../forensic-pwned"), PathEscapeError),
    "dotdot_first": (lambda tf: _file(tf, "../forensic-pwned"), PathEscapeError),
    "symlink_out": (lambda tf: _link(tf, "nodes/h/sys/x", "/etc/passwd"), PathEscapeError),
    "symlink_dir_then_write": (
        lambda tf: (_link(tf, "nodes", "/tmp"), _file(tf, "nodes/forensic-pwned")),
        PathEscapeError,
    ),
    "hardlink": (lambda tf: _link(tf, "nodes/h/sys/x", "/etc/passwd", tarfile.LNKTYPE), PathEscapeError),
    "fifo": (lambda tf: _special(tf, "nodes/fifo", tarfile.FIFOTYPE), PathEscapeError),
    "device": (lambda tf: _special(tf, "nodes/dev", tarfile.CHRTYPE), PathEscapeError),
    "windows_drive": (lambda tf: _file(tf, "C:/forensic-pwned"), PathEscapeError),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_TARS))
def test_hostile_tar_members_are_refused_before_anything_is_written(tmp_path: Path, case: str) -> None:
    build, error = HOSTILE_TARS[case]
    archive = _hostile_tar(tmp_path / "evil.tar.gz", build)
    before = set(Path(tempfile.gettempdir()).glob("forensic-bundle-*"))
    with pytest.raises(error):
        Bundle(archive)
    assert not Path("/tmp/forensic-pwned-abs").exists() and not (tmp_path.parent / "forensic-pwned").exists()
    assert set(Path(tempfile.gettempdir()).glob("forensic-bundle-*")) <= before  # nothing left behind


def test_members_past_the_caps_are_refused(folder: Path, tmp_path: Path) -> None:
    archive = _tar(tmp_path / "b.tar.gz", folder)
    with pytest.raises(CorruptInputError, match="expands to"):
        extract_archive(archive, max_member_bytes=100)
    with pytest.raises(CorruptInputError, match="in total"):
        extract_archive(archive, max_total_bytes=10_000)


def test_a_zip_bomb_is_refused_by_its_declared_size(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("incident.json", '{"id": "x"}')
        zf.writestr("job/steps.csv", b"0" * (4 * 1024 * 1024))
    assert bomb.stat().st_size < 100_000
    with pytest.raises(CorruptInputError, match="expands to"):
        extract_archive(bomb, max_member_bytes=1024 * 1024)


@pytest.mark.parametrize("name", ["../evil", "/abs/evil", "a/../../evil", "C:\\evil"])
def test_hostile_zip_names_are_refused(tmp_path: Path, name: str) -> None:
    z = tmp_path / "evil.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("incident.json", '{"id": "x"}')
        zf.writestr(zipfile.ZipInfo(name), "pwned")
    with pytest.raises(PathEscapeError):
        Bundle(z)


def test_a_zip_symlink_is_refused(tmp_path: Path) -> None:
    z = tmp_path / "evil.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("incident.json", '{"id": "x"}')
        info = zipfile.ZipInfo("nodes/h/sys/x")
        info.external_attr = 0o120777 << 16
        zf.writestr(info, "/etc/passwd")
    with pytest.raises(PathEscapeError, match="link"):
        Bundle(z)


def test_truncated_and_fake_archives_are_corrupt_input(folder: Path, tmp_path: Path) -> None:
    archive = _tar(tmp_path / "b.tar.gz", folder)
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
    with pytest.raises(CorruptInputError):
        Bundle(cut)
    fake = tmp_path / "fake.zip"
    fake.write_text("not a zip")
    with pytest.raises(CorruptInputError):
        Bundle(fake)
    with pytest.raises(NotABundleError):
        Bundle(tmp_path / "missing.tar.gz")


def test_an_archive_without_incident_json_is_not_a_bundle(tmp_path: Path) -> None:
    z = tmp_path / "empty.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("readme.txt", "hello")
    with pytest.raises(NotABundleError):
        Bundle(z)


def test_is_archive_by_suffix() -> None:
    assert is_archive("a.tar.gz") and is_archive("A.ZIP") and is_archive("x.tgz") and not is_archive("folder")
