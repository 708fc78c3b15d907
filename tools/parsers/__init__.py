"""Pure text parsers for recorded and live node evidence: no file I/O, no sandbox."""

from tools.parsers.kernel_log import (
    XID_CATALOG,
    AerEvent,
    EventKind,
    FellOffBusEvent,
    KernelEvent,
    KernelLog,
    Mlx5LinkEvent,
    Mlx5ModuleEvent,
    Mlx5PowerEvent,
    PcieBandwidthEvent,
    SxidEvent,
    XidCategory,
    XidEvent,
    XidInfo,
    parse_kernel_log,
    xid_info,
)
from tools.parsers.lspci import LinkStatus, LspciDevice, parse_lspci_vv
from tools.parsers.nvidia_smi import EccCounts, SmiGpu, parse_nvidia_smi_q
from tools.parsers.nvml import (
    CLOCK_EVENT_REASONS,
    NvmlDevice,
    NvmlEvent,
    NvmlSnapshot,
    clock_event_reason_bit,
    decode_clock_event_reasons,
    is_power,
    is_thermal,
    parse_nvml_json,
)
from tools.parsers.openmetrics import (
    MetricFamily,
    MetricSet,
    MetricType,
    Series,
    counter_increase,
    is_counter_like,
    parse_openmetrics,
    series_host,
)
from tools.parsers.pci import PciAddress, parse_pci_address
from tools.parsers.sysfs import (
    parse_aer_counters,
    parse_ib_state,
    parse_int_file,
    parse_link_speed,
    parse_link_width,
    pcie_generation,
)
