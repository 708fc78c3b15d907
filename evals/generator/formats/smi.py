"""`nvidia-smi -q` text (driver 535+ layout; older drivers print "Clocks Throttle Reasons")."""

from __future__ import annotations

import numpy as np

from ..fleet import Host
from ..sim import (
    APP_CLOCKS,
    HW_POWER_BRAKE,
    HW_SLOWDOWN,
    HW_THERMAL,
    IDLE,
    SW_POWER_CAP,
    SW_THERMAL,
    SYNC_BOOST,
    Scenario,
)
from ._time import utc
from .nvml import _clk


def _act(mask: int, bit: int) -> str:
    return "Active" if mask & bit else "Not Active"


def _kv(indent: int, key: str, value) -> str:
    pad = 4 * indent
    return f"{' ' * pad}{key:<{38 - pad}}: {value}"


def render(scn: Scenario, host: Host, t: float, rng: np.random.Generator) -> str:
    o = scn.opts
    old = o.get("smi_old", False)
    d = utc(t)
    lines = []
    lost = [g for g in host.gpus if scn.gpu(host.name, g.index).lost(t)]
    for g in lost:
        lines.append(f"Unable to determine the device handle for GPU{g.pci.nvml}: Unknown Error")
    lines += [
        "",
        "==============NVSMI LOG==============",
        "",
        _kv(0, "Timestamp", d.strftime("%a %b %d %H:%M:%S %Y")),
        _kv(0, "Driver Version", o["driver"]),
        _kv(0, "CUDA Version", o.get("cuda", "12.4")),
        "",
        _kv(0, "Attached GPUs", len(host.gpus)),
    ]
    for g in host.gpus:
        gs = scn.gpu(host.name, g.index)
        if gs.lost(t):
            continue
        mask = int(gs.reasons.mean(t))
        temp = int(round(gs.temp.sample(t, rng)))
        power = gs.power.sample(t, rng)
        plimit = gs.power_limit.mean(t)
        sm = _clk(gs.sm_clock.sample(t, rng))
        util = int(round(gs.util.sample(t, rng)))
        L = lines.append
        L(f"GPU {g.pci.nvml}")
        L(_kv(1, "Product Name", "NVIDIA H100 80GB HBM3"))
        L(_kv(1, "Product Brand", "NVIDIA"))
        L(_kv(1, "Product Architecture", "Hopper"))
        L(_kv(1, "Display Mode", "Disabled"))
        L(_kv(1, "Persistence Mode", "Enabled"))
        L(_kv(1, "Addressing Mode", "None"))
        L(_kv(1, "MIG Mode", ""))
        L(_kv(2, "Current", "Disabled"))
        L(_kv(2, "Pending", "Disabled"))
        L(_kv(1, "Accounting Mode", "Disabled"))
        L(_kv(1, "Accounting Mode Buffer Size", "4000"))
        L(_kv(1, "Driver Model", ""))
        L(_kv(2, "Current", "N/A"))
        L(_kv(2, "Pending", "N/A"))
        L(_kv(1, "Serial Number", g.serial))
        L(_kv(1, "GPU UUID", g.uuid))
        L(_kv(1, "Minor Number", g.index))
        L(_kv(1, "VBIOS Version", "96.00.99.00.01"))
        L(_kv(1, "MultiGPU Board", "No"))
        L(_kv(1, "Board ID", f"0x{g.pci.bus:x}00"))
        L(_kv(1, "Board Part Number", "692-2G520-0200-000"))
        L(_kv(1, "GPU Part Number", "2330-885-A1"))
        L(_kv(1, "FRU Part Number", "N/A"))
        L(_kv(1, "Module ID", [2, 4, 3, 1, 7, 5, 8, 6][g.index]))
        L(_kv(1, "Inforom Version", ""))
        L(_kv(2, "Image Version", "G520.0200.00.05"))
        L(_kv(2, "OEM Object", "2.1"))
        L(_kv(2, "ECC Object", "7.16"))
        L(_kv(2, "Power Management Object", "N/A"))
        L(_kv(1, "GPU Operation Mode", ""))
        L(_kv(2, "Current", "N/A"))
        L(_kv(2, "Pending", "N/A"))
        L(_kv(1, "GSP Firmware Version", o["driver"]))
        L(_kv(1, "GPU Virtualization Mode", ""))
        L(_kv(2, "Virtualization Mode", "None"))
        L(_kv(2, "Host VGPU Mode", "N/A"))
        if not old:
            L(_kv(1, "GPU Reset Status", ""))
            pending = gs.remap_pending_at is not None and t >= gs.remap_pending_at
            L(_kv(2, "Reset Required", "Yes" if pending else "No"))
            L(_kv(2, "Drain and Reset Recommended", "No"))
        L(_kv(1, "IBMNPU", ""))
        L(_kv(2, "Relaxed Ordering Mode", "N/A"))
        L(_kv(1, "PCI", ""))
        L(_kv(2, "Bus", f"0x{g.pci.bus:02X}"))
        L(_kv(2, "Device", "0x00"))
        L(_kv(2, "Domain", "0x0000"))
        L(_kv(2, "Device Id", "0x233010DE"))
        L(_kv(2, "Bus Id", g.pci.nvml))
        L(_kv(2, "Sub System Id", "0x16C110DE"))
        L(_kv(2, "GPU Link Info", ""))
        L(_kv(3, "PCIe Generation", ""))
        cg = int(gs.pcie_cur_gen.mean(t))
        L(_kv(4, "Max", gs.pcie_max_gen))
        L(_kv(4, "Current", cg))
        L(_kv(4, "Device Current", cg))
        L(_kv(4, "Device Max", gs.pcie_max_gen))
        L(_kv(4, "Host Max", gs.pcie_max_gen))
        L(_kv(3, "Link Width", ""))
        L(_kv(4, "Max", f"{gs.pcie_max_width}x"))
        L(_kv(4, "Current", f"{int(gs.pcie_cur_width.mean(t))}x"))
        L(_kv(2, "Bridge Chip", ""))
        L(_kv(3, "Type", "N/A"))
        L(_kv(3, "Firmware", "N/A"))
        L(_kv(2, "Replays Since Reset", gs.counters["pcie_replay"].int_at(t)))
        L(_kv(2, "Replay Number Rollovers", 0))
        L(_kv(2, "Tx Throughput", f"{int(rng.uniform(200, 900)) if gs.in_job else 0} KB/s"))
        L(_kv(2, "Rx Throughput", f"{int(rng.uniform(300, 1200)) if gs.in_job else 0} KB/s"))
        L(_kv(2, "Atomic Caps Inbound", "N/A"))
        L(_kv(2, "Atomic Caps Outbound", "N/A"))
        L(_kv(1, "Fan Speed", "N/A"))
        L(_kv(1, "Performance State", gs.pstate))
        L(_kv(1, "Clocks Throttle Reasons" if old else "Clocks Event Reasons", ""))
        L(_kv(2, "Idle", _act(mask, IDLE)))
        L(_kv(2, "Applications Clocks Setting", _act(mask, APP_CLOCKS)))
        L(_kv(2, "SW Power Cap", _act(mask, SW_POWER_CAP)))
        L(_kv(2, "HW Slowdown", _act(mask, HW_SLOWDOWN)))
        L(_kv(3, "HW Thermal Slowdown", _act(mask, HW_THERMAL)))
        L(_kv(3, "HW Power Brake Slowdown", _act(mask, HW_POWER_BRAKE)))
        L(_kv(2, "Sync Boost", _act(mask, SYNC_BOOST)))
        L(_kv(2, "SW Thermal Slowdown", _act(mask, SW_THERMAL)))
        L(_kv(2, "Display Clock Setting", "Not Active"))
        L(_kv(1, "Sparse Operation Mode", "Disabled"))
        fb_used = int(gs.fb_used.mean(t))
        L(_kv(1, "FB Memory Usage", ""))
        L(_kv(2, "Total", "81559 MiB"))
        L(_kv(2, "Reserved", "565 MiB"))
        L(_kv(2, "Used", f"{fb_used} MiB"))
        L(_kv(2, "Free", f"{81559 - 565 - fb_used} MiB"))
        L(_kv(1, "BAR1 Memory Usage", ""))
        L(_kv(2, "Total", "131072 MiB"))
        L(_kv(2, "Used", "1 MiB" if not gs.in_job else f"{int(rng.uniform(60, 600))} MiB"))
        L(_kv(2, "Free", "131071 MiB"))
        L(_kv(1, "Compute Mode", "Default"))
        L(_kv(1, "Utilization", ""))
        L(_kv(2, "Gpu", f"{util} %"))
        L(_kv(2, "Memory", f"{int(util * 0.42)} %"))
        L(_kv(2, "Encoder", "0 %"))
        L(_kv(2, "Decoder", "0 %"))
        L(_kv(2, "JPEG", "0 %"))
        L(_kv(2, "OFA", "0 %"))
        L(_kv(1, "ECC Mode", ""))
        L(_kv(2, "Current", "Enabled"))
        L(_kv(2, "Pending", "Enabled"))
        sbe, dbe = gs.counters["sbe"].int_at(t), gs.counters["dbe"].int_at(t)
        L(_kv(1, "ECC Errors", ""))
        for scope in ("Volatile", "Aggregate"):
            L(_kv(2, scope, ""))
            L(_kv(3, "SRAM Correctable", 0))
            L(_kv(3, "SRAM Uncorrectable", 0))
            L(_kv(3, "DRAM Correctable", sbe))
            L(_kv(3, "DRAM Uncorrectable", dbe))
        L(_kv(1, "Retired Pages", ""))
        L(_kv(2, "Single Bit ECC", "N/A"))
        L(_kv(2, "Double Bit ECC", "N/A"))
        L(_kv(2, "Pending Page Blacklist", "N/A"))
        rc, ru = gs.counters["remap_corr"].int_at(t), gs.counters["remap_unc"].int_at(t)
        pending = gs.remap_pending_at is not None and t >= gs.remap_pending_at
        failure = gs.remap_failure_at is not None and t >= gs.remap_failure_at
        L(_kv(1, "Remapped Rows", ""))
        L(_kv(2, "Correctable Error", rc))
        L(_kv(2, "Uncorrectable Error", ru))
        L(_kv(2, "Pending", "Yes" if pending else "No"))
        L(_kv(2, "Remapping Failure Occurred", "Yes" if failure else "No"))
        L(_kv(2, "Bank Remap Availability Histogram", ""))
        L(_kv(3, "Max", f"{2560 - rc - ru} bank(s)"))
        L(_kv(3, "High", f"{rc + ru} bank(s)" if rc + ru else "0 bank(s)"))
        L(_kv(3, "Partial", "0 bank(s)"))
        L(_kv(3, "Low", "0 bank(s)"))
        L(_kv(3, "None", "0 bank(s)"))
        L(_kv(1, "Temperature", ""))
        L(_kv(2, "GPU Current Temp", f"{temp} C"))
        L(_kv(2, "GPU T.Limit Temp", f"{87 - temp} C"))
        L(_kv(2, "GPU Shutdown Temp", "92 C"))
        L(_kv(2, "GPU Slowdown Temp", "90 C"))
        L(_kv(2, "GPU Max Operating Temp", "87 C"))
        L(_kv(2, "GPU Target Temperature", "N/A"))
        L(_kv(2, "Memory Current Temp", f"{int(round(gs.mem_temp.sample(t, rng)))} C"))
        L(_kv(2, "Memory Max Operating Temp", "95 C"))
        if old:
            L(_kv(1, "Power Readings", ""))
            L(_kv(2, "Power Management", "Supported"))
            L(_kv(2, "Power Draw", f"{power:.2f} W"))
            L(_kv(2, "Power Limit", f"{plimit:.2f} W"))
            L(_kv(2, "Default Power Limit", "700.00 W"))
            L(_kv(2, "Enforced Power Limit", f"{plimit:.2f} W"))
            L(_kv(2, "Min Power Limit", "200.00 W"))
            L(_kv(2, "Max Power Limit", "700.00 W"))
        else:
            L(_kv(1, "GPU Power Readings", ""))
            L(_kv(2, "Power Draw", f"{power:.2f} W"))
            L(_kv(2, "Current Power Limit", f"{plimit:.2f} W"))
            L(_kv(2, "Requested Power Limit", f"{plimit:.2f} W"))
            L(_kv(2, "Default Power Limit", "700.00 W"))
            L(_kv(2, "Min Power Limit", "200.00 W"))
            L(_kv(2, "Max Power Limit", "700.00 W"))
            L(_kv(1, "Module Power Readings", ""))
            L(_kv(2, "Power Draw", "N/A"))
            L(_kv(2, "Current Power Limit", "N/A"))
            L(_kv(2, "Requested Power Limit", "N/A"))
            L(_kv(2, "Default Power Limit", "N/A"))
            L(_kv(2, "Min Power Limit", "N/A"))
            L(_kv(2, "Max Power Limit", "N/A"))
        L(_kv(1, "Clocks", ""))
        L(_kv(2, "Graphics", f"{sm} MHz"))
        L(_kv(2, "SM", f"{sm} MHz"))
        L(_kv(2, "Memory", f"{int(gs.mem_clock.mean(t))} MHz"))
        L(_kv(2, "Video", f"{int(sm * 0.89 / 15) * 15 if sm > 400 else 765} MHz"))
        L(_kv(1, "Applications Clocks", ""))
        L(_kv(2, "Graphics", "1755 MHz"))
        L(_kv(2, "Memory", "2619 MHz"))
        L(_kv(1, "Default Applications Clocks", ""))
        L(_kv(2, "Graphics", "1755 MHz"))
        L(_kv(2, "Memory", "2619 MHz"))
        L(_kv(1, "Deferred Clocks", ""))
        L(_kv(2, "Memory", "N/A"))
        L(_kv(1, "Max Clocks", ""))
        L(_kv(2, "Graphics", "1980 MHz"))
        L(_kv(2, "SM", "1980 MHz"))
        L(_kv(2, "Memory", "2619 MHz"))
        L(_kv(2, "Video", "1545 MHz"))
        L(_kv(1, "Max Customer Boost Clocks", ""))
        L(_kv(2, "Graphics", "1980 MHz"))
        L(_kv(1, "Clock Policy", ""))
        L(_kv(2, "Auto Boost", "N/A"))
        L(_kv(2, "Auto Boost Default", "N/A"))
        L(_kv(1, "Voltage", ""))
        L(
            _kv(
                2,
                "Graphics",
                f"{(1000.0 if sm > 1800 else 800 + sm / 10):.3f} mV" if sm > 400 else "670.000 mV",
            )
        )
        L(_kv(1, "Fabric", ""))
        L(_kv(2, "State", "Completed"))
        L(_kv(2, "Status", "Success"))
        L(_kv(1, "Processes", ""))
        if gs.in_job and not gs.lost(t):
            L(_kv(2, "GPU instance ID", "N/A"))
            L(_kv(2, "Compute instance ID", "N/A"))
            L(_kv(2, "Process ID", 100000 + 17 * g.index + (hash_host(host.name) % 50000)))
            L(_kv(3, "Type", "C"))
            L(_kv(3, "Name", "python3"))
            L(_kv(3, "Used GPU Memory", f"{fb_used - 480} MiB"))
        else:
            lines[-1] = _kv(1, "Processes", "None")
        L("")
    return "\n".join(lines) + "\n"


def hash_host(name: str) -> int:
    import zlib

    return zlib.crc32(name.encode())
