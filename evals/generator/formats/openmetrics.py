"""OpenMetrics text as dcgm-exporter, node_exporter and snmp_exporter series look after a TSDB export."""

from __future__ import annotations

import numpy as np

from ..sim import Scenario
from .nvml import _clk

# (family, kind, help, value function name)
DCGM_FAMILIES = {
    "SM_CLOCK": ("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."),
    "MEM_CLOCK": ("DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz)."),
    "GPU_TEMP": ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."),
    "MEMORY_TEMP": ("DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C)."),
    "POWER_USAGE": ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
    "GPU_UTIL": ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
    "TENSOR": (
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
        "gauge",
        "Ratio of cycles the tensor (HMMA) pipe is active.",
    ),
    "SM_ACTIVE": (
        "DCGM_FI_PROF_SM_ACTIVE",
        "gauge",
        "The ratio of cycles an SM has at least 1 warp assigned.",
    ),
    "PCIE_REPLAY": ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries."),
    "XID": ("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."),
    "REASONS": ("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "gauge", "Current clock event reasons (bitmask)."),
    "THERMAL_VIOLATION": (
        "DCGM_FI_DEV_THERMAL_VIOLATION",
        "counter",
        "Throttling duration due to thermal constraints (in ns).",
    ),
    "POWER_VIOLATION": (
        "DCGM_FI_DEV_POWER_VIOLATION",
        "counter",
        "Throttling duration due to power constraints (in ns).",
    ),
    "ECC_SBE": (
        "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
        "counter",
        "Total number of single-bit volatile ECC errors.",
    ),
    "ECC_DBE": (
        "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
        "counter",
        "Total number of double-bit volatile ECC errors.",
    ),
    "NVLINK_CRC": (
        "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
        "counter",
        "Total number of NVLink flow-control CRC errors.",
    ),
    "NVLINK_REPLAY": (
        "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL",
        "counter",
        "Total number of NVLink retries.",
    ),
    "REMAP_UNC": (
        "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
        "counter",
        "Number of remapped rows for uncorrectable errors",
    ),
    "REMAP_COR": (
        "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
        "counter",
        "Number of remapped rows for correctable errors",
    ),
    "REMAP_FAIL": ("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed"),
    "FB_USED": ("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."),
}


def _ts(t: float, frac: bool) -> str:
    return f"{t:.3f}" if frac else str(int(t))


def _times(scn: Scenario) -> np.ndarray:
    start = np.floor(scn.metrics_start / scn.scrape) * scn.scrape
    return np.arange(start, scn.now, scn.scrape)


def dcgm(scn: Scenario, hosts: list[str], rng: np.random.Generator) -> str:
    o = scn.opts
    fields = o["dcgm_fields"]
    label = o["dcgm_host_label"]
    frac = o.get("om_frac_ts", False)
    counter_type = o.get("dcgm_counter_type", "counter")
    times = _times(scn)
    out: list[str] = []
    for key in fields:
        name, kind, help_ = DCGM_FAMILIES[key]
        if key == "REASONS" and o.get("dcgm_reasons_old"):
            name = "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"
        if kind == "counter":
            kind = counter_type
        if key == "GPU_TEMP" and label == "hostname":
            help_ = "GPU temperature (in °C)."
        out.append(f"# HELP {name} {help_}")
        out.append(f"# TYPE {name} {kind}")
        for hname in hosts:
            host = scn.fleet.host(hname)
            for g in host.gpus:
                gs = scn.gpu(hname, g.index)
                labels = (
                    f'gpu="{g.index}",UUID="{g.uuid}",pci_bus_id="{g.pci.nvml}",device="nvidia{g.index}",'
                    f'modelName="NVIDIA H100 80GB HBM3",{label}="{hname}",DCGM_FI_DRIVER_VERSION="{o["driver"]}"'
                )
                for t in times:
                    t = float(t)
                    if gs.lost(t):
                        break
                    v = _value(key, gs, t, rng)
                    out.append(f"{name}{{{labels}}} {v} {_ts(t, frac)}")
    out.append("# EOF")
    return "\n".join(out) + "\n"


def _value(key: str, gs, t: float, rng: np.random.Generator) -> str:
    if key == "SM_CLOCK":
        return str(_clk(gs.sm_clock.sample(t, rng)))
    if key == "MEM_CLOCK":
        return str(int(gs.mem_clock.mean(t)))
    if key == "GPU_TEMP":
        return str(int(round(gs.temp.sample(t, rng))))
    if key == "MEMORY_TEMP":
        return str(int(round(gs.mem_temp.sample(t, rng))))
    if key == "POWER_USAGE":
        return f"{gs.power.sample(t, rng):.3f}"
    if key == "GPU_UTIL":
        return str(int(round(gs.util.sample(t, rng))))
    if key == "TENSOR":
        return f"{gs.tensor.sample(t, rng):.3f}"
    if key == "SM_ACTIVE":
        return f"{gs.sm_active.sample(t, rng):.3f}"
    if key == "PCIE_REPLAY":
        return str(gs.counters["pcie_replay"].int_at(t))
    if key == "XID":
        return str(gs.xid_last(t))
    if key == "REASONS":
        return str(int(gs.reasons.mean(t)))
    if key == "THERMAL_VIOLATION":
        return str(gs.counters["thermal_violation"].int_at(t))
    if key == "POWER_VIOLATION":
        return str(gs.counters["power_violation"].int_at(t))
    if key == "ECC_SBE":
        return str(gs.counters["sbe"].int_at(t))
    if key == "ECC_DBE":
        return str(gs.counters["dbe"].int_at(t))
    if key == "NVLINK_CRC":
        return str(gs.counters["nvlink_crc"].int_at(t))
    if key == "NVLINK_REPLAY":
        return str(gs.counters["nvlink_replay"].int_at(t))
    if key == "REMAP_UNC":
        return str(gs.counters["remap_unc"].int_at(t))
    if key == "REMAP_COR":
        return str(gs.counters["remap_corr"].int_at(t))
    if key == "REMAP_FAIL":
        return "1" if gs.remap_failure_at is not None and t >= gs.remap_failure_at else "0"
    if key == "FB_USED":
        return str(int(gs.fb_used.mean(t)))
    raise KeyError(key)


def node(scn: Scenario, hosts: list[str], rng: np.random.Generator) -> str:
    o = scn.opts
    frac = o.get("om_frac_ts", False)
    times = _times(scn)
    out: list[str] = []
    inst = lambda h: f"{h}:9100"  # noqa: E731

    def fam(name, kind, help_, fn):
        out.append(f"# HELP {name} {help_}")
        out.append(f"# TYPE {name} {kind}")
        for h in hosts:
            fn(h)

    def load(h):
        hs = scn.hosts[h]
        for t in times:
            out.append(
                f'node_load1{{instance="{inst(h)}",job="node"}} {hs.load1.sample(float(t), rng):.2f} {_ts(float(t), frac)}'
            )

    def _pressure(h, name, attr, salt):
        hs = scn.hosts[h]
        gauge = getattr(hs, attr)
        # integrate the waiting rate on the fly
        acc = 1.0e5 + (abs(hash_(h + salt)) % 100000)
        prev = None
        for t in times:
            t = float(t)
            if prev is not None:
                acc += max(0.0, gauge.sample(t, rng)) * (t - prev)
            prev = t
            out.append(f'{name}{{instance="{inst(h)}",job="node"}} {acc:.3f} {_ts(t, frac)}')

    def pressure(h):
        _pressure(h, "node_pressure_cpu_waiting_seconds_total", "cpu_pressure_rate", "")

    def io_pressure(h):
        _pressure(h, "node_pressure_io_waiting_seconds_total", "io_pressure_rate", "io")

    fam("node_load1", "gauge", "1m load average.", load)
    fam(
        "node_pressure_cpu_waiting_seconds_total",
        "counter",
        "Total time in seconds that processes have waited for CPU time",
        pressure,
    )
    fam(
        "node_pressure_io_waiting_seconds_total",
        "counter",
        "Total time in seconds that processes have waited due to IO congestion",
        io_pressure,
    )
    if o.get("node_ib", True):
        ib = [
            (
                "node_infiniband_port_data_received_bytes_total",
                "Number of data octets received on all links",
                "port_rcv_data",
                4,
            ),
            (
                "node_infiniband_port_data_transmitted_bytes_total",
                "Number of data octets transmitted on all links",
                "port_xmit_data",
                4,
            ),
            (
                "node_infiniband_port_errors_received_total",
                "Number of packets containing an error that were received on this port",
                "port_rcv_errors",
                1,
            ),
            (
                "node_infiniband_link_downed_total",
                "Number of times the link failed to recover from an error state and went down",
                "link_downed",
                1,
            ),
        ]
        if o.get("node_ib_wait"):
            ib.append(
                (
                    "node_infiniband_port_transmit_wait_total",
                    "Number of ticks during which the port had data to transmit but no data was sent during the entire tick",
                    "port_xmit_wait",
                    1,
                )
            )
        if o.get("node_ib_symbol"):
            ib.append(
                (
                    "node_infiniband_symbol_error_total",
                    "Number of minor link errors detected on one or more physical lanes.",
                    "symbol_error",
                    1,
                )
            )
        for name, help_, ctr, mult in ib:
            out.append(f"# HELP {name} {help_}")
            out.append(f"# TYPE {name} counter")
            for h in hosts:
                host = scn.fleet.host(h)
                for n in host.nics:
                    ns = scn.nic(h, n.ibdev)
                    c = ns.counters[ctr]
                    for t in times:
                        out.append(
                            f'{name}{{device="{n.ibdev}",instance="{inst(h)}",job="node",port="{n.port}"}} '
                            f"{int(c.at(float(t)) * mult)} {_ts(float(t), frac)}"
                        )
    out.append("# EOF")
    return "\n".join(out) + "\n"


def snmp(scn: Scenario, switches: list[tuple[str, list[str]]], rng: np.random.Generator) -> str:
    o = scn.opts
    frac = o.get("om_frac_ts", False)
    times = _times(scn)
    out: list[str] = []
    fams = [
        (
            "ifHCOutOctets",
            "The total number of octets transmitted out of the interface, including framing characters. - 1.3.6.1.2.1.31.1.1.1.10",
            "out_octets",
        ),
        (
            "ifHCInOctets",
            "The total number of octets received on the interface, including framing characters. - 1.3.6.1.2.1.31.1.1.1.6",
            "in_octets",
        ),
        (
            "ifOutDiscards",
            "The number of outbound packets which were chosen to be discarded even though no errors had been detected to prevent their being transmitted. - 1.3.6.1.2.1.2.2.1.19",
            "out_discards",
        ),
    ]
    for name, help_, attr in fams:
        out.append(f"# HELP {name} {help_}")
        out.append(f"# TYPE {name} counter")
        for sw, ports in switches:
            ss = scn.switches[sw]
            for port in ports:
                c = getattr(ss.ports[port], attr)
                idx = _ifindex(port)
                for t in times:
                    out.append(
                        f'{name}{{ifIndex="{idx}",ifName="{port}",instance="{sw}",job="snmp"}} {int(c.at(float(t)))} {_ts(float(t), frac)}'
                    )
    out.append("# EOF")
    return "\n".join(out) + "\n"


def _ifindex(port: str) -> int:
    digits = "".join(ch for ch in port if ch.isdigit())
    return 1000 + int(digits or 0) + 1


def hash_(s: str) -> int:
    import zlib

    return zlib.crc32(s.encode())
