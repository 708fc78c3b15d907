"""``nodes/<host>/nvml.json``: NVML readings keyed by the pynvml function that returns them.

The schema is in ``spec/bundle.md``. Every key is optional; a device NVML could not read carries
``"error"`` instead of readings. Values of the wrong type become None with a warning, never an
exception: one odd reading must not hide the others.

Also here: the clock event (throttle) reason bitmask shared by NVML, DCGM and nvidia-smi.
"""

from __future__ import annotations

import json
import math
from typing import Any

from forensic.sandbox.errors import ParseError
from forensic.tools.parsers.pci import PciAddress, parse_pci_address
from pydantic import BaseModel, Field

from forensic.times import parse_time

__all__ = [
    "CLOCK_EVENT_REASONS",
    "clock_event_reason_bit",
    "NvmlDevice",
    "NvmlEvent",
    "NvmlSnapshot",
    "decode_clock_event_reasons",
    "is_power",
    "is_thermal",
    "parse_nvml_json",
    "parse_nvml_readings",
]

# nvmlClocksEventReason* bits (nvml.h); the last two exist only in pynvml.
CLOCK_EVENT_REASONS: dict[int, str] = {
    0x001: "gpu_idle",
    0x002: "applications_clocks_setting",
    0x004: "sw_power_cap",
    0x008: "hw_slowdown",
    0x010: "sync_boost",
    0x020: "sw_thermal_slowdown",
    0x040: "hw_thermal_slowdown",
    0x080: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
    0x200: "board_limit",
    0x400: "reliability",
}
_NAME_TO_BIT = {name: bit for bit, name in CLOCK_EVENT_REASONS.items()}
# hw_slowdown alone may be thermal or power (its header comment lists both): only the specific bits decide.
_THERMAL_BITS = _NAME_TO_BIT["sw_thermal_slowdown"] | _NAME_TO_BIT["hw_thermal_slowdown"]
_POWER_BITS = _NAME_TO_BIT["sw_power_cap"] | _NAME_TO_BIT["hw_power_brake_slowdown"]
_MASK64 = (1 << 64) - 1

# nvmlEventType* bits, for recorders that store the type as a number.
_EVENT_TYPES: dict[int, str] = {
    0x0001: "SingleBitEccError",
    0x0002: "DoubleBitEccError",
    0x0004: "PState",
    0x0008: "XidCriticalError",
    0x0010: "Clock",
    0x0080: "PowerSourceChange",
    0x0200: "SingleBitEccErrorStorm",
    0x0400: "DramRetirementEvent",
    0x0800: "DramRetirementFailure",
    0x1000: "NonFatalPoisonError",
    0x2000: "FatalPoisonError",
    0x4000: "GpuUnavailableError",
    0x8000: "GpuRecoveryAction",
}

# NVML_CLOCK_GRAPHICS=0, NVML_CLOCK_SM=1, NVML_CLOCK_MEM=2: recorders may key clocks by name or by number.
_CLOCK_KEYS = {
    "sm": ("sm", "SM", "1", "NVML_CLOCK_SM"),
    "mem": ("mem", "memory", "MEM", "Memory", "2", "NVML_CLOCK_MEM"),
    "graphics": ("graphics", "gr", "GRAPHICS", "Graphics", "0", "NVML_CLOCK_GRAPHICS"),
}

_KNOWN_DEVICE_KEYS = frozenset(
    {
        "index",
        "uuid",
        "pci_bus_id",
        "name",
        "error",
        "nvmlDeviceGetCurrPcieLinkGeneration",
        "nvmlDeviceGetMaxPcieLinkGeneration",
        "nvmlDeviceGetGpuMaxPcieLinkGeneration",
        "nvmlDeviceGetCurrPcieLinkWidth",
        "nvmlDeviceGetMaxPcieLinkWidth",
        "nvmlDeviceGetPcieReplayCounter",
        "nvmlDeviceGetTemperature",
        "nvmlDeviceGetPowerUsage",
        "nvmlDeviceGetEnforcedPowerLimit",
        "nvmlDeviceGetClockInfo",
        "nvmlDeviceGetMaxClockInfo",
        "nvmlDeviceGetCurrentClocksEventReasons",
        "nvmlDeviceGetCurrentClocksThrottleReasons",
        "nvmlDeviceGetTotalEccErrors",
        "nvmlDeviceGetRemappedRows",
    }
)


