"""Kernel logs (``cmd/dmesg.txt``): NVRM Xid/SXid, fallen-off-the-bus, AER, PCIe bandwidth, mlx5 lines.

Every line prefix the bundle names is accepted (examples from the reference)::

    [ 5821.004113] ...                        dmesg: seconds since boot
    [  130.456250] [ T1946] ...              dmesg with CONFIG_PRINTK_CALLER
    [Tue Mar 10 02:18:11 2026] ...            dmesg -T: UTC wall time, no zone
    Mar 10 02:18:11 host kernel: ...          journalctl -k / syslog: UTC, no year (pass `year`)
    Dec  2 11:38:47 worker4 kernel: [  219.470994] ...   syslog with the dmesg stamp kept
    2026-03-10T02:18:11.123456+00:00 host kernel: ...    journalctl -o short-iso, dmesg --time-format iso
    kernel: ...                               journalctl --no-hostname, trimmed
    6,3973,227986636,-;...                    raw /dev/kmsg: prio,seq,usec since boot,flags;text
    ...                                       no prefix at all (and indented continuation lines)

Times since boot become wall time only when ``boot_unix`` is given; otherwise only ``uptime_s`` is
set and the order of lines is all that is known. Lines that match nothing are skipped: a kernel log
is mostly noise, and an unknown line is never an error.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta
from typing import Annotated, Literal, NamedTuple

from forensic.sandbox.errors import ParseError
from forensic.tools.parsers._text import plain_lines
from forensic.tools.parsers.pci import PciAddress, parse_pci_address
from pydantic import BaseModel, Field

__all__ = [
    "XID_CATALOG",
    "AerEvent",
    "FellOffBusEvent",
    "KernelEvent",
    "KernelLog",
    "Mlx5LinkEvent",
    "Mlx5ModuleEvent",
    "Mlx5PowerEvent",
    "PcieBandwidthEvent",
    "SxidEvent",
    "XidCategory",
    "XidEvent",
    "XidInfo",
    "EventKind",
    "parse_kernel_log",
    "xid_info",
]

XidCategory = Literal[
    "fell_off_bus", "memory", "nvlink", "gsp", "app", "pcie", "thermal_power", "info", "other"
]


class XidInfo(NamedTuple):
    """One row of NVIDIA's Xid catalog."""

    mnemonic: str  # NVIDIA's name, e.g. ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS
    description: str  # the catalog's description, verbatim
    category: XidCategory  # ours: which part of the system the Xid points at


_XID_171_172 = (
    "Additional to Xid 48 providing more details on particulars of fault to differentiate DRAM/SRAM"
)

