"""Who is deciding: the approver's identity comes from something the person cannot simply type.

An approval counts only for an authenticated person (see :mod:`forensic.harness.approvals`). Each
entry surface supplies an :class:`IdentityProvider`: the CLI asks the operating system which user
runs the process (``pwd.getpwuid(os.getuid())``); a future service passes the identity its
authentication layer established for the request. Environment variables (``USER``, ``LOGNAME``)
are never read: anyone can set them, so ``USER=someone forensic approve ...`` must not record
"someone approved". :mod:`getpass` reads exactly those variables first, which is why it is not used.
"""

from __future__ import annotations

import os
import pwd
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field


class Identity(BaseModel):
    """An authenticated principal, as the audit log records it."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(min_length=1, max_length=128, description="The name recorded as the approver.")
    source: str = Field(
        description="How it was established: 'os' (the process's user) or a service's scheme."
    )
    uid: int | None = Field(None, description="Operating-system user id, when the source is the OS.")


@runtime_checkable
class IdentityProvider(Protocol):
    """Supplies the identity of the person behind the current command or request."""

    def current(self) -> Identity: ...


class OsIdentity:
    """The operating-system user that runs this process (the real uid, from the user database)."""

    def __init__(self, getuid=os.getuid, getpwuid=pwd.getpwuid) -> None:  # noqa: ANN001 - injected for tests
        self._getuid = getuid
        self._getpwuid = getpwuid

    def current(self) -> Identity:
        uid = self._getuid()
        try:
            name = self._getpwuid(uid).pw_name
        except KeyError:  # a uid with no passwd entry (some containers): the number is still the truth
            name = f"uid:{uid}"
        return Identity(name=name, source="os", uid=uid)


class FixedIdentity:
    """An identity that an authenticating caller already established (a service's request)."""

    def __init__(self, identity: Identity) -> None:
        self._identity = identity

    def current(self) -> Identity:
        return self._identity


__all__ = ["FixedIdentity", "Identity", "IdentityProvider", "OsIdentity"]
