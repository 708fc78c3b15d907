"""An upper bound on the prompt tokens of a chat request, without the model's tokenizer.

Budgets are hard limits, so the bound must never be below what the server will count. Every
tokenizer in use (byte-level BPE for GPT, Llama 3 and Qwen; SentencePiece with byte fallback for
Gemma and Mistral) turns each token into at least one byte of text, so the UTF-8 length of the
text bounds its token count. The chat template adds a few special tokens per message, and a JSON
schema sent as ``response_format`` may be rendered into the prompt too, so both are counted.

The bound is loose (real counts are a third to a half of it for JSON-heavy prompts); it only
decides whether a call may start. What a call is charged is the usage the server reports.
"""

from __future__ import annotations

import json
from typing import Any

#: Special tokens a chat template wraps around one message (role markers, separators).
PER_MESSAGE = 8
#: Special tokens around the whole conversation (BOS, the assistant turn opener).
PER_REQUEST = 16


def text_bound(text: str) -> int:
    """At most this many tokens for ``text``."""
    return len(text.encode("utf-8"))


def prompt_bound(messages: list[dict[str, str]], response_format: dict[str, Any] | None = None) -> int:
    """At most this many prompt tokens for a chat request."""
    total = PER_REQUEST + sum(
        PER_MESSAGE + text_bound(m.get("role", "")) + text_bound(m.get("content", "")) for m in messages
    )
    if response_format is not None:
        total += text_bound(json.dumps(response_format, separators=(",", ":")))
    return total
