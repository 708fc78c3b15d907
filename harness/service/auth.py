"""Bearer tokens to named users with roles.

``webhook`` may post alerts and nothing else; ``viewer`` reads; ``approver`` also decides on
proposals; ``admin`` may do everything. The user's name is what the audit log records.

Token files are re-read when one changes (checked on every request: a ``stat`` per user) or after
SIGHUP, so a token is revoked or rotated by editing its file, in every replica, without a restart.
"""

from __future__ import annotations

import hmac
import logging
import os
import threading
import time
from collections.abc import Sequence

from forensic.harness.service.config import ROLE_RANK, ConfigError, User, read_token

log = logging.getLogger("forensic.service")

#: A file changed this close to when it was read may change again within the same mtime tick
#: (file times are coarse): such files are re-read until they are older than this.
_RACY_NS = 2_000_000_000


class AuthError(Exception):
    """401 (who are you?) or 403 (not allowed), with a one-line reason."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class Tokens:
    """Token -> user, compared in constant time; re-read from ``users``' token files when one changes."""

    def __init__(self, tokens: dict[str, User], users: Sequence[User] = ()) -> None:
        self._users = list(users)
        self._files = [str(u.token_file) for u in self._users]
        self._reload = threading.Lock()
        self._tokens = [(t.encode(), u) for t, u in tokens.items()]
        self._stamp = self._stamps()
        self._racy = self._is_racy(self._stamp)

    @staticmethod
    def _is_racy(stamp: tuple[tuple[int, int, int, int] | None, ...]) -> bool:
        now = time.time_ns()
        return any(s is not None and now - s[0] < _RACY_NS for s in stamp)

    def _stamps(self) -> tuple[tuple[int, int, int, int] | None, ...]:
        out: list[tuple[int, int, int, int] | None] = []
        for path in self._files:
            try:
                st = os.stat(path)
            except OSError:
                out.append(None)
                continue
            out.append((st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino))
        return tuple(out)

    def reload(self) -> None:
        """Re-read every token file. A user whose file is missing, unreadable or too short, or
        whose token another user's file also holds, is refused until the file is fixed (logged):
        deleting or emptying a token file revokes it."""
        with self._reload:
            stamp = self._stamps()
            read: dict[str, list[User]] = {}
            for u in self._users:
                try:
                    read.setdefault(read_token(u), []).append(u)
                except ConfigError as exc:
                    log.warning("%s; refusing that user until the file is fixed", exc)
            for us in read.values():
                if len(us) > 1:
                    log.warning(
                        "users %s share one token; refusing all of them until their files differ",
                        ", ".join(u.name for u in us),
                    )
            self._tokens = [(t.encode(), us[0]) for t, us in read.items() if len(us) == 1]
            self._stamp, self._racy = stamp, self._is_racy(stamp)

    def reload_soon(self) -> None:
        """Re-read the files at the next request (safe in a signal handler: takes no lock)."""
        self._racy = True

    def user(self, authorization: str | None) -> User:
        if self._files and (self._racy or self._stamps() != self._stamp):
            self.reload()
        if not authorization:
            raise AuthError(401, "missing bearer token")
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise AuthError(401, "expected 'Authorization: Bearer TOKEN'")
        given = token.strip().encode()
        found = None
        for t, u in self._tokens:
            if hmac.compare_digest(t, given):
                found = u
        if found is None:
            raise AuthError(401, "unknown token")
        return found


def allowed(user: User, need: str) -> bool:
    """Whether ``user`` may do what needs role ``need``: webhook only posts alerts, admin does all."""
    if user.role == "admin":
        return True
    if need == "webhook" or user.role == "webhook":
        return user.role == need
    return ROLE_RANK[user.role] >= ROLE_RANK[need]
