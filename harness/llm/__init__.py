"""Talking to models on OpenAI-compatible endpoints: one client, one retry layer, accounting,
the untrusted-data prompt and the typed reply. The planner that uses them lives in
:mod:`harness.planners.llm_planner`; the scripted double for tests in :mod:`harness.llm.scripted`."""

from forensic.harness.llm.client import Allowance, Completion, ModelClient, Tally, TokenUsage
from forensic.harness.llm.prices import Price, PriceTable, load_prices
from forensic.harness.llm.prompt import untrusted_block
from forensic.harness.llm.reply import ModelReply, ReplyError, parse_reply, reply_schema
from forensic.harness.llm.tokens import prompt_bound

__all__ = [
    "Allowance",
    "Completion",
    "ModelClient",
    "ModelReply",
    "Price",
    "PriceTable",
    "ReplyError",
    "Tally",
    "TokenUsage",
    "load_prices",
    "parse_reply",
    "prompt_bound",
    "reply_schema",
    "untrusted_block",
]
