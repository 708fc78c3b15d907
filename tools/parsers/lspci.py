"""``lspci -vv`` (``cmd/lspci-vv.txt``): per device, its PCIe link capability and status.

A device block starts at column 0 with its address (``19:00.0 3D controller: ... (rev a1)``, or
with the domain under ``lspci -D``) and continues with indented lines. The link lines are::

    LnkCap:<TAB>Port #0, Speed 32GT/s, Width x16, ASPM L1, ...
    LnkSta:<TAB>Speed 32GT/s (ok), Width x16 (ok)          (or "(downgraded)"; old lspci prints neither)

A device that fell off the bus reads as all ones: ``(rev ff)`` and ``!!! Unknown header type 7f``.
"""

from __future__ import annotations

import re
from typing import Literal

from forensic.sandbox.errors import ParseError
from forensic.tools.parsers.pci import PciAddress, parse_pci_address
from forensic.tools.parsers.sysfs import parse_link_speed, parse_link_width
from pydantic import BaseModel, Field

__all__ = ["LinkStatus", "LspciDevice", "parse_lspci_vv"]

LinkStatus = Literal["ok", "downgraded"]

_MAX_LINE = 64 * 1024
_HEADER = re.compile(r"((?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]) (.{0,1024})")
# Not anchored at the end: "(prog-if 00 [VGA controller])" may follow, and "(prog-if ff)" on a lost device.
_REV = re.compile(r"\s?\(rev ([0-9a-fA-F]{2})\)")
# "Speed 32GT/s (ok)" / "Speed 2.5GT/s" / "Speed unknown"; "Width x16 (downgraded)".
_SPEED = re.compile(r"Speed ([0-9.]{1,6}\s?GT/s|unknown)(?:\s?\((ok|downgraded)\))?", re.IGNORECASE)
_WIDTH = re.compile(r"Width x(\d{1,3})(?:\s?\((ok|downgraded)\))?")
_AER_FLAG = re.compile(r"([A-Za-z][A-Za-z0-9]{0,30})\+")


class LspciDevice(BaseModel):
    """One device's block; link fields are None where lspci did not print them (or printed junk)."""

    address: PciAddress = Field(description="The device address.")
    class_name: str | None = Field(
        None, description="Device class, e.g. `3D controller`, `Ethernet controller`."
    )
    description: str = Field("", description="Everything after the address, without the revision.")
    rev: str | None = Field(None, description="Revision byte as printed (`a1`); `ff` on a lost device.")
    lost: bool = Field(
        False, description="Config space reads all ones: `(rev ff)` or `Unknown header type 7f`."
    )
    driver: str | None = Field(None, description="`Kernel driver in use`.")
    lnkcap_speed_gts: float | None = Field(None, description="LnkCap speed, GT/s per lane.")
    lnkcap_width: int | None = Field(None, description="LnkCap width, lanes.")
    lnksta_speed_gts: float | None = Field(None, description="LnkSta (negotiated) speed, GT/s per lane.")
    lnksta_width: int | None = Field(None, description="LnkSta (negotiated) width, lanes.")
    lnksta_speed_status: LinkStatus | None = Field(
        None, description="lspci's verdict on the speed, when printed."
    )
    lnksta_width_status: LinkStatus | None = Field(
        None, description="lspci's verdict on the width, when printed."
    )
    correctable_errors: list[str] = Field(
        default_factory=list, description="AER CESta bits set (`RxErr`, `BadTLP`, `Timeout`, ...)."
    )
    uncorrectable_errors: list[str] = Field(default_factory=list, description="AER UESta bits set.")

    @property
    def downgraded(self) -> bool:
        """The link trained below its capability: lspci says so, or the numbers do."""
        if "downgraded" in (self.lnksta_speed_status, self.lnksta_width_status):
            return True
        slower = None not in (self.lnksta_speed_gts, self.lnkcap_speed_gts) and (
            self.lnksta_speed_gts < self.lnkcap_speed_gts  # type: ignore[operator]
        )
        narrower = None not in (self.lnksta_width, self.lnkcap_width) and (
            self.lnksta_width < self.lnkcap_width  # type: ignore[operator]
        )
        return bool(slower or narrower)


def parse_lspci_vv(text: str) -> list[LspciDevice]:
    """Parse ``lspci -vv`` (or ``-vvv``, ``-D``) text; unknown lines are skipped, nothing raises."""
    devices: list[LspciDevice] = []
    device: LspciDevice | None = None
    for raw in text.split("\n"):
        if len(raw) > _MAX_LINE:
            continue
        line = raw.rstrip()
        if not line:
            continue
        if not line[0].isspace():
            device = _header(line)
            if device is not None:
                devices.append(device)
            continue
        if device is None:
            continue
        body = line.strip()
        if body.startswith("!!! Unknown header type") or body.startswith("Unknown header type 7f"):
            device.lost = True
        elif body.startswith("LnkCap:"):
            if device.lnkcap_speed_gts is None and device.lnkcap_width is None:
                device.lnkcap_speed_gts, _ = _speed(body)
                device.lnkcap_width, _ = _width(body)
        elif body.startswith("LnkSta:"):
            if device.lnksta_speed_gts is None and device.lnksta_width is None:
                device.lnksta_speed_gts, device.lnksta_speed_status = _speed(body)
                device.lnksta_width, device.lnksta_width_status = _width(body)
        elif body.startswith("CESta:"):
            device.correctable_errors = _AER_FLAG.findall(body[6:])
        elif body.startswith("UESta:"):
            device.uncorrectable_errors = _AER_FLAG.findall(body[6:])
        elif body.startswith("Kernel driver in use:"):
            device.driver = body.partition(":")[2].strip() or None
    return devices


def _header(line: str) -> LspciDevice | None:
    m = _HEADER.match(line)
    if m is None:
        return None
    try:
        address = parse_pci_address(m.group(1))
    except ParseError:
        return None
    description = m.group(2).strip()
    device = LspciDevice(address=address)
    rev = _REV.search(description)
    if rev:
        device.rev = rev.group(1).lower()
        description = (description[: rev.start()] + description[rev.end() :]).strip()
        device.lost = device.rev == "ff"
    class_name, sep, _ = description.partition(": ")
    device.class_name = class_name if sep else None
    device.description = description
    if "Unknown header type 7f" in description:
        device.lost = True
    return device


def _speed(body: str) -> tuple[float | None, LinkStatus | None]:
    m = _SPEED.search(body)
    if m is None:
        return None, None
    return parse_link_speed(m.group(1)), m.group(2)  # type: ignore[return-value]


def _width(body: str) -> tuple[int | None, LinkStatus | None]:
    m = _WIDTH.search(body)
    if m is None:
        return None, None
    return parse_link_width(m.group(1)), m.group(2)  # type: ignore[return-value]
