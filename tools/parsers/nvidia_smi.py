"""``nvidia-smi -q`` (``cmd/nvidia-smi-q.txt``) into one :class:`SmiGpu` per GPU.

The output is an indented tree: headings (``PCI``, ``GPU Link Info``) and ``Key   : Value`` lines.
Each GPU block is read into a map from its heading path to the value, with keys lower-cased and
spaces collapsed, so section names that changed across drivers ("Clocks Event Reasons" /
"Clocks Throttle Reasons", "GPU Power Readings" / "Power Readings") are alternatives of one lookup.
A GPU nvidia-smi cannot reach prints "Unable to determine the device handle for GPU...: Unknown
Error" (or "GPU is lost") instead of a block; it comes back with ``lost=True``.
"""

from __future__ import annotations

import re

from forensic.sandbox.errors import ParseError
from forensic.tools.parsers.nvml import clock_event_reason_bit
from forensic.tools.parsers.pci import PciAddress, parse_pci_address
from pydantic import BaseModel, Field

__all__ = ["EccCounts", "SmiGpu", "parse_nvidia_smi_q"]

_MAX_LINE = 64 * 1024
# nvidia-smi nests five deep at most; a cap keeps hostile indentation from making every path huge.
_MAX_DEPTH = 16
# GPU blocks start at column 0 with the NVML bus id: "GPU 00000000:10:1C.0".
_GPU_HEADING = re.compile(r"GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\s*")
_NO_HANDLE = re.compile(
    r"Unable to determine the device handle for (?:GPU|gpu)\s?([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])"
    r"\s?:\s?(.{0,200})"
)
_NUMBER = re.compile(r"[-+]?\d{1,15}(?:\.\d{1,6})?")
_NO_VALUE = frozenset(
    {"n/a", "[n/a]", "not supported", "[not supported]", "unknown error", "[unknown error]", ""}
)

# nvidia-smi labels of the clock event reasons, mapped to the NVML names in nvml.CLOCK_EVENT_REASONS.
_REASONS = {
    "idle": "gpu_idle",
    "gpu idle": "gpu_idle",
    "applications clocks setting": "applications_clocks_setting",
    "sw power cap": "sw_power_cap",
    "hw slowdown": "hw_slowdown",
    "hw thermal slowdown": "hw_thermal_slowdown",
    "hw power brake slowdown": "hw_power_brake_slowdown",
    "sync boost": "sync_boost",
    "sw thermal slowdown": "sw_thermal_slowdown",
    "display clock setting": "display_clock_setting",
}
_REASON_SECTIONS = ("clocks event reasons", "clocks throttle reasons")
_POWER_SECTIONS = ("gpu power readings", "power readings")

_Path = tuple[str, ...]


class EccCounts(BaseModel):
    """ECC error counts of one kind (volatile or aggregate); None where not printed or N/A."""

    dram_correctable: int | None = Field(None, description="DRAM (device memory) correctable errors.")
    dram_uncorrectable: int | None = Field(None, description="DRAM (device memory) uncorrectable errors.")
    sram_correctable: int | None = Field(None, description="SRAM correctable errors (Ampere+ layout).")
    sram_uncorrectable: int | None = Field(
        None, description="SRAM uncorrectable errors (Parity + SEC-DED where printed separately)."
    )
    correctable_total: int | None = Field(
        None, description="All correctable errors (`Single Bit` Total, or SRAM+DRAM)."
    )
    uncorrectable_total: int | None = Field(
        None, description="All uncorrectable errors (`Double Bit` Total, or SRAM+DRAM)."
    )