# NVIDIA's Xid catalog for Ampere/Hopper/Blackwell (reference 1.2). The category is ours: which
# part of the system the Xid points at, so a detector can route it to a root cause.
XID_CATALOG: dict[int, XidInfo] = {
    8: XidInfo("ROBUST_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT", "GPU stopped processing", "other"),
    13: XidInfo(
        "ROBUST_CHANNEL_GR_EXCEPTION / ROBUST_CHANNEL_GR_ERROR_SW_NOTIFY", "Graphics Engine Exception", "app"
    ),
    31: XidInfo("ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT", "GPU memory page fault", "app"),
    32: XidInfo("ROBUST_CHANNEL_PBDMA_ERROR", "Invalid or corrupted push buffer stream", "app"),
    38: XidInfo("ROBUST_CHANNEL_FECS_ERR_WATCHDOG_TIMEOUT", "Driver firmware error", "other"),
    43: XidInfo("ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR", "GPU stopped processing", "app"),
    45: XidInfo(
        "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL",
        "Preemptive cleanup, due to previous errors -- Most likely to see when running multiple cuda"
        " applications and hitting a DBE",
        "app",
    ),
    46: XidInfo("ROBUST_CHANNEL_GPU_TIMEOUT_ERROR", "GPU stopped processing", "other"),
    48: XidInfo("ROBUST_CHANNEL_GPU_ECC_DBE", "Double Bit ECC Error", "memory"),
    54: XidInfo(
        "SILENT_RUNNING_PWR_REDUCED_CLOCKING",
        "Auxiliary power is not connected to the GPU board",
        "thermal_power",
    ),
    61: XidInfo("PMU_BREAKPOINT", "Unused", "other"),
    62: XidInfo("PMU_HALT_ERROR", "Internal micro-controller halt (newer drivers)", "other"),
    63: XidInfo("INFOROM_DRAM_RETIREMENT_EVENT", "GPU memory remapping event", "memory"),
    64: XidInfo("INFOROM_DRAM_RETIREMENT_FAILURE", "GPU memory remapping failure", "memory"),
    69: XidInfo("ROBUST_CHANNEL_GR_CLASS_ERROR", "Graphics Engine class error", "app"),
    74: XidInfo("NVLINK_ERROR", "NVLINK Error", "nvlink"),
    79: XidInfo("ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", "GPU has fallen off the bus", "fell_off_bus"),
    92: XidInfo("EXCESSIVE_SBE_INTERRUPTS", "High single-bit ECC error rate", "memory"),
    94: XidInfo("ROBUST_CHANNEL_CONTAINED_ERROR", "Contained memory error", "memory"),
    95: XidInfo("ROBUST_CHANNEL_UNCONTAINED_ERROR", "Uncontained memory error", "memory"),
    109: XidInfo("ROBUST_CHANNEL_CTXSW_TIMEOUT_ERROR", "Context Switch Timeout Error", "other"),
    119: XidInfo("GSP_RPC_TIMEOUT", "GSP RPC Timeout", "gsp"),
    120: XidInfo("GSP_ERROR", "GSP Error", "gsp"),
    121: XidInfo("C2C_ERROR", "C2C Error", "other"),
    136: XidInfo("ALI_TRAINING_FAIL", "Link Training Failed", "nvlink"),
    137: XidInfo("NVLINK_PRIV_ERR", "NVLink Privilege Error", "nvlink"),
    140: XidInfo("UNRECOVERABLE_ECC_ERROR_ESCAPE", "ECC Unrecovered Error", "memory"),
    143: XidInfo("GPU_INIT_ERROR", "GPU Initialization Error", "other"),
    144: XidInfo("NVLINK_SAW_ERROR", "NVLINK: SAW Error", "nvlink"),
    145: XidInfo("NVLINK_RLW_ERROR", "NVLINK: RLW Error", "nvlink"),
    146: XidInfo("NVLINK_TLW_ERROR", "NVLINK: TLW Error", "nvlink"),
    147: XidInfo("NVLINK_TREX_ERROR", "NVLINK: TREX Error", "nvlink"),
    148: XidInfo("NVLINK_NVLPW_CTRL_ERROR", "NVLINK: NVLPW_CTRL Error", "nvlink"),
    149: XidInfo("NVLINK_NETIR_ERROR", "NVLINK: NETIR Error", "nvlink"),
    150: XidInfo("NVLINK_MSE_ERROR", "NVLINK: MSE Error", "nvlink"),
    154: XidInfo("GPU_RECOVERY_ACTION_CHANGED", "GPU Recovery Action Changed", "info"),
    155: XidInfo("NVLINK_SW_DEFINED_ERROR", "NVLINK: SW Defined Error", "nvlink"),
    156: XidInfo("RESOURCE_RETIREMENT_EVENT", "Resource Retirement Event", "memory"),
    157: XidInfo("RESOURCE_RETIREMENT_FAILURE", "Resource Retirement Failure", "memory"),
    158: XidInfo("GPU_FATAL_TIMEOUT", "GPU Fatal Timeout", "other"),
    167: XidInfo("PCIE_FATAL_TIMEOUT", "PCIE_FATAL_TIMEOUT", "pcie"),
    171: XidInfo("UNCORRECTABLE_DRAM_ERROR", _XID_171_172, "memory"),
    172: XidInfo("UNCORRECTABLE_SRAM_ERROR", _XID_171_172, "memory"),
}


def xid_info(code: int) -> XidInfo:
    """The catalog row for ``code``; an ``UNKNOWN`` row in category ``other`` when not catalogued."""
    return XID_CATALOG.get(code, XidInfo("UNKNOWN", "", "other"))


# --------------------------------------------------------------------------------------------
# Events

_RAW_CAP = 512


class _Event(BaseModel):
    """Fields every kernel log event has."""

    line_no: int = Field(
        description="1-based line number in the text (the first line, for multi-line forms)."
    )
    raw: str = Field(description=f"The line as printed, cut at {_RAW_CAP} characters.")
    time_unix: float | None = Field(
        None, description="Wall time, unix seconds UTC; None when it cannot be known."
    )
    uptime_s: float | None = Field(
        None, description="Seconds since boot, when the line carries a boot-relative stamp."
    )
    pci: PciAddress | None = Field(None, description="The device the line is about.")
    xid: int | None = Field(None, description="The Xid number, for Xid lines.")
    severity: str | None = Field(
        None, description="Severity as printed (`Fatal`, `Correctable`, `error`, ...)."
    )
    message: str | None = Field(None, description="The free text after the structured fields.")


