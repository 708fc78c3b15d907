"""Bearer tokens to named users with roles.

``webhook`` may post alerts and nothing else; ``viewer`` reads; ``approver`` also decides on
proposals; ``admin`` may do everything. The user's name is what the audit log records.
"""

from __future__ import annotations

import hmac

from forensic.harness.service.config import ROLE_RANK, User


class AuthError(Exception):
    """401 (who are you?) or 403 (not allowed), with a one-line reason."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class Tokens:
    """Token -> user, compared in constant time."""

    def __init__(self, tokens: dict[str, User]) -> None:
        self._tokens = [(t.encode(), u) for t, u in tokens.items()]

    def user(self, authorization: str | None) -> User:
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
