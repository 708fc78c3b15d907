"""Conversations about an investigation: questions to intents, answers from evidence, one thread.

The engine every conversational surface shares (the terminal chat, MCP's ``chat`` tool):
:class:`Conversation` runs the investigation on the first question and answers follow-ups from its
evidence (adding evidence through the same tools and budget where needed); :mod:`.intents` maps
questions to intents without a model; :mod:`.answers` builds answers whose every claim is checked
like a report finding; :mod:`.phrasing` lets a model phrase them inside the same guardrails.
"""

from .answers import Answer, Workspace, build_answer
from .conversation import Conversation
from .intents import Intent, classify

__all__ = ["Answer", "Conversation", "Intent", "Workspace", "build_answer", "classify"]