class XidEvent(_Event):
    """An ``NVRM: Xid (PCI:dddd:bb:dd): N, ...`` line."""

    kind: Literal["xid"] = "xid"
    xid: int = Field(description="The Xid number.")
    pid: int | None = Field(None, description="Process id, when printed and known.")
    process: str | None = Field(None, description="Process name, when printed and known.")
    mnemonic: str = Field("UNKNOWN", description="Catalog mnemonic.")
    category: XidCategory = Field(
        "other", description="Catalog category: which part of the system it points at."
    )
    nvlink_error: str | None = Field(
        None, description="NVLink sub-error name (`NETIR_LINK_EVT`, `RLW_RXPIPE`)."
    )
    link: int | None = Field(None, description="NVLink link number, for NVLink Xids.")
    caused_by_xid: int | None = Field(None, description="`caused by previous Xid N` (Xid 45 cascades).")
    recovery_action: str | None = Field(None, description="Xid 154: the recovery action now required.")


class FellOffBusEvent(_Event):
    """``GPU has fallen off the bus`` without an Xid number (single- or multi-line NVRM forms)."""

    kind: Literal["fell_off_bus"] = "fell_off_bus"


class SxidEvent(_Event):
    """An NVSwitch ``SXid (PCI:dddd:bb:dd.f): N, ...`` line."""

    kind: Literal["sxid"] = "sxid"
    sxid: int = Field(description="The SXid number.")
    switch: str | None = Field(None, description="Reporting driver instance, e.g. `nvidia-nvswitch1`.")
    link: int | None = Field(None, description="NVSwitch link number, when printed.")
    detail: bool = Field(
        False,
        description="A `Data {...}` or `Severity N Engine ...` line detailing an SXid reported on another line.",
    )


class AerEvent(_Event):
    """A PCIe Advanced Error Reporting line."""

    kind: Literal["aer"] = "aer"
    form: Literal["bus_error", "received"] = Field(
        description="`PCIe Bus Error: severity=...` (the device's own line) or `AER: ... received from` (root port)."
    )
    error_type: str | None = Field(
        None, description="`Physical Layer`, `Data Link Layer`, `Transaction Layer`."
    )
    agent: str | None = Field(None, description="`Receiver ID`, `Transmitter ID`, `Requester ID`, ...")
    reporter: PciAddress | None = Field(None, description="The port that logged a `received` line.")
    multiple: bool = Field(False, description="`Multiple ... error received`: more errors than logged.")
    error_bits: list[str] = Field(
        default_factory=list, description="Status bits from the lines that follow (`Timeout`, `RxErr`)."
    )


class PcieBandwidthEvent(_Event):
    """``... Gb/s available PCIe bandwidth, limited by ... (capable of ...)`` at boot or hotplug."""

    kind: Literal["pcie_bandwidth_limited"] = "pcie_bandwidth_limited"
    available_gbps: float = Field(description="Bandwidth available, Gb/s.")
    capable_gbps: float = Field(description="Bandwidth the device is capable of, Gb/s.")
    limited_speed_gts: float = Field(description="Speed of the limiting link, GT/s.")
    limited_width: int = Field(description="Width of the limiting link, lanes.")
    capable_speed_gts: float = Field(description="Speed the device is capable of, GT/s.")
    capable_width: int = Field(description="Width the device is capable of, lanes.")
    limiting_device: PciAddress | None = Field(
        None, description="Where the limiting link is (often an upstream port)."
    )


class Mlx5LinkEvent(_Event):
    """ConnectX link changes: ``mlx5_5: Port: 1 Link ACTIVE`` (IB port) or ``<netdev>: Link down``."""

    kind: Literal["mlx5_link"] = "mlx5_link"
    ibdev: str | None = Field(None, description="RDMA device name (`mlx5_5`), for port state lines.")
    netdev: str | None = Field(None, description="Network interface name, for `Link up/down` lines.")
    port: int | None = Field(None, description="IB port number.")
    link_state: str = Field(
        description="`DOWN`, `INIT`, `ARMED`, `ACTIVE`, `ACTIVE_DEFER`, or `UP` for a netdev."
    )


class Mlx5ModuleEvent(_Event):
    """``Port module event[error]: module 0, Cable error, High Temperature`` (cable/transceiver)."""

    kind: Literal["mlx5_module"] = "mlx5_module"
    module: int | None = Field(None, description="Module (cage) number.")


class Mlx5PowerEvent(_Event):
    """``Detected insufficient power on the PCIe slot (27W).``"""

    kind: Literal["mlx5_power"] = "mlx5_power"
    watts: int | None = Field(None, description="Power the slot advertises, W.")


KernelEvent = Annotated[
    XidEvent
    | FellOffBusEvent
    | SxidEvent
    | AerEvent
    | PcieBandwidthEvent
    | Mlx5LinkEvent
    | Mlx5ModuleEvent
    | Mlx5PowerEvent,
    Field(discriminator="kind"),
]
EventKind = Literal[
    "xid", "fell_off_bus", "sxid", "aer", "pcie_bandwidth_limited", "mlx5_link", "mlx5_module", "mlx5_power"
]


