"""The approver is who the operating system says runs the command, whatever the environment claims."""

from __future__ import annotations

import json
import os
import pwd
import subprocess
from pathlib import Path

import pytest
from forensic.harness.identity import FixedIdentity, Identity, IdentityProvider, OsIdentity

from tests import cli

HOSTILE = {"USER": "mallory", "LOGNAME": "mallory", "LNAME": "mallory", "USERNAME": "mallory"}


def test_os_identity_ignores_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in HOSTILE.items():
        monkeypatch.setenv(k, v)
    me = OsIdentity().current()
    assert me == Identity(name=pwd.getpwuid(os.getuid()).pw_name, source="os", uid=os.getuid())
    assert me.name != "mallory"


def test_a_uid_without_a_passwd_entry_is_named_by_number() -> None:
    def missing(uid: int):
        raise KeyError(uid)

    assert OsIdentity(getuid=lambda: 4242, getpwuid=missing).current().name == "uid:4242"


def test_providers_share_one_protocol() -> None:
    svc = FixedIdentity(Identity(name="alice@example.org", source="oidc"))
    assert isinstance(svc, IdentityProvider) and isinstance(OsIdentity(), IdentityProvider)
    assert svc.current().name == "alice@example.org"


def test_hostile_user_and_logname_do_not_change_the_audited_approver(make_bundle, tmp_path: Path) -> None:
    def forensic(*args: str) -> subprocess.CompletedProcess:
        return cli.forensic(*args, state=tmp_path, env=HOSTILE)

    out = forensic("investigate", str(make_bundle("pcie_downtrain")), "--json", "--thread", "t-id")
    assert out.returncode == 0, out.stderr
    proposal = json.loads(out.stdout)["proposals"][0]
    done = forensic("approve", "t-id", "--approve", f"{proposal['id']}={proposal['content_hash']}")
    assert done.returncode == 0, done.stderr
    audit = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    real = pwd.getpwuid(os.getuid()).pw_name
    assert [(a["approver"], a["outcome"]) for a in audit] == [(real, "approved")]
    assert "mallory" not in (tmp_path / "audit.jsonl").read_text()
