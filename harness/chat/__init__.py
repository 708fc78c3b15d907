"""``forensic chat``: the terminal surface of a conversation (rich, or plain lines for scripts).

The engine (intents, answers, the checkpointed thread) is :mod:`forensic.harness.conversation`.
"""

from .terminal import render_answer, run_interactive, run_plain

__all__ = ["render_answer", "run_interactive", "run_plain"]