class KernelLog(BaseModel):
    """What a kernel log says, as events in line order."""

    events: list[KernelEvent] = Field(default_factory=list, description="Recognised events, in line order.")
    line_count: int = Field(0, description="Lines in the text.")
    warnings: list[str] = Field(default_factory=list, description="What was odd and how it was read.")

    def of_kind(self, *kinds: EventKind) -> list[KernelEvent]:
        """Events of the given kinds, in line order."""
        return [event for event in self.events if event.kind in kinds]

    def for_device(self, pci: PciAddress | str) -> list[KernelEvent]:
        """Events about one device (any spelling; a missing function matches function 0)."""
        target = parse_pci_address(pci)
        return [event for event in self.events if event.pci is not None and event.pci.matches(target)]


# --------------------------------------------------------------------------------------------
# Line prefixes

_MAX_LINE = 64 * 1024
_MONTHS = {m: i for i, m in enumerate(("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec").split(), 1)}

_DMESG = re.compile(r"\[\s{0,12}(\d{1,10}\.\d{1,9})\]\s?")
_CALLER = re.compile(r"\[\s{0,8}[TC]\d{1,10}\]\s?")
_CTIME = re.compile(r"\[[A-Z][a-z]{2} ([A-Z][a-z]{2})\s{1,2}(\d{1,2}) (\d{2}):(\d{2}):(\d{2}) (\d{4})\]\s?")
_KMSG = re.compile(r"(\d{1,3}),(\d{1,20}),(\d{1,20}),[^;]{0,32};")
_SYSLOG = re.compile(
    r"([A-Z][a-z]{2})\s{1,2}(\d{1,2}) (\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?"  # Mar 10 02:18:11[.123456]
    r" (\S{1,253}) ([^\s:\[]{1,64})(?:\[\d{1,10}\])?: ?"  # host tag[pid]:
)
_ISO = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?"
    r"(?: (\S{1,253}) kernel(?:\[\d{1,10}\])?:)? ?"
)
#: How far past ``not_after`` a syslog stamp may lie and still be this year's (clock skew).
_YEAR_SLACK_S = 2 * 86400.0
_HOST_KERNEL = re.compile(r"\S{1,253} kernel: ")  # journalctl -o short-monotonic: "[ 1.2] host kernel: "


class _Stamp(NamedTuple):
    body: str
    time_unix: float | None
    uptime_s: float | None


class _Clock:
    """Turns the stamps of one log into times, with the caller's boot time and year."""

    def __init__(
        self, boot_unix: float | None, year: int | None, warnings: list[str], not_after: float | None = None
    ) -> None:
        self.boot = boot_unix if boot_unix is not None and math.isfinite(boot_unix) else None
        self.not_after: float | None = None
        if not_after is not None and math.isfinite(not_after):
            try:  # the year of the moment the log was read is the year of its latest lines
                year = datetime.fromtimestamp(not_after, UTC).year
                self.not_after = not_after
            except (OverflowError, ValueError, OSError):
                pass
        self.year = year
        self.warnings = warnings
        self._warned_year = False

    def from_boot(self, uptime: float | None) -> float | None:
        if uptime is None or self.boot is None or not math.isfinite(uptime):
            return None
        return self.boot + uptime

    def wall(
        self, year: int | None, month: str, day: str, h: str, m: str, s: str, fraction: str = ""
    ) -> float | None:
        """UTC wall time from syslog/ctime fields; ``fraction`` is ``.123456`` or empty."""
        if year is None:
            if not self._warned_year:
                self._warned_year = True
                self.warnings.append(
                    "syslog lines carry no year and none was given; their wall time is unknown"
                )
            return None
        if month not in _MONTHS:
            return None
        try:
            t = datetime(year, _MONTHS[month], int(day), int(h), int(m), int(s), tzinfo=UTC).timestamp()
        except (ValueError, OverflowError):
            return None
        return t + (float("0" + fraction) if fraction else 0.0)

    def split(self, line: str) -> _Stamp:
        """The line's text after its prefix, and what the prefix says about time."""
        first = line[:1]
        if first == "[":
            return self._bracket(line)
        if first.isdigit():
            m = _KMSG.match(line)
            if m:
                uptime = int(m.group(3)) / 1e6
                return _Stamp(line[m.end() :], self.from_boot(uptime), uptime)
            m = _ISO.match(line)
            if m:
                return _Stamp(line[m.end() :], _iso_time(m), None)
        elif first.isupper():
            m = _SYSLOG.match(line)
            if m and m.group(1) in _MONTHS:
                month, day, h, mi, s, frac = m.group(1, 2, 3, 4, 5, 6)
                wall = self.wall(self.year, month, day, h, mi, s, frac or "")
                if (
                    wall is not None
                    and self.year is not None
                    and self.not_after is not None
                    and wall > self.not_after + _YEAR_SLACK_S
                ):
                    # No line is printed after the log was read: a "Dec 30" line in a log read
                    # in January is from last December, not eleven months ahead.
                    wall = self.wall(self.year - 1, month, day, h, mi, s, frac or "")
                inner = self._bracket(line[m.end() :]) if line[m.end() : m.end() + 1] == "[" else None
                if inner is not None and inner.uptime_s is not None:
                    return _Stamp(inner.body, wall if wall is not None else inner.time_unix, inner.uptime_s)
                return _Stamp(line[m.end() :], wall, None)
        elif first.isspace():
            return _Stamp(line.strip(), None, None)
        # Trimmed journalctl ("kernel: ...") or a syslog line that lost its time ("host kernel: ...").
        if line.startswith("kernel: "):
            rest = line[8:]
        else:
            h = _HOST_KERNEL.match(line)
            if h is None:
                return _Stamp(line, None, None)
            rest = line[h.end() :]
        return self._bracket(rest) if rest[:1] == "[" else _Stamp(rest, None, None)

    def _bracket(self, line: str) -> _Stamp:
        m = _DMESG.match(line)
        if m:
            uptime = float(m.group(1))
            pos = m.end()
            c = _CALLER.match(line, pos)
            if c:
                pos = c.end()
            h = _HOST_KERNEL.match(line, pos)
            if h:
                pos = h.end()
            return _Stamp(line[pos:], self.from_boot(uptime), uptime)
        m = _CTIME.match(line)
        if m:
            month, day, hour, mi, s, year = m.groups()
            return _Stamp(line[m.end() :], self.wall(int(year), month, day, hour, mi, s), None)
        return _Stamp(line, None, None)


