"""What every router shares: the one-line error, the service of the app, and role checks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from fastapi import Depends, Header, Request
from forensic.harness.service.auth import AuthError, allowed
from forensic.harness.service.config import User

if TYPE_CHECKING:
    from forensic.harness.service.service import Service


class Problem(Exception):
    """An error answered as ``{"detail": "one line"}`` with ``status``."""

    def __init__(self, status: int, detail: str) -> None:
        self.status = status
        self.detail = detail


def service(request: Request) -> Service:
    """The :class:`Service` this app serves (``app.state.svc``, set by ``create_app``)."""
    return request.app.state.svc


Svc = Annotated[Any, Depends(service)]


def user_of(svc: Service, authorization: str | None, role: str) -> User:
    """The token's user, if its role may do what needs ``role``; :class:`Problem` 401/403 otherwise."""
    try:
        user = svc.tokens.user(authorization)
    except AuthError as exc:
        raise Problem(exc.status, exc.reason) from None
    if not allowed(user, role):
        raise Problem(403, f"user {user.name!r} (role {user.role}) may not do this; needs {role}")
    return user


def need(role: str) -> Any:
    """A dependency: the authenticated user, who must hold ``role`` (or a role above it)."""

    async def dep(  # async: no thread hop for a check this small
        request: Request, authorization: Annotated[str | None, Header()] = None
    ) -> User:
        return user_of(service(request), authorization, role)

    return dep


def investigation(svc: Service, inv_id: str) -> dict[str, Any]:
    inv = svc.store.investigation(inv_id)
    if inv is None:
        raise Problem(404, f"no investigation {inv_id!r}")
    return inv