def decode_clock_event_reasons(mask: int) -> list[str]:
    """Names of the bits set in an NVML clock event reason mask, lowest bit first.

    Bits without a known name come back as ``"bit_0x..."`` so nothing is silently dropped.
    """
    mask = int(mask) & _MASK64
    names = []
    bit = 1
    while bit <= mask:
        if mask & bit:
            names.append(CLOCK_EVENT_REASONS.get(bit, f"bit_{bit:#x}"))
        bit <<= 1
    return names


def is_thermal(mask: int) -> bool:
    """True when a thermal slowdown (software or hardware) is active."""
    return bool(int(mask) & _THERMAL_BITS)


def is_power(mask: int) -> bool:
    """True when the software power cap or the hardware power brake is active."""
    return bool(int(mask) & _POWER_BITS)


def clock_event_reason_bit(name: str) -> int | None:
    """The mask bit for a reason name from :data:`CLOCK_EVENT_REASONS`."""
    return _NAME_TO_BIT.get(name)


class NvmlDevice(BaseModel):
    """One GPU's NVML readings; every reading is None when absent or unusable."""

    index: int | None = Field(None, description="NVML index on its host (the `gpu<i>` of a component name).")
    uuid: str | None = Field(None, description="GPU UUID, `GPU-...`.")
    pci_bus_id: str | None = Field(None, description="Bus id as recorded (NVML spelling `00000000:9B:00.0`).")
    pci: PciAddress | None = Field(None, description="The bus id parsed; None if absent or malformed.")
    name: str | None = Field(None, description="Product name, e.g. `NVIDIA H100 80GB HBM3`.")
    error: str | None = Field(None, description="NVML error text for a device that could not be read.")
    lost: bool = Field(False, description="True when the device carries `error`: no readings could be taken.")
    pcie_gen_current: int | None = Field(None, description="Current PCIe generation (drops on an idle GPU).")
    pcie_gen_max: int | None = Field(None, description="Max PCIe generation of GPU and system together.")
    pcie_gen_gpu_max: int | None = Field(None, description="Max PCIe generation the GPU supports.")
    pcie_width_current: int | None = Field(None, description="Current PCIe link width (lanes).")
    pcie_width_max: int | None = Field(None, description="Max PCIe link width (lanes).")
    pcie_replay_counter: int | None = Field(None, description="PCIe replays since reset.")
    temperature_c: int | None = Field(None, description="GPU core temperature, degrees C.")
    power_usage_mw: int | None = Field(None, description="Power draw, milliwatts.")
    enforced_power_limit_mw: int | None = Field(None, description="Enforced power limit, milliwatts.")
    clock_sm_mhz: int | None = Field(None, description="Current SM clock, MHz.")
    clock_mem_mhz: int | None = Field(None, description="Current memory clock, MHz.")
    clock_graphics_mhz: int | None = Field(None, description="Current graphics clock, MHz.")
    max_clock_sm_mhz: int | None = Field(None, description="Max SM clock, MHz.")
    max_clock_mem_mhz: int | None = Field(None, description="Max memory clock, MHz.")
    clocks_event_reasons: int | None = Field(
        None, description="Clock event reason bitmask (also read from the deprecated throttle-reasons key)."
    )
    ecc_corrected_volatile: int | None = Field(None, description="Corrected ECC errors since driver load.")
    ecc_uncorrected_volatile: int | None = Field(
        None, description="Uncorrected ECC errors since driver load."
    )
    ecc_corrected_aggregate: int | None = Field(None, description="Corrected ECC errors, lifetime.")
    ecc_uncorrected_aggregate: int | None = Field(None, description="Uncorrected ECC errors, lifetime.")
    remapped_rows_corrected: int | None = Field(None, description="Rows remapped for correctable errors.")
    remapped_rows_uncorrected: int | None = Field(None, description="Rows remapped for uncorrectable errors.")
    remapped_rows_pending: bool | None = Field(None, description="A remap waits for a GPU reset.")
    remapped_rows_failure: bool | None = Field(None, description="A row remap failed (no spare rows).")
    extra: dict[str, Any] = Field(
        default_factory=dict, description="Keys this parser does not know, untouched."
    )

    @property
    def clock_event_reason_names(self) -> list[str]:
        """Decoded :attr:`clocks_event_reasons` (empty when unknown)."""
        if self.clocks_event_reasons is None:
            return []
        return decode_clock_event_reasons(self.clocks_event_reasons)