def _iso_time(m: re.Match[str]) -> float | None:
    year, month, day, h, mi, s, frac, zone = m.groups()[:8]
    try:
        t = datetime(int(year), int(month), int(day), int(h), int(mi), int(s), tzinfo=UTC)
        if zone and zone != "Z":
            sign = -1 if zone[0] == "-" else 1
            digits = zone[1:].replace(":", "")
            t -= sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
        return t.timestamp() + (float("0." + frac) if frac else 0.0)
    except (ValueError, OverflowError):
        return None


# --------------------------------------------------------------------------------------------
# Line bodies

_PCI_TEXT = r"[0-9a-fA-F]{1,8}:[0-9a-fA-F]{1,2}:[0-9a-fA-F]{1,2}(?:\.[0-7])?"
_XID = re.compile(r"NVRM: Xid \(([^()]{0,40})\): (\d{1,6})(?:,\s?(.*)|\s*$)")
_PID = re.compile(r"pid=('?<unknown>'?|\d{1,10})(?:, name=([^,]{0,256}))?(?:,\s?|$)")
# NVLink5 bodies (Xid 144-150): "<SUBCODE> (Nonfatal|Fatal) XC<n> i<n> Link <n|-1> (<registers>)".
_NVLINK5 = re.compile(
    r"([A-Z][A-Z0-9_]{1,40})\s{1,8}(Nonfatal|Fatal)\s{1,8}XC\d\s{1,8}i\d{1,3}\s{1,8}Link\s{1,8}(-?\d{1,3})"
)
_SUBCODE = re.compile(r"([A-Z][A-Z0-9]{1,20}_[A-Z0-9_]{1,40})\s")
_LINK = re.compile(r"\b[Ll]ink (-?\d{1,3})")
_CAUSED_BY = re.compile(r"caused by previous Xid (\d{1,6})")
_RECOVERY = re.compile(
    r"recovery action changed from 0x[0-9a-fA-F]{1,8} \([^()]{0,64}\) to (0x[0-9a-fA-F]{1,8}) \(([^()]{0,64})\)"
)
_CONTAINED = re.compile(r"(Contained|Uncontained): ")
_NVRM_GPU_OFF = re.compile(r"NVRM: GPU (" + _PCI_TEXT + r"): GPU has fallen off the bus")
_NVRM_THE_GPU = re.compile(r"NVRM: The NVIDIA GPU (" + _PCI_TEXT + r")")
_SXID = re.compile(r"(?:(\S{1,64}): )?SXid \(([^()]{0,40})\): (\d{1,6})(?:,\s?(.*))?")
_DEVICE = re.compile(r"([A-Za-z0-9_.-]{1,32}) ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]):? ")
_BUS_ERROR = re.compile(r"PCIe Bus Error: severity=([^,]{1,40}), type=([^,]{1,40})(?:, (.{0,200}))?")
_AGENT = re.compile(r"\(([A-Za-z ]{1,30}ID)\)")
_RECEIVED = re.compile(
    r"AER: (Multiple )?(.{1,40}?) error (?:message )?received(?: from|:) (?:id=)?([0-9a-fA-F:.]{4,16})"
)
_AER_BIT = re.compile(r"\s{0,8}\[\s{0,2}(\d{1,2})\]\s{1,40}(\S.{0,80})")
_BANDWIDTH = re.compile(
    r"(\d{1,6}\.\d{1,3}) Gb/s available PCIe bandwidth, limited by "
    r"(\d{1,3}(?:\.\d{1,3})?) GT/s(?: PCIe)? x(\d{1,2}) link at (" + _PCI_TEXT + r") "
    r"\(capable of (\d{1,6}\.\d{1,3}) Gb/s with (\d{1,3}(?:\.\d{1,3})?) GT/s(?: PCIe)? x(\d{1,2})"
)
_IB_PORT = re.compile(r"(\S{1,64}): Port: (\d{1,3}) Link ([A-Za-z_]{2,20})")
_NETDEV_LINK = re.compile(r"(\S{1,64}): Link (up|down)\b", re.IGNORECASE)
_MODULE = re.compile(r"Port module event(?:\[(\w{1,16})\])?: module (\d{1,3}), (.{0,200})")
_POWER = re.compile(r"Detected insufficient power on the PCIe slot \((\d{1,4})W\)")

