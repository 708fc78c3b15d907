"""Text from a bundle or a model, made safe to print on a terminal.

A title, a host or file name, a log line quoted in a finding: any of them may carry escape
sequences (clear the screen, retitle the window, hide text, rewrite what was printed). Every
control character (Unicode category ``Cc``: C0, DEL and C1, so ESC and CSI too) except newline
and tab is removed from everything a command prints for a person; rich markup in the data is
escaped by the callers that print through rich.
"""

from __future__ import annotations

import re
from typing import Any

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean_text(text: str) -> str:
    """``text`` without control characters other than newline and tab."""
    return _CONTROL.sub("", text)


def terminal_safe(value: Any) -> Any:
    """A copy of a JSON-like value with every string (keys too) cleaned."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {terminal_safe(k): terminal_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [terminal_safe(v) for v in value]
    return value
