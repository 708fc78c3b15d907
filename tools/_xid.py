"""What an XID means for the investigation: which signal it raises, if any.

The code -> category table is the parser's (NVIDIA's catalog); this module only decides which
categories are evidence for a root cause. Application faults (13, 31, 43, 45 ...) raise nothing:
they follow from a bad program or from another fault, and are reported, not blamed.
"""

from __future__ import annotations

from forensic.tools.base import Signal
from forensic.tools.parsers.kernel_log import xid_info

SIGNAL_OF_CATEGORY = {
    "fell_off_bus": "xid_fell_off_bus",
    "memory": "xid_memory",
    "nvlink": "xid_nvlink",
}

#: Every signal an XID can raise; tools that read XIDs add these to what they declare they emit.
XID_SIGNALS = frozenset(SIGNAL_OF_CATEGORY.values())


def xid_signal(
    code: int, component: str, detail: str, **values: float | int | str | bool | None
) -> Signal | None:
    """The signal an XID on ``component`` raises, or None for XIDs that blame nothing."""
    name = SIGNAL_OF_CATEGORY.get(xid_info(code).category)
    if name is None:
        return None
    return Signal(name=name, component=component, kind="gpu", detail=detail, values={"xid": code, **values})