class NvmlEvent(BaseModel):
    """One recorded NVML event (an event-set wait result)."""

    device: int | None = Field(None, description="NVML index of the device the event came from.")
    type: str | None = Field(None, description="Event type name without prefix, e.g. `XidCriticalError`.")
    data: int | None = Field(None, description="Event data; the XID number for XID events.")
    xid: int | None = Field(None, description="The XID, when the event is an XidCriticalError.")
    time_unix: float | None = Field(None, description="When it happened, unix seconds UTC.")


class NvmlSnapshot(BaseModel):
    """Everything ``nvml.json`` holds."""

    driver_version: str | None = Field(None, description="Driver version, e.g. `550.90.07`.")
    devices: list[NvmlDevice] = Field(default_factory=list, description="Devices in file order.")
    events: list[NvmlEvent] = Field(default_factory=list, description="Recorded events in file order.")
    warnings: list[str] = Field(default_factory=list, description="What was odd and how it was read.")


def parse_nvml_json(text: str) -> NvmlSnapshot:
    """Parse ``nvml.json``; raise ParseError only when the text is not a JSON object at all."""
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError; so is a 5000-digit int
        raise ParseError(f"nvml.json is not valid JSON: {str(exc)[:200]}") from None
    return parse_nvml_readings(doc)


def parse_nvml_readings(doc: object) -> NvmlSnapshot:
    """Readings already decoded from JSON (or taken live in the same shape); ParseError if not an object."""
    if not isinstance(doc, dict):
        raise ParseError(f"nvml.json must hold a JSON object, got {type(doc).__name__}")
    warnings: list[str] = []
    devices: list[NvmlDevice] = []
    events: list[NvmlEvent] = []
    raw_devices = doc.get("devices")
    if isinstance(raw_devices, list):
        for position, raw in enumerate(raw_devices):
            if isinstance(raw, dict):
                devices.append(_device(raw, position, warnings))
            else:
                warnings.append(f"devices[{position}] is not an object; skipped")
    elif raw_devices is not None:
        warnings.append("'devices' is not a list; ignored")
    raw_events = doc.get("events")
    if isinstance(raw_events, list):
        for position, raw in enumerate(raw_events):
            if isinstance(raw, dict):
                events.append(_event(raw, position, warnings))
            else:
                warnings.append(f"events[{position}] is not an object; skipped")
    elif raw_events is not None:
        warnings.append("'events' is not a list; ignored")
    # Built last: pydantic copies lists on validation, so appending afterwards would be lost.
    return NvmlSnapshot(
        driver_version=_as_str(doc.get("driver_version")), devices=devices, events=events, warnings=warnings
    )


def _field(obj: dict[str, Any], key: str, where: str, warnings: list[str]) -> int | None:
    """An integer reading under ``key``; None (with a warning unless it says "no reading") otherwise."""
    return _checked_int(obj.get(key), f"{where}.{key}", warnings)