# "The NVIDIA GPU ..." is followed by "fallen off the bus" within this many lines, or it is another message.
_FELL_OFF_WINDOW = 4


def parse_kernel_log(
    text: str, *, boot_unix: float | None = None, year: int | None = None, not_after: float | None = None
) -> KernelLog:
    """Parse any kernel log text; nothing raises, unknown lines are skipped.

    ``boot_unix`` (``collected.json`` ``boot``) turns boot-relative stamps into wall time. Syslog
    stamps (``journalctl -k``) print no year: ``not_after`` (when the log was read, or the window's
    end) completes them with its own year, or the year before for a date that would lie after it,
    so a log that spans New Year reads right. Without it, ``year`` applies to every syslog line.
    """
    warnings: list[str] = []
    clock = _Clock(boot_unix, year, warnings, not_after)
    parser = _BodyParser()
    long_lines = 0
    line_no = 0
    last = ""
    # Text or an iterable of lines (a stream from the sandbox): never split into a list.
    lines = plain_lines(text)
    for line_no, line in enumerate(lines, 1):
        last = line
        if len(line) > _MAX_LINE:
            long_lines += 1
            continue
        line = line.rstrip("\r")
        if not line.strip():
            continue
        stamp = clock.split(line)
        parser.feed(line_no, line, stamp)
    if long_lines:
        warnings.append(f"{long_lines} lines longer than {_MAX_LINE} characters skipped")
    if parser.events.dropped:
        warnings.append(
            f"{parser.events.dropped} events past the first {MAX_EVENTS} of a kind dropped (per-log cap)"
        )
    # A final newline ends a line, not starts one (a stream of lines has no such empty tail).
    line_count = line_no - (1 if isinstance(text, (str, bytes, bytearray)) and line_no and last == "" else 0)
    return KernelLog(events=list(parser.events), line_count=line_count, warnings=warnings)


#: Events kept per log and per kind (per XID code for XIDs); later ones are counted and dropped, so
#: memory stays bounded on a kernel log of any size (a storm of a million identical XIDs says what
#: its first thousands say), and a storm of one kind never crowds out another.
MAX_EVENTS = 10_000
#: All kinds together (a log printing thousands of distinct XID codes is bounded too).
MAX_EVENTS_TOTAL = 10 * MAX_EVENTS


class _Capped(list[KernelEvent]):
    """A list that keeps at most ``cap`` events of each kind (``total`` in all) and counts what it dropped."""

    def __init__(self, cap: int, total: int = MAX_EVENTS_TOTAL) -> None:
        super().__init__()
        self.cap, self.total, self.dropped = cap, total, 0
        self._per_kind: dict[tuple[str, object], int] = {}

    def append(self, item: KernelEvent) -> None:
        key = (item.kind, getattr(item, "xid", None))
        held = self._per_kind.get(key, 0)
        if held < self.cap and len(self) < self.total:
            self._per_kind[key] = held + 1
            super().append(item)
        else:
            self.dropped += 1


