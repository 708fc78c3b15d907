"""Questions about an investigation's incident, answered with cited evidence; never a decision."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Depends
from forensic.harness.service.config import User
from pydantic import BaseModel, Field

from .common import Problem, Svc, investigation, need

router = APIRouter(tags=["chat"])


class ChatBody(BaseModel):
    """One question about an investigation's incident, optionally continuing a conversation."""

    model_config = {"extra": "forbid"}

    investigation: str = Field(min_length=1, max_length=128, description="Investigation id (inv-...).")
    question: str = Field(min_length=1, max_length=2000, description="The question, in words.")
    conversation: str | None = Field(None, max_length=200, description="A conversation id to continue.")


@router.post("/api/v1/chat")
def chat(body: ChatBody, svc: Svc, user: Annotated[User, Depends(need("viewer"))]) -> dict[str, Any]:
    """Ask about an investigation's incident and follow up; every answer cites its evidence.

    A conversation is one checkpointed thread in the service's database (pass its id back to
    continue it). Messages never decide anything: approvals go through the approve endpoint,
    as the token's user.
    """
    from forensic.harness.conversation import Conversation
    from forensic.sandbox import ForensicError

    inv = investigation(svc, body.investigation)
    if not inv.get("bundle"):
        raise Problem(
            409, f"investigation {body.investigation} has no evidence to talk about ({inv['status']})"
        )
    thread = body.conversation or f"chat-{body.investigation}-{uuid.uuid4().hex[:8]}"
    if not thread.startswith(f"chat-{body.investigation}-"):
        raise Problem(409, f"conversation {thread!r} is not about {body.investigation}")

    def on_page(p: dict[str, Any]) -> str:
        return (
            f"Approve on {body.investigation}'s page, or POST /api/v1/investigations/{body.investigation}"
            f"/proposals/{p['id']}/approve with content_hash {p['content_hash']} as an approver "
            "(a message never approves)"
        )

    try:
        # A live run is talked about from what it read (its archive), else from its fleet window.
        kept = svc.live.archive_of(inv)
        conv = Conversation(
            str(kept) if kept else svc.live.where(inv),
            checkpointer=svc.saver,
            limits=svc.cfg.budgets,
            thread_id=thread,
            approve_hint=on_page,
        )
        if body.conversation and not conv.state():
            raise Problem(404, f"no conversation {thread!r}")
        answer = conv.ask(body.question)
    except ForensicError as exc:
        raise Problem(409, f"cannot talk about {body.investigation}: {exc}") from None
    # The conversation's own ledger: its ids are not the investigation report's, so the cited
    # records travel with the answer.
    cited = {e for c in answer.claims for e in c.evidence} | set(answer.new_evidence)
    records = {r["id"]: r for r in conv.records if r["id"] in cited}
    return {
        "conversation": thread,
        "by": user.name,
        "answer": answer.render(),
        "records": records,
        **answer.model_dump(mode="json"),
    }