class SmiGpu(BaseModel):
    """One GPU as ``nvidia-smi -q`` printed it; None wherever a value is absent or N/A."""

    bus_id: str | None = Field(None, description="Bus id as printed, `00000000:10:1C.0`.")
    pci: PciAddress | None = Field(None, description="The bus id parsed.")
    lost: bool = Field(False, description="nvidia-smi could not reach the GPU (no handle, `GPU is lost`).")
    lost_reason: str | None = Field(None, description="The error text nvidia-smi printed for a lost GPU.")
    driver_version: str | None = Field(None, description="Driver version from the header.")
    cuda_version: str | None = Field(None, description="CUDA version from the header.")
    product_name: str | None = Field(None, description="Product Name.")
    uuid: str | None = Field(None, description="GPU UUID.")
    serial_number: str | None = Field(None, description="Board serial number.")
    minor_number: int | None = Field(None, description="Minor number (`/dev/nvidia<N>`).")
    pcie_gen_max: int | None = Field(None, description="PCIe generation, Max (GPU and host together).")
    pcie_gen_current: int | None = Field(None, description="PCIe generation, Current (drops on an idle GPU).")
    pcie_gen_device_max: int | None = Field(None, description="PCIe generation, Device Max (newer drivers).")
    pcie_gen_device_current: int | None = Field(
        None, description="PCIe generation, Device Current (newer drivers)."
    )
    pcie_gen_host_max: int | None = Field(None, description="PCIe generation, Host Max (newer drivers).")
    link_width_max: int | None = Field(None, description="Link width Max, lanes (`16x` -> 16).")
    link_width_current: int | None = Field(None, description="Link width Current, lanes.")
    replays_since_reset: int | None = Field(None, description="PCIe replays since reset.")
    replay_number_rollovers: int | None = Field(None, description="PCIe replay counter rollovers.")
    clock_event_reasons: dict[str, bool] = Field(
        default_factory=dict, description="Reason name (NVML vocabulary) -> Active, for each reason printed."
    )
    clock_event_reasons_mask: int | None = Field(
        None, description="The active reasons as an NVML bitmask; None without the section."
    )
    temp_gpu_c: int | None = Field(None, description="GPU Current Temp, C.")
    temp_slowdown_c: int | None = Field(None, description="GPU Slowdown Temp, C.")
    temp_shutdown_c: int | None = Field(None, description="GPU Shutdown Temp, C.")
    temp_max_operating_c: int | None = Field(None, description="GPU Max Operating Temp, C.")
    temp_memory_c: int | None = Field(None, description="Memory Current Temp, C.")
    power_draw_w: float | None = Field(
        None, description="Power Draw (or Instantaneous/Average Power Draw), W."
    )
    power_limit_w: float | None = Field(
        None, description="Current Power Limit (older: Enforced Power Limit, Power Limit), W."
    )
    default_power_limit_w: float | None = Field(
        None, description="Default Power Limit, W: the board's limit before anyone lowered it."
    )
    clock_graphics_mhz: int | None = Field(None, description="Clocks: Graphics, MHz.")
    clock_sm_mhz: int | None = Field(None, description="Clocks: SM, MHz.")
    clock_mem_mhz: int | None = Field(None, description="Clocks: Memory, MHz.")
    max_clock_sm_mhz: int | None = Field(None, description="Max Clocks: SM, MHz.")
    max_clock_mem_mhz: int | None = Field(None, description="Max Clocks: Memory, MHz.")
    ecc_volatile: EccCounts = Field(default_factory=EccCounts, description="ECC errors since driver load.")
    ecc_aggregate: EccCounts = Field(default_factory=EccCounts, description="ECC errors, lifetime.")
    retired_pages_sbe: int | None = Field(None, description="Retired Pages: Single Bit ECC (pre-Ampere).")
    retired_pages_dbe: int | None = Field(None, description="Retired Pages: Double Bit ECC (pre-Ampere).")
    retired_pages_pending: bool | None = Field(
        None, description="Retired Pages: Pending Page Blacklist/Retirement."
    )
    remapped_rows_correctable: int | None = Field(None, description="Remapped Rows: Correctable Error.")
    remapped_rows_uncorrectable: int | None = Field(None, description="Remapped Rows: Uncorrectable Error.")
    remapped_rows_pending: bool | None = Field(
        None, description="Remapped Rows: Pending (needs a GPU reset)."
    )
    remapped_rows_failure: bool | None = Field(None, description="Remapped Rows: Remapping Failure Occurred.")
    reset_required: bool | None = Field(None, description="GPU Reset Status: Reset Required.")
    drain_and_reset_recommended: bool | None = Field(
        None, description="GPU Reset Status: Drain and Reset Recommended."
    )
    warnings: list[str] = Field(default_factory=list, description="What was odd in this GPU's block.")