def _device(raw: dict[str, Any], position: int, warnings: list[str]) -> NvmlDevice:
    where = f"devices[{position}]"
    dev = NvmlDevice(
        index=_field(raw, "index", where, warnings),
        uuid=_as_str(raw.get("uuid")),
        pci_bus_id=_as_str(raw.get("pci_bus_id")),
        name=_as_str(raw.get("name")),
        extra={k: v for k, v in raw.items() if k not in _KNOWN_DEVICE_KEYS},
    )
    if dev.pci_bus_id is not None:
        try:
            dev.pci = parse_pci_address(dev.pci_bus_id)
        except ParseError:
            warnings.append(f"{where}.pci_bus_id: not a PCI address: {_preview(dev.pci_bus_id)}")
    if raw.get("error") not in (None, ""):
        dev.error = str(raw["error"])[:512]
        dev.lost = True
    dev.pcie_gen_current = _field(raw, "nvmlDeviceGetCurrPcieLinkGeneration", where, warnings)
    dev.pcie_gen_max = _field(raw, "nvmlDeviceGetMaxPcieLinkGeneration", where, warnings)
    dev.pcie_gen_gpu_max = _field(raw, "nvmlDeviceGetGpuMaxPcieLinkGeneration", where, warnings)
    dev.pcie_width_current = _field(raw, "nvmlDeviceGetCurrPcieLinkWidth", where, warnings)
    dev.pcie_width_max = _field(raw, "nvmlDeviceGetMaxPcieLinkWidth", where, warnings)
    dev.pcie_replay_counter = _field(raw, "nvmlDeviceGetPcieReplayCounter", where, warnings)
    dev.power_usage_mw = _field(raw, "nvmlDeviceGetPowerUsage", where, warnings)
    dev.enforced_power_limit_mw = _field(raw, "nvmlDeviceGetEnforcedPowerLimit", where, warnings)

    temperature = raw.get("nvmlDeviceGetTemperature")
    if isinstance(temperature, dict):  # keyed by sensor: {"gpu": 61} or {"0": 61}
        temperature = _first(temperature, ("gpu", "GPU", "0", "NVML_TEMPERATURE_GPU"))
    dev.temperature_c = _checked_int(temperature, f"{where}.nvmlDeviceGetTemperature", warnings)

    clocks = _clocks(raw.get("nvmlDeviceGetClockInfo"), f"{where}.nvmlDeviceGetClockInfo", warnings)
    dev.clock_sm_mhz, dev.clock_mem_mhz = clocks["sm"], clocks["mem"]
    dev.clock_graphics_mhz = clocks["graphics"]
    max_clocks = _clocks(raw.get("nvmlDeviceGetMaxClockInfo"), f"{where}.nvmlDeviceGetMaxClockInfo", warnings)
    dev.max_clock_sm_mhz, dev.max_clock_mem_mhz = max_clocks["sm"], max_clocks["mem"]

    for key in ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"):
        if key in raw:
            dev.clocks_event_reasons = _checked_int(raw[key], f"{where}.{key}", warnings, allow_hex=True)
            if dev.clocks_event_reasons is not None:
                break

    ecc = raw.get("nvmlDeviceGetTotalEccErrors")
    if isinstance(ecc, dict):
        at = f"{where}.nvmlDeviceGetTotalEccErrors"
        dev.ecc_corrected_volatile = _field(ecc, "corrected_volatile", at, warnings)
        dev.ecc_uncorrected_volatile = _field(ecc, "uncorrected_volatile", at, warnings)
        dev.ecc_corrected_aggregate = _field(ecc, "corrected_aggregate", at, warnings)
        dev.ecc_uncorrected_aggregate = _field(ecc, "uncorrected_aggregate", at, warnings)
    elif ecc is not None and not _is_no_reading(ecc):
        warnings.append(f"{where}.nvmlDeviceGetTotalEccErrors: expected an object, got {_preview(ecc)}")

    rows = raw.get("nvmlDeviceGetRemappedRows")
    # pynvml returns a tuple (corrRows, uncRows, isPending, failureOccurred); JSON makes it a list.
    if isinstance(rows, list) and len(rows) == 4:
        rows = dict(zip(("corrected", "uncorrected", "pending", "failure"), rows, strict=True))
    if isinstance(rows, dict):
        at = f"{where}.nvmlDeviceGetRemappedRows"
        dev.remapped_rows_corrected = _field(rows, "corrected", at, warnings)
        dev.remapped_rows_uncorrected = _field(rows, "uncorrected", at, warnings)
        dev.remapped_rows_pending = _as_bool(rows.get("pending"))
        dev.remapped_rows_failure = _as_bool(rows.get("failure"))
    elif rows is not None and not _is_no_reading(rows):
        warnings.append(f"{where}.nvmlDeviceGetRemappedRows: expected an object, got {_preview(rows)}")
    return dev


