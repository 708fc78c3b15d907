"""PCI addresses, however a tool spells them.

One device prints several ways (see ``spec/bundle.md``, "PCI addresses")::

    00000000:1B:00.0    NVML / nvidia-smi / dcgm-exporter (8-digit domain, upper case)
    0000:1b:00.0        sysfs, NVRM "GPU ..." lines, AER, mlx5_core
    1b:00.0             lspci (domain 0 omitted)
    PCI:0000:1b:00      NVRM Xid tag (no function); very old drivers drop "PCI:"
    busId 1b000         NCCL (the address as one hex number: domain, bus, device, function)

All of them parse to one :class:`PciAddress`; compare with :meth:`PciAddress.matches`.
"""

from __future__ import annotations

import re

from forensic.sandbox.errors import ParseError
from pydantic import BaseModel, ConfigDict, Field

__all__ = ["PciAddress", "parse_pci_address"]

# Longer than any real spelling ("PCI:00000000:1b:00.0" is 20 chars); refuse early, never scan megabytes.
_MAX_LEN = 64

# Each part is a bounded hex run: no nested quantifiers, so matching is linear.
_COLON_FORM = re.compile(
    r"(?:([0-9a-f]{1,8}):)?([0-9a-f]{1,2}):([0-9a-f]{1,2})(?:\.([0-7]))?",
    re.IGNORECASE,
)
# NCCL prints the busId as an int64 (`%lx`) of the sysfs digits: "0000:9b:00.0" -> 9b000.
_NCCL_FORM = re.compile(r"busid[\s:=]{0,4}(?:0x)?([0-9a-f]{1,13})", re.IGNORECASE)


class PciAddress(BaseModel):
    """A PCI function address as integers, so every spelling compares equal."""

    model_config = ConfigDict(frozen=True)

    domain: int = Field(0, ge=0, le=0xFFFFFFFF, description="PCI domain (segment); 0 on most x86 hosts.")
    bus: int = Field(ge=0, le=0xFF, description="Bus number.")
    device: int = Field(ge=0, le=0x1F, description="Device (slot) number.")
    function: int | None = Field(
        None, ge=0, le=7, description="Function number; None where the spelling omits it (Xid tags)."
    )

    def matches(self, other: PciAddress) -> bool:
        """Same device, where a missing function stands for function 0 (a GPU is function 0)."""
        return (
            self.domain == other.domain
            and self.bus == other.bus
            and self.device == other.device
            and (self.function or 0) == (other.function or 0)
        )

    def sysfs_form(self) -> str:
        """The sysfs spelling, e.g. ``0000:1b:00.0`` (function 0 when unknown)."""
        return f"{self.domain:04x}:{self.bus:02x}:{self.device:02x}.{self.function or 0}"

    def nvml_form(self) -> str:
        """The NVML / nvidia-smi / DCGM spelling, e.g. ``00000000:1B:00.0``."""
        return f"{self.domain:08X}:{self.bus:02X}:{self.device:02X}.{self.function or 0}"

    def __str__(self) -> str:
        return self.sysfs_form()


def parse_pci_address(s: str | PciAddress) -> PciAddress:
    """Parse any spelling listed in the module docstring; raise ParseError on anything else."""
    if isinstance(s, PciAddress):
        return s
    if not isinstance(s, str):
        raise ParseError(f"PCI address must be text, got {type(s).__name__}")
    text = s.strip()
    if not text or len(text) > _MAX_LEN:
        raise ParseError(f"not a PCI address: {text[:_MAX_LEN]!r}")
    if text[:4].upper() == "PCI:":
        text = text[4:]
    m = _COLON_FORM.fullmatch(text)
    if m:
        domain, bus, device, function = m.groups()
        if int(device, 16) > 0x1F:
            raise ParseError(f"PCI device number out of range in {s!r}")
        return PciAddress(
            domain=int(domain, 16) if domain else 0,
            bus=int(bus, 16),
            device=int(device, 16),
            function=int(function) if function is not None else None,
        )
    m = _NCCL_FORM.fullmatch(text)
    if m:
        value = int(m.group(1), 16)
        # Low nibble: function (3 bits, the digit is "0".."7"); then device, bus, domain.
        function, device, bus, domain = value & 0xF, (value >> 4) & 0xFF, (value >> 12) & 0xFF, value >> 20
        if function > 7 or device > 0x1F or domain > 0xFFFFFFFF:
            raise ParseError(f"not a PCI address: {s!r}")
        return PciAddress(domain=domain, bus=bus, device=device, function=function)
    raise ParseError(f"not a PCI address: {s!r}")