def parse_nvidia_smi_q(text: str) -> list[SmiGpu]:
    """Parse ``nvidia-smi -q`` text; unknown lines are skipped, nothing raises."""
    header: dict[_Path, str] = {}
    blocks: list[tuple[str, dict[_Path, str], list[str]]] = []
    lost: dict[str, str] = {}  # bus id -> reason, from "Unable to determine the device handle" lines
    current: dict[_Path, str] | None = None
    current_warnings: list[str] = []
    stack: list[tuple[int, str]] = []  # (indent, heading) of the open sections

    for line_no, raw in enumerate(text.split("\n"), 1):
        if len(raw) > _MAX_LINE:
            if current is not None:
                current_warnings.append(f"line {line_no}: longer than {_MAX_LINE} characters; skipped")
            continue
        line = raw.rstrip().expandtabs(4)
        stripped = line.lstrip()
        if not stripped:
            continue
        indent = len(line) - len(stripped)
        if "device handle" in stripped:
            m = _NO_HANDLE.search(stripped)
            if m:
                lost[_normal_bus_id(m.group(1))] = m.group(2).strip() or "no device handle"
                continue
        if indent == 0:
            m = _GPU_HEADING.fullmatch(stripped)
            if m:
                current, current_warnings, stack = {}, [], []
                blocks.append((m.group(1), current, current_warnings))
                continue
        while stack and stack[-1][0] >= indent:
            stack.pop()
        key, sep, value = stripped.partition(" :")
        if not sep and stripped.endswith(":"):  # "Key:" with nothing after it
            key, sep, value = stripped[:-1], ":", ""
        if not sep:
            if "gpu is lost" in stripped.lower() and current is not None:
                current[("gpu is lost",)] = stripped
            elif len(stack) < _MAX_DEPTH:
                stack.append((indent, _norm(stripped)))
            continue
        target = header if current is None or indent == 0 else current
        target[(*(heading for _, heading in stack), _norm(key))] = value.strip()

    driver = header.get(("driver version",))
    cuda = header.get(("cuda version",))
    gpus = [_gpu(bus_id, values, warnings, driver, cuda) for bus_id, values, warnings in blocks]
    for gpu in gpus:
        reason = lost.pop(_normal_bus_id(gpu.bus_id or ""), None)
        if reason is not None:
            gpu.lost, gpu.lost_reason = True, reason
    for bus_id, reason in lost.items():
        gpu = SmiGpu(bus_id=bus_id, lost=True, lost_reason=reason, driver_version=driver, cuda_version=cuda)
        gpu.pci = _pci(bus_id, gpu.warnings)
        gpus.append(gpu)
    return gpus


def _gpu(
    bus_id: str, v: dict[_Path, str], warnings: list[str], driver: str | None, cuda: str | None
) -> SmiGpu:
    gpu = SmiGpu(bus_id=bus_id, driver_version=driver, cuda_version=cuda, warnings=warnings)
    gpu.pci = _pci(bus_id, gpu.warnings)  # gpu.warnings: pydantic copied the list
    lost_text = next((value for value in v.values() if "gpu is lost" in value.lower()), None)
    lost_text = lost_text or v.get(("gpu is lost",))
    if lost_text:
        gpu.lost, gpu.lost_reason = True, lost_text[:200]

    gpu.product_name = _text(v.get(("product name",)))
    gpu.uuid = _text(v.get(("gpu uuid",)))
    gpu.serial_number = _text(v.get(("serial number",)))
    gpu.minor_number = _int(v.get(("minor number",)))

    link = ("pci", "gpu link info")
    gen, width = (*link, "pcie generation"), (*link, "link width")
    gpu.pcie_gen_max = _int(v.get((*gen, "max")))
    gpu.pcie_gen_current = _int(v.get((*gen, "current")))
    gpu.pcie_gen_device_max = _int(v.get((*gen, "device max")))
    gpu.pcie_gen_device_current = _int(v.get((*gen, "device current")))
    gpu.pcie_gen_host_max = _int(v.get((*gen, "host max")))
    gpu.link_width_max = _int(v.get((*width, "max")))
    gpu.link_width_current = _int(v.get((*width, "current")))
    gpu.replays_since_reset = _int(v.get(("pci", "replays since reset")))
    gpu.replay_number_rollovers = _int(v.get(("pci", "replay number rollovers")))

    for section in _REASON_SECTIONS:
        for (head, *rest), value in v.items():
            if head == section and len(rest) == 1 and rest[0] in _REASONS:
                active = _active(value)
                if active is not None:
                    gpu.clock_event_reasons[_REASONS[rest[0]]] = active
    if gpu.clock_event_reasons:
        gpu.clock_event_reasons_mask = 0
        for name, active in gpu.clock_event_reasons.items():
            if active:
                gpu.clock_event_reasons_mask |= clock_event_reason_bit(name) or 0

    temp = ("temperature",)
    gpu.temp_gpu_c = _int(v.get((*temp, "gpu current temp")))
    gpu.temp_slowdown_c = _int(v.get((*temp, "gpu slowdown temp")))
    gpu.temp_shutdown_c = _int(v.get((*temp, "gpu shutdown temp")))
    gpu.temp_max_operating_c = _int(v.get((*temp, "gpu max operating temp")))
    gpu.temp_memory_c = _int(v.get((*temp, "memory current temp")))

    gpu.power_draw_w = _first_number(
        v, _POWER_SECTIONS, ("power draw", "instantaneous power draw", "average power draw")
    )
    gpu.power_limit_w = _first_number(
        v, _POWER_SECTIONS, ("current power limit", "enforced power limit", "power limit")
    )
    gpu.default_power_limit_w = _first_number(v, _POWER_SECTIONS, ("default power limit",))
    gpu.clock_graphics_mhz = _int(v.get(("clocks", "graphics")))
    gpu.clock_sm_mhz = _int(v.get(("clocks", "sm")))
    gpu.clock_mem_mhz = _int(v.get(("clocks", "memory")))
    gpu.max_clock_sm_mhz = _int(v.get(("max clocks", "sm")))
    gpu.max_clock_mem_mhz = _int(v.get(("max clocks", "memory")))

    gpu.ecc_volatile = _ecc(v, ("ecc errors", "volatile"))
    gpu.ecc_aggregate = _ecc(v, ("ecc errors", "aggregate"))

    pages = ("retired pages",)
    gpu.retired_pages_sbe = _int(v.get((*pages, "single bit ecc")))
    gpu.retired_pages_dbe = _int(v.get((*pages, "double bit ecc")))
    gpu.retired_pages_pending = _yes_no(
        _first_value(v, pages, ("pending page blacklist", "pending page retirement", "pending"))
    )
    rows = ("remapped rows",)
    gpu.remapped_rows_correctable = _int(v.get((*rows, "correctable error")))
    gpu.remapped_rows_uncorrectable = _int(v.get((*rows, "uncorrectable error")))
    gpu.remapped_rows_pending = _yes_no(v.get((*rows, "pending")))
    gpu.remapped_rows_failure = _yes_no(v.get((*rows, "remapping failure occurred")))
    gpu.reset_required = _yes_no(v.get(("gpu reset status", "reset required")))
    gpu.drain_and_reset_recommended = _yes_no(v.get(("gpu reset status", "drain and reset recommended")))
    return gpu