def _clocks(value: Any, where: str, warnings: list[str]) -> dict[str, int | None]:
    out: dict[str, int | None] = {"sm": None, "mem": None, "graphics": None}
    if isinstance(value, dict):
        for name, keys in _CLOCK_KEYS.items():
            out[name] = _checked_int(_first(value, keys), f"{where}.{name}", warnings)
    elif value is not None and not _is_no_reading(value):
        # A bare number is what nvmlDeviceGetClockInfo(handle, NVML_CLOCK_SM) returns: the clock that matters.
        out["sm"] = _checked_int(value, where, warnings)
        if out["sm"] is not None:
            warnings.append(f"{where}: a bare number; read as the SM clock")
    return out


def _event(raw: dict[str, Any], position: int, warnings: list[str]) -> NvmlEvent:
    where = f"events[{position}]"
    kind = raw.get("type")
    if isinstance(kind, int) and not isinstance(kind, bool):
        kind = _EVENT_TYPES.get(kind, f"{kind:#x}")
    elif isinstance(kind, str):
        for prefix in ("nvmlEventType", "NVML_EVENT_TYPE_"):
            kind = kind.removeprefix(prefix)
    else:
        kind = None
    event = NvmlEvent(
        device=_field(raw, "device", where, warnings),
        type=kind,
        data=_field(raw, "data", where, warnings),
        time_unix=_as_time(raw.get("time")),
    )
    if raw.get("time") is not None and event.time_unix is None:
        warnings.append(f"{where}.time: not a time: {_preview(raw.get('time'))}")
    if kind is not None and kind.lower() in ("xidcriticalerror", "xid_critical_error"):
        event.xid = event.data
    return event


def _first(obj: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        if key in obj:
            return obj[key]
    return None


def _checked_int(value: Any, where: str, warnings: list[str], *, allow_hex: bool = False) -> int | None:
    result = _as_int(value, allow_hex=allow_hex)
    if result is None and value is not None and not _is_no_reading(value):
        warnings.append(f"{where}: not an integer: {_preview(value)}")
    return result


def _is_no_reading(value: Any) -> bool:
    """Values a recorder writes for "could not read": null, N/A, an error object."""
    if value is None:
        return True
    if isinstance(value, str):
        return value.strip().upper() in ("", "N/A", "[N/A]", "NOT SUPPORTED", "[NOT SUPPORTED]")
    return isinstance(value, dict) and "error" in value


def _as_int(value: Any, *, allow_hex: bool = False) -> int | None:
    if isinstance(value, bool):  # True is an int in Python, but never a reading
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else None
    if isinstance(value, str):
        text = value.strip()
        if len(text) > 40:
            return None
        if text.isascii() and (text.isdigit() or (text[:1] == "-" and text[1:].isdigit())):
            return int(text)
        if allow_hex and text[:2].lower() == "0x":
            try:
                return int(text[2:], 16)
            except ValueError:
                return None
    return None


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value != 0
    if isinstance(value, str):
        return {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}.get(
            value.strip().lower()
        )
    return None


def _as_str(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return str(value)[:512]
    return None


def _as_time(value: Any) -> float | None:
    """Unix seconds, or ISO 8601 (``Z`` or an offset; no zone means UTC, as the bundle says)."""
    return parse_time(value)


def _preview(value: Any) -> str:
    return repr(value)[:80]
