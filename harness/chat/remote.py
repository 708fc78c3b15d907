"""``forensic chat --server URL``: the same conversation, held by a running ``forensic serve``.

Questions go to ``POST /api/v1/chat`` with the user's bearer token; the service runs the
conversation (its evidence, budget and checkpoints) and answers with checked claims. Approvals are
not made from here: the page's buttons and the approve endpoint take them, as the token's user.
"""

from __future__ import annotations

from typing import Any

import httpx
from forensic.harness.conversation import Answer
from forensic.sandbox import ForensicError


class RemoteConversation:
    """Questions to a service's conversation about one investigation."""

    def __init__(
        self,
        server: str,
        token: str,
        investigation: str,
        conversation: str | None = None,
        timeout_s: float = 600.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.investigation, self.thread_id = investigation, conversation
        self._http = httpx.Client(
            base_url=server.rstrip("/"),
            timeout=timeout_s,
            transport=transport,
            headers={"Authorization": f"Bearer {token}"},
        )

    def ask(self, question: str) -> Answer:
        body: dict[str, Any] = {"investigation": self.investigation, "question": question[:2000]}
        if self.thread_id:
            body["conversation"] = self.thread_id
        try:
            r = self._http.post("/api/v1/chat", json=body)
        except httpx.HTTPError as exc:
            raise ForensicError(f"cannot reach the service: {type(exc).__name__}: {exc}") from None
        if r.status_code != 200:
            try:
                why = r.json().get("detail") or r.text
            except ValueError:
                why = r.text
            raise ForensicError(f"the service refused the question ({r.status_code}): {str(why)[:300]}")
        data = r.json()
        self.thread_id = data.get("conversation", self.thread_id)
        return Answer.model_validate({k: v for k, v in data.items() if k in Answer.model_fields})
