"""Who the token's user is, and what the page may offer them."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from forensic.harness.service.auth import allowed
from forensic.harness.service.config import User

from .common import Svc, need

router = APIRouter(tags=["audit"])


@router.get("/api/v1/me")
def me(svc: Svc, user: Annotated[User, Depends(need("viewer"))]) -> dict[str, Any]:
    # The page offers Dry run and Execute only where they can work: an approver, and executors configured.
    return {
        "name": user.name,
        "role": user.role,
        "can_approve": allowed(user, "approver"),
        "can_execute": allowed(user, "approver") and svc.cfg.executors is not None,
    }