def _ecc(v: dict[_Path, str], base: _Path) -> EccCounts:
    counts = EccCounts(
        dram_correctable=_int(v.get((*base, "dram correctable"))),
        dram_uncorrectable=_int(v.get((*base, "dram uncorrectable"))),
        sram_correctable=_int(v.get((*base, "sram correctable"))),
        sram_uncorrectable=_int(v.get((*base, "sram uncorrectable"))),
    )
    if counts.sram_uncorrectable is None:  # R550+ splits it into Parity and SEC-DED
        counts.sram_uncorrectable = _sum(
            _int(v.get((*base, "sram uncorrectable parity"))),
            _int(v.get((*base, "sram uncorrectable sec-ded"))),
        )
    # Pre-Ampere layout: "Single Bit" / "Double Bit" headings with per-location lines and a Total.
    single, double = (*base, "single bit"), (*base, "double bit")
    if counts.dram_correctable is None:
        counts.dram_correctable = _int(v.get((*single, "device memory")))
    if counts.dram_uncorrectable is None:
        counts.dram_uncorrectable = _int(v.get((*double, "device memory")))
    counts.correctable_total = _int(v.get((*single, "total")))
    if counts.correctable_total is None:
        counts.correctable_total = _sum(counts.sram_correctable, counts.dram_correctable)
    counts.uncorrectable_total = _int(v.get((*double, "total")))
    if counts.uncorrectable_total is None:
        counts.uncorrectable_total = _sum(counts.sram_uncorrectable, counts.dram_uncorrectable)
    return counts


def _first_value(v: dict[_Path, str], sections: _Path, keys: _Path) -> str | None:
    for section in sections:
        for key in keys:
            value = v.get((section, key))
            if value is not None and value.lower() not in _NO_VALUE:
                return value
    return None


def _first_number(v: dict[_Path, str], sections: _Path, keys: _Path) -> float | None:
    return _number(_first_value(v, sections, keys))


def _sum(*values: int | None) -> int | None:
    present = [value for value in values if value is not None]
    return sum(present) if present else None


def _norm(key: str) -> str:
    return " ".join(key.split()).lower()


def _normal_bus_id(bus_id: str) -> str:
    try:
        return parse_pci_address(bus_id).sysfs_form()
    except ParseError:
        return bus_id.lower()


def _pci(bus_id: str, warnings: list[str]) -> PciAddress | None:
    try:
        return parse_pci_address(bus_id)
    except ParseError:
        warnings.append(f"bus id {bus_id[:40]!r} is not a PCI address")
        return None


def _text(value: str | None) -> str | None:
    if value is None or value.lower() in _NO_VALUE:
        return None
    return value[:512]


def _number(value: str | None) -> float | None:
    """``61 C`` -> 61.0, ``512.00 W`` -> 512.0, ``16x`` -> 16.0, ``N/A`` -> None."""
    if value is None or len(value) > 64:
        return None
    tokens = value.split(None, 1)
    if not tokens:
        return None
    # The whole first token must be the number: "99999...9 C" is not read as its first 15 digits.
    m = _NUMBER.fullmatch(tokens[0].removesuffix("x").removeprefix("x"))
    return float(m.group()) if m else None


def _int(value: str | None) -> int | None:
    number = _number(value)
    return int(number) if number is not None and number.is_integer() else None


def _active(value: str) -> bool | None:
    return {"active": True, "not active": False}.get(value.strip().lower())


def _yes_no(value: str | None) -> bool | None:
    if value is None:
        return None
    return {"yes": True, "no": False}.get(value.strip().lower())
