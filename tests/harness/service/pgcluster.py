"""A throwaway PostgreSQL 15 cluster in a temp folder on a free loopback port (never the packaged service)."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from forensic.harness.service.bench import free_port


def pg_bin() -> Path | None:
    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.access(f"{d}/initdb", os.X_OK) and os.access(f"{d}/pg_ctl", os.X_OK):
            return Path(d)
    found = shutil.which("initdb")
    return Path(found).parent if found and shutil.which("pg_ctl") else None


class Cluster:
    def __init__(self) -> None:
        bindir = pg_bin()
        if bindir is None:
            if os.environ.get("CI") == "true":
                pytest.fail(
                    "PostgreSQL (initdb, pg_ctl) is not installed; .ci/run installs Debian postgresql"
                )
            pytest.skip("PostgreSQL is not installed")
        self.bin = bindir
        self.dir = Path(tempfile.mkdtemp(prefix="forensic-pg-"))
        self.port = free_port()
        self.user = "forensic"
        # PostgreSQL refuses to run as root: run it as the `postgres` account when we are root.
        self._as: list[str] = []
        if os.geteuid() == 0:
            if shutil.which("runuser") is None:
                pytest.fail("running as root without runuser: cannot start PostgreSQL as another user")
            self._as = ["runuser", "-u", "postgres", "--"]
            os.chmod(self.dir, 0o777)
        self.data = self.dir / "data"
        self.url = f"postgresql://{self.user}@127.0.0.1:{self.port}/forensic"

    def _run(self, *args: str) -> None:
        subprocess.run([*self._as, *args], check=True, capture_output=True, timeout=120)

    def start(self) -> Cluster:
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", self.user, "-A", "trust", "--no-sync")
        opts = (
            f"-c listen_addresses=127.0.0.1 -c port={self.port} -c unix_socket_directories={self.dir}"
            " -c max_connections=200 -c fsync=on -c shared_buffers=64MB"
        )
        self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.dir / "pg.log"),
            "-o",
            opts,
            "-w",
            "start",
        )
        self._run(
            str(self.bin / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", self.user, "forensic"
        )
        return self

    def fresh_db(self, name: str) -> str:
        """A new empty database; the name gets a number when a test of the session took it already."""
        self._made = getattr(self, "_made", set())
        base, n = name, 1
        while name in self._made:
            n += 1
            name = f"{base}_{n}"
        self._made.add(name)
        self._run(str(self.bin / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", self.user, name)
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        subprocess.run(
            [*self._as, str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"],
            capture_output=True,
            timeout=60,
        )
        shutil.rmtree(self.dir, ignore_errors=True)
