"""The state of a fleet over time, before it is printed.

Faults and decoys change this state (a GPU's clock from some time on, a NIC's pause counter rate);
the format writers then print it the way each real tool would. Keeping one state makes every file
of a bundle tell the same story.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .fleet import Fleet

if TYPE_CHECKING:
    from .steps import StepsResult

H100_MAX_SM = 1980
H100_MAX_MEM = 2619
H100_POWER_LIMIT_W = 700

# NVML clock event reason bits
IDLE, APP_CLOCKS, SW_POWER_CAP, HW_SLOWDOWN = 0x1, 0x2, 0x4, 0x8
SYNC_BOOST, SW_THERMAL, HW_THERMAL, HW_POWER_BRAKE = 0x10, 0x20, 0x40, 0x80


class Counter:
    """Monotonic counter: a value at a start time plus piecewise-constant rates and step bumps."""

    def __init__(self, v0: float = 0.0, rate: float = 0.0, t0: float = 0.0):
        self.v0, self.t0 = float(v0), float(t0)
        self.rates: list[tuple[float, float]] = [(t0, float(rate))]
        self.bumps: list[tuple[float, float]] = []

    def set_rate(self, t: float, rate: float) -> None:
        self.rates.append((float(t), float(rate)))
        self.rates.sort(key=lambda x: x[0])

    def bump(self, t: float, amount: float) -> None:
        self.bumps.append((float(t), float(amount)))

    def at(self, t: float) -> float:
        v = self.v0
        for i, (ts, rate) in enumerate(self.rates):
            te = self.rates[i + 1][0] if i + 1 < len(self.rates) else float("inf")
            lo, hi = max(ts, self.t0), min(te, t)
            if hi > lo:
                v += rate * (hi - lo)
        for tb, amt in self.bumps:
            if tb <= t:
                v += amt
        return v

    def int_at(self, t: float) -> int:
        return int(self.at(t))


class Gauge:
    """A reading with a base value, relative noise and time-bounded overrides (value or f(t))."""

    def __init__(self, base: float, noise: float = 0.0, lo: float | None = None, hi: float | None = None):
        self.base, self.noise, self.lo, self.hi = base, noise, lo, hi
        self.over: list[tuple[float, float, float | Callable[[float], float]]] = []

    def set(self, t_from: float, value, t_to: float = float("inf")) -> None:
        self.over.append((t_from, t_to, value))

    def mean(self, t: float) -> float:
        v = self.base
        for a, b, val in self.over:
            if a <= t < b:
                v = val(t) if callable(val) else val
        return v

    def sample(self, t: float, rng: np.random.Generator) -> float:
        v = self.mean(t)
        if self.noise:
            v = v + rng.normal(0.0, self.noise)
        if self.lo is not None:
            v = max(self.lo, v)
        if self.hi is not None:
            v = min(self.hi, v)
        return v


@dataclass
class KernelLine:
    t: float  # wall time (unix s)
    text: str  # message without prefix; may hold embedded newlines for continuation lines
    prio: int = 4  # kmsg priority (4 warning, 6 info, 3 err)


@dataclass
class Xid:
    t: float
    code: int
    message: str


@dataclass
class GpuSim:
    host: str
    index: int
    in_job: bool
    temp: Gauge
    mem_temp: Gauge
    sm_clock: Gauge
    mem_clock: Gauge
    power: Gauge  # watts
    util: Gauge  # percent
    tensor: Gauge  # ratio
    sm_active: Gauge
    reasons: Gauge  # bitmask, no noise
    power_limit: Gauge  # watts (enforced)
    fb_used: Gauge
    counters: dict[str, Counter] = field(default_factory=dict)
    xids: list[Xid] = field(default_factory=list)
    lost_at: float | None = None
    pcie_cur_gen: Gauge = field(default_factory=lambda: Gauge(5))
    pcie_cur_width: Gauge = field(default_factory=lambda: Gauge(16))
    pcie_max_gen: int = 5
    pcie_max_width: int = 16
    remap_pending_at: float | None = None
    remap_failure_at: float | None = None
    aer_cor: dict[str, Counter] = field(default_factory=dict)
    aer_nonfatal_total: int = 0
    aer_fatal_total: int = 0
    pstate: str = "P0"

    def xid_last(self, t: float) -> int:
        last = 0
        for x in sorted(self.xids, key=lambda x: x.t):
            if x.t <= t:
                last = x.code
        return last

    def lost(self, t: float) -> bool:
        return self.lost_at is not None and t >= self.lost_at


@dataclass
class NicSim:
    host: str
    ibdev: str
    netdev: str
    link_layer: str
    counters: dict[str, Counter] = field(default_factory=dict)  # IB PMA counters (sysfs counters/)
    hw_counters: dict[str, Counter] = field(default_factory=dict)  # sysfs hw_counters/
    ethtool: dict[str, Counter] = field(default_factory=dict)  # ethtool -S
    # These four may also change in the window: a list of (t_from, value) (formats.sysfs._at).
    rate: str | list[tuple[float, str]] = "400 Gb/sec (4X NDR)"
    state: str | list[tuple[float, str]] = "4: ACTIVE"
    phys_state: str | list[tuple[float, str]] = "5: LinkUp"
    carrier_changes: Counter = field(default_factory=lambda: Counter(2))
    pcie_cur_speed: float | list[tuple[float, float]] = 32.0
    pcie_cur_width: int | list[tuple[float, int]] = 16
    pcie_max_speed: float = 32.0
    pcie_max_width: int = 16
    tx_bytes_rate: Gauge = field(default_factory=lambda: Gauge(0.0))  # bytes/s on the wire


@dataclass
class Proc:
    pid: int
    user: str
    cpu: float
    mem: float
    time: str
    command: str
    res_kb: int = 0
    state: str = "S"


@dataclass
class HostSim:
    name: str
    boot: float
    dmesg_style: str
    load1: Gauge
    cpu_pressure_rate: (
        Gauge  # seconds of waiting per second (all tasks), /proc/pressure/cpu "some" total rate
    )
    io_pressure_rate: Gauge
    kernel: list[KernelLine] = field(default_factory=list)
    procs: list[Proc] = field(default_factory=list)
    ncpu: int = 192
    cpu_some_avg10: Gauge = field(default_factory=lambda: Gauge(0.4, 0.1, lo=0.0))


@dataclass
class PortSim:
    out_octets: Counter
    in_octets: Counter
    out_discards: Counter
    pfc_tx: dict[int, Counter] = field(default_factory=dict)
    pfc_rx: dict[int, Counter] = field(default_factory=dict)


@dataclass
class PfcwdRow:
    port: str
    queue: int
    status: str
    detected: int
    restored: int
    tx_ok: int
    tx_drop: int
    rx_ok: int
    rx_drop: int
    tx_last_ok: int
    tx_last_drop: int
    rx_last_ok: int
    rx_last_drop: int


@dataclass
class SwitchSim:
    name: str
    ports: dict[str, PortSim] = field(default_factory=dict)
    pfcwd: list[PfcwdRow] = field(default_factory=list)


@dataclass
class RankSlow:
    ranks: list[int]
    t_from: float
    factor: float | Callable[[float], float]
    t_to: float = float("inf")


@dataclass
class JobSim:
    name: str
    base_compute: float
    base_comm: float
    base_gap: float
    t_start: float
    t_end: float
    tp: int = 1  # ranks r with the same r % tp form one data-parallel group
    noise: float = 0.004  # per-rank compute noise (relative sigma)
    rack_jitter: float = 0.002
    slow: list[RankSlow] = field(default_factory=list)
    comm_mult: list[tuple[float, float, float | Callable[[float], float]]] = field(default_factory=list)
    gap_mult: list[tuple[float, float, float | Callable[[float], float]]] = field(default_factory=list)
    #: The trainer times the data wait inside its step (before compute), not between steps.
    input_wait_in_step: bool = False
    comm_spikes: list[tuple[float, float]] = field(default_factory=list)  # (t, extra seconds) one-off
    hang_at: float | None = None
    crash_at: float | None = None
    restart_after: float = 600.0
    checkpoint_every: int = 500
    sdc_rank: int | None = None
    sdc_from: float | None = None
    loss_blip_at: float | None = None
    first_step: int = 10000
    log_every: int = 1
    nccl_transport: str = "IB"  # "IB" | "Socket"
    nccl_env: list[str] = field(default_factory=list)
    nccl_hca_limit: list[str] | None = None
    restart_nccl: dict | None = (
        None  # NCCL settings of the relaunch after crash_at (transport, env, hca_limit, gdr)
    )
    gdr: bool = True
    nccl_version: str = "2.21.5"
    torch_style: str = "2.5"  # "2.5" | "2.7" | "1.13"
    timeout_ms: int = 600000
    crash_rank: int | None = None
    crash_message: str = ""
    lost_rank: int | None = None
    extra_log: list[tuple[float, int | None, str]] = field(default_factory=list)  # (t, rank or None, line)
    mfu_base: float = 0.5

    @staticmethod
    def _mult(items, t: float) -> float:
        m = 1.0
        for a, b, v in items:
            if a <= t < b:
                m *= v(t) if callable(v) else v
        return m


@dataclass
class Scenario:
    """Everything a bundle will say, keyed by what prints it."""

    seed: int
    rng: np.random.Generator
    fleet: Fleet
    t0: float  # window start ("before" snapshot)
    t1: float  # window end
    now: float  # "now" snapshot
    tf: float  # fault onset (for healthy: a reference time)
    job: JobSim
    gpus: dict[tuple[str, int], GpuSim] = field(default_factory=dict)
    nics: dict[tuple[str, str], NicSim] = field(default_factory=dict)
    hosts: dict[str, HostSim] = field(default_factory=dict)
    switches: dict[str, SwitchSim] = field(default_factory=dict)
    opts: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # generator-side description (README/debug only)
    truth: dict = field(default_factory=lambda: {"root_cause": "healthy", "component": None})
    title: str = ""
    reported: str = ""
    alerts: list[dict] = field(default_factory=list)
    scrape: float = 60.0
    metrics_start: float = 0.0
    steps_result: StepsResult | None = None  # set by incident.build once the steps are simulated

    def gpu(self, host: str, idx: int) -> GpuSim:
        return self.gpus[(host, idx)]

    def nic(self, host: str, ibdev: str) -> NicSim:
        return self.nics[(host, ibdev)]

    def kernel(self, host: str, t: float, text: str, prio: int = 4) -> None:
        self.hosts[host].kernel.append(KernelLine(t, text, prio))