class _BodyParser:
    """Recognises events in line bodies; holds the state multi-line forms need."""

    def __init__(self) -> None:
        self.events = _Capped(MAX_EVENTS)
        self._pending_off: tuple[int, list[str], _Stamp, PciAddress | None] | None = None
        self._last_bus_error: dict[tuple[int, int, int, int], AerEvent] = {}

    def feed(self, line_no: int, line: str, stamp: _Stamp) -> None:
        body = stamp.body
        base = {
            "line_no": line_no,
            "raw": line[:_RAW_CAP],
            "time_unix": stamp.time_unix,
            "uptime_s": stamp.uptime_s,
        }
        if self._pending_off is not None and self._continue_fell_off(line_no, line, body):
            return
        if "NVRM" in body:
            self._nvrm(body, base, line_no, line, stamp)
        elif "SXid" in body:
            self._sxid(body, base)
        elif "AER" in body or "PCIe Bus Error" in body or "[" in body:
            self._aer(body, base)
        if "available PCIe bandwidth" in body:
            self._bandwidth(body, base)
        elif "mlx5" in body or "Port module event" in body:
            self._mlx5(body, base)

    # NVRM -----------------------------------------------------------------------------------

    def _nvrm(self, body: str, base: dict, line_no: int, line: str, stamp: _Stamp) -> None:
        m = _XID.search(body)
        if m:
            self.events.append(_xid_event(m, base))
            return
        m = _NVRM_GPU_OFF.search(body)
        if m:
            self.events.append(
                FellOffBusEvent(**base, pci=_pci(m.group(1)), message="GPU has fallen off the bus.")
            )
            return
        m = _NVRM_THE_GPU.search(body)
        if m:
            if "fallen off the bus" in body:  # the whole message on one line
                message = body[m.end() :].strip()[:512]
                self.events.append(FellOffBusEvent(**base, pci=_pci(m.group(1)), message=message))
            else:
                self._pending_off = (line_no, [line], stamp, _pci(m.group(1)))

    def _continue_fell_off(self, line_no: int, line: str, body: str) -> bool:
        start, lines, stamp, pci = self._pending_off  # type: ignore[misc]
        if line_no - start > _FELL_OFF_WINDOW:
            self._pending_off = None
            return False
        if "NVRM" not in body:
            return False
        if _NVRM_THE_GPU.search(body) or _XID.search(body):
            self._pending_off = None  # another message started: let it be parsed on its own
            return False
        lines.append(line)
        if "fallen off the bus" in body:
            self._pending_off = None
            raw = "\n".join(lines)[:_RAW_CAP]
            message = " ".join(part.split("NVRM:", 1)[-1].strip() for part in lines[1:])
            self.events.append(
                FellOffBusEvent(
                    line_no=start,
                    raw=raw,
                    time_unix=stamp.time_unix,
                    uptime_s=stamp.uptime_s,
                    pci=pci,
                    message=message[:512],
                )
            )
            return True
        return True

    # SXid -----------------------------------------------------------------------------------

    def _sxid(self, body: str, base: dict) -> None:
        m = _SXID.search(body)
        if m is None:
            return
        switch, tag, code, message = m.groups()
        message = (message or "").strip()
        severity = None
        for word in ("Fatal", "Non-fatal", "Nonfatal"):
            if message.startswith(word + ","):
                severity = word
        link = _LINK.search(message) if severity else None
        self.events.append(
            SxidEvent(
                **base,
                pci=_pci(tag),
                sxid=int(code),
                switch=switch,
                severity=severity,
                link=int(link.group(1)) if link else None,
                detail=message.startswith("Data {") or message.startswith("Severity "),
                message=message[:512] or None,
            )
        )

    # AER ------------------------------------------------------------------------------------

    def _aer(self, body: str, base: dict) -> None:
        device = _DEVICE.match(body)
        if device is None:
            return
        pci = _pci(device.group(2))
        rest = body[device.end() :]
        m = _BUS_ERROR.search(rest)
        if m:
            tail = m.group(3) or ""
            agent = _AGENT.search(tail)
            event = AerEvent(
                **base,
                pci=pci,
                form="bus_error",
                severity=m.group(1).strip(),
                error_type=m.group(2).strip(),
                agent=agent.group(1) if agent else None,
                message=rest[:512],
            )
            self.events.append(event)
            if pci is not None:
                self._last_bus_error[_key(pci)] = event
            return
        m = _RECEIVED.search(rest)
        if m:
            multiple, severity, source = m.groups()
            self.events.append(
                AerEvent(
                    **base,
                    pci=_aer_source(source, pci),
                    reporter=pci,
                    form="received",
                    severity=severity.strip(),
                    multiple=bool(multiple),
                    message=rest[:512],
                )
            )
            return
        m = _AER_BIT.fullmatch(rest)
        if m and pci is not None:
            last = self._last_bus_error.get(_key(pci))
            if last is not None:
                name = m.group(2).removesuffix("(First)").strip()
                last.error_bits.append(name)

    # PCIe bandwidth -------------------------------------------------------------------------

    def _bandwidth(self, body: str, base: dict) -> None:
        m = _BANDWIDTH.search(body)
        if m is None:
            return
        device = _DEVICE.match(body)
        available, speed, width, at, capable, cap_speed, cap_width = m.groups()
        self.events.append(
            PcieBandwidthEvent(
                **base,
                pci=_pci(device.group(2)) if device else None,
                available_gbps=float(available),
                limited_speed_gts=float(speed),
                limited_width=int(width),
                limiting_device=_pci(at),
                capable_gbps=float(capable),
                capable_speed_gts=float(cap_speed),
                capable_width=int(cap_width),
                message=body[m.start() :][:512],
            )
        )

    # mlx5 -----------------------------------------------------------------------------------

    def _mlx5(self, body: str, base: dict) -> None:
        device = _DEVICE.match(body)
        pci = _pci(device.group(2)) if device else None
        rest = body[device.end() :] if device else body
        m = _IB_PORT.match(rest)
        if m:
            self.events.append(
                Mlx5LinkEvent(
                    **base,
                    pci=pci,
                    ibdev=m.group(1),
                    port=int(m.group(2)),
                    link_state=m.group(3).upper(),
                    message=rest[:512],
                )
            )
            return
        m = _MODULE.search(rest)
        if m:
            self.events.append(
                Mlx5ModuleEvent(
                    **base,
                    pci=pci,
                    severity=m.group(1),
                    module=int(m.group(2)),
                    message=m.group(3).strip()[:512],
                )
            )
            return
        m = _POWER.search(rest)
        if m:
            self.events.append(Mlx5PowerEvent(**base, pci=pci, watts=int(m.group(1)), message=rest[:512]))
            return
        m = _NETDEV_LINK.match(rest)
        if m and device is not None and device.group(1) == "mlx5_core":
            self.events.append(
                Mlx5LinkEvent(
                    **base, pci=pci, netdev=m.group(1), link_state=m.group(2).upper(), message=rest[:512]
                )
            )


