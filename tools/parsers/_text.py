"""The parsers' shared text helpers, re-exported from :mod:`forensic.text` (below the sandbox,
which the OpenMetrics parser needs them in too)."""

from forensic.text import (
    BoundedWarnings,
    as_lines,
    as_text,
    numbered_lines,
    plain_lines,
)

__all__ = [
    "BoundedWarnings",
    "as_lines",
    "as_text",
    "numbered_lines",
    "plain_lines",
]