def _xid_event(m: re.Match[str], base: dict) -> XidEvent:
    tag, code, rest = m.group(1), int(m.group(2)), (m.group(3) or "").strip()
    info = xid_info(code)
    event = XidEvent(**base, pci=_pci(tag), xid=code, mnemonic=info.mnemonic, category=info.category)
    p = _PID.match(rest)
    if p:
        pid, name = p.groups()
        event.pid = int(pid) if pid.isdigit() else None
        name = (name or "").strip()
        event.process = name if name and name != "<unknown>" else None
        rest = rest[p.end() :].strip()
    event.message = rest[:512] or None
    if info.category == "nvlink":
        n = _NVLINK5.match(rest)
        if n:
            event.nvlink_error, event.severity, event.link = n.group(1), n.group(2), int(n.group(3))
        else:
            sub = _SUBCODE.match(rest)
            event.nvlink_error = sub.group(1) if sub else None
            link = _LINK.search(rest)
            event.link = int(link.group(1)) if link else None
            if "fatal error" in rest.lower():
                event.severity = "Fatal"
    c = _CAUSED_BY.search(rest)
    if c:
        event.caused_by_xid = int(c.group(1))
    r = _RECOVERY.search(rest)
    if r:
        event.recovery_action = r.group(2).strip()
    k = _CONTAINED.match(rest)
    if k:
        event.severity = k.group(1)
    return event


def _pci(text: str | None) -> PciAddress | None:
    if not text:
        return None
    try:
        return parse_pci_address(text)
    except ParseError:
        return None


def _aer_source(source: str, reporter: PciAddress | None) -> PciAddress | None:
    """The device an AER ``received`` line names: an address, or (older kernels) a 16-bit requester id."""
    address = _pci(source)
    if address is not None:
        return address
    if len(source) == 4 and all(c in "0123456789abcdefABCDEF" for c in source):
        rid = int(source, 16)  # bus << 8 | device << 3 | function, in the reporter's domain
        domain = reporter.domain if reporter else 0
        return PciAddress(domain=domain, bus=rid >> 8, device=(rid >> 3) & 0x1F, function=rid & 7)
    return None


def _key(pci: PciAddress) -> tuple[int, int, int, int]:
    return pci.domain, pci.bus, pci.device, pci.function or 0


def kernel_lines(
    text: str, *, boot_unix: float | None = None, year: int | None = None, not_after: float | None = None
):
    """(line number, wall time or None, body after the prefix) for every line of a kernel log, in any
    prefix style :func:`parse_kernel_log` accepts; for readers of lines it has no event for."""
    clock = _Clock(boot_unix, year, [], not_after)
    for line_no, line in enumerate(plain_lines(text), 1):
        if len(line) > _MAX_LINE or not line.strip():
            continue
        stamp = clock.split(line.rstrip("\r"))
        yield line_no, stamp.time_unix, stamp.body
