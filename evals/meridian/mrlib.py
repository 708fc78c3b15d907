"""Fleet model and source printers for the meridian evaluation set (stdlib only).

One Fleet per case: hosts, GPUs, NICs, switches, ports and ranks. Every source (metrics, sysfs,
command outputs, NVML, steps) is printed from the same objects, so counters agree across sources.
"""
import gzip
import io
import json
import os
import zlib
from datetime import datetime, timezone

GPU_MODELS = {
    "h100": dict(name="NVIDIA H100 80GB HBM3", clk=1980, mem=2619, limit=700, gen=5, dev="2330", arch="Hopper",
                 fb=81559, idle_w=72),
    "h200": dict(name="NVIDIA H200", clk=1980, mem=3201, limit=700, gen=5, dev="2335", arch="Hopper", fb=143771,
                 idle_w=78),
    "a100": dict(name="NVIDIA A100-SXM4-80GB", clk=1410, mem=1593, limit=400, gen=4, dev="20b2", arch="Ampere",
                 fb=81920, idle_w=61),
    "b200": dict(name="NVIDIA B200", clk=1965, mem=3996, limit=1000, gen=5, dev="2901", arch="Blackwell",
                 fb=183359, idle_w=140),
}
GPU_BUSES = [0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb]
NIC_BUSES = [0x1a, 0x2c, 0x3c, 0x5f, 0x9c, 0xad, 0xbc, 0xdd]
SPEED = {1: "2.5", 2: "5.0", 3: "8.0", 4: "16.0", 5: "32.0"}
SPEED_OLD = {1: "2.5", 2: "5", 3: "8", 4: "16", 5: "32"}
LSPCI_SPEED = {1: "2.5GT/s", 2: "5GT/s", 3: "8GT/s", 4: "16GT/s", 5: "32GT/s"}
WEEKDAY = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
MONTH = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def noise(*key):
    """Deterministic pseudo-noise in [-1, 1] from a key."""
    return (zlib.crc32(repr(key).encode()) % 20001) / 10000.0 - 1.0


def iso(t):
    return datetime.fromtimestamp(int(t), tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def dt(t):
    return datetime.fromtimestamp(int(t), tz=timezone.utc)


class Ctr:
    """A counter: value `base` at window start, grows linearly from `ton` to reach `now` at window end."""

    def __init__(self, base=0, now=None, ton=None):
        self.base = int(base)
        self.now = int(base if now is None else now)
        self.ton = ton

    def at(self, t, t0, t1):
        if self.now == self.base:
            return self.base
        ton = t0 if self.ton is None else self.ton
        if t <= ton:
            return self.base
        return self.base + int((self.now - self.base) * min(1.0, (t - ton) / max(1.0, t1 - ton)))


class Rate(Ctr):
    """A traffic counter: rate r0 until ton, r1 after (units per second)."""

    def __init__(self, base, r0, r1, ton, t0, t1):
        self.base, self.r0, self.r1, self.ton0, self.t0 = int(base), r0, r1, ton, t0
        self.ton = ton
        self.now = self.at(t1, t0, t1)

    def at(self, t, t0, t1):
        ton = self.ton0 if self.ton0 is not None else t1
        a = min(t, ton) - self.t0
        b = max(0, t - ton)
        return self.base + int(self.r0 * max(0, a) + self.r1 * b)


class Scaled(Ctr):
    def __init__(self, c, k):
        self.c, self.k = c, k
        self.base, self.now, self.ton = c.base * k, c.now * k, c.ton

    def at(self, t, t0, t1):
        return self.c.at(t, t0, t1) * self.k


class GPU:
    def __init__(self, host, idx, model, rng, bus=None):
        self.host, self.idx, self.m = host, idx, GPU_MODELS[model]
        self.bus = GPU_BUSES[idx] if bus is None else bus
        self.uuid = "GPU-%08x-%04x-%04x-%04x-%012x" % (rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(16),
                                                       rng.getrandbits(16), rng.getrandbits(48))
        self.serial = str(1650000000000 + rng.randrange(99999999))
        self.busy = True
        m = self.m
        # nominal busy state: near the limit; some GPUs sit at the SW power cap (normal)
        self.swcap = rng.random() < 0.45
        self.base = dict(clk=m["clk"] - (rng.randrange(60, 180) if self.swcap else 0),
                         temp=rng.randrange(54, 70), power=m["limit"] * (0.985 if self.swcap else rng.uniform(0.80, 0.93)),
                         reasons=0x4 if self.swcap else 0, util=100, tensor=rng.uniform(0.38, 0.46))
        self.limit = m["limit"]
        self.after = {}  # overrides after onset
        self.ton = None
        self.max_gen, self.max_width = m["gen"], 16
        self.cur_gen, self.cur_width = m["gen"], 16
        self.c = dict(replay=Ctr(0), sbe=Ctr(0), dbe=Ctr(0), crc=Ctr(0), nvreplay=Ctr(0), nvrecov=Ctr(0),
                      pviol=Ctr(0), tviol=Ctr(0))
        self.crc_link = 0  # which link carries crc growth
        self.rows = dict(corrected=0, uncorrected=0, pending=False, failure=False)
        self.lost_at = None
        self.last_xid = 0
        self.aer_cor = {}  # name -> (before, now)
        self.agg_sbe_extra = 0
        self.static_crc = {}

    @property
    def name(self):
        return f"{self.host.name}/gpu{self.idx}"

    def nvml_bus(self):
        return "00000000:%02X:00.0" % self.bus

    def sys_bus(self):
        return "0000:%02x:00.0" % self.bus

    def idle(self):
        self.busy = False
        self.swcap = False
        self.base = dict(clk=345, temp=self.host.rng.randrange(29, 36), power=self.m["idle_w"], reasons=0x1, util=0,
                         tensor=0.0)
        self.cur_gen = 1  # power-saving link state when idle

    def v(self, k, t):
        if self.ton is not None and t >= self.ton and k in self.after:
            x = self.after[k]
        else:
            x = self.base[k]
        if k == "clk" and self.busy and x > 400 and not (x == self.m["clk"]):
            x = x + int(15 * noise(self.name, k, int(t)))
            x = min(x, self.m["clk"])
        if k == "temp":
            x = x + int(round(1.2 * noise(self.name, k, int(t))))
        if k == "power":
            x = x * (1 + 0.006 * noise(self.name, k, int(t)))
            lim = self.limit if (self.ton is None or t >= self.ton) else self.m["limit"]
            x = min(x, lim * 1.002)
        if k == "tensor":
            x = max(0.0, x * (1 + 0.02 * noise(self.name, k, int(t))))
        return x


class NIC:
    def __init__(self, host, i, ll, rng, netdev=None, rate=400):
        self.host, self.i = host, i
        self.ibdev = f"mlx5_{i}"
        self.ll = ll
        self.bus = NIC_BUSES[i]
        if netdev is None:
            netdev = ("ibp%ds0" % self.bus) if ll == "InfiniBand" else ("ens%df0np0" % (i + 1))
        self.netdev = netdev
        self.rate = rate
        self.max_gen, self.max_width, self.cur_gen, self.cur_width = 5, 16, 5, 16
        self.switch = None
        self.port = None
        self.c = {k: Ctr(0) for k in ("port_rcv_errors", "symbol_error", "link_downed", "port_xmit_wait",
                                      "port_rcv_data", "port_xmit_data", "link_error_recovery",
                                      "local_ack_timeout_err", "out_of_sequence", "packet_seq_err",
                                      "np_cnp_sent", "rp_cnp_handled", "np_ecn_marked_roce_packets",
                                      "rx_prio3_pause", "tx_prio3_pause", "rx_prio3_pause_duration",
                                      "tx_prio3_pause_duration", "tx_pause_storm_warning_events", "rx_discards_phy",
                                      "rx_out_of_buffer", "link_down_events_phy", "rx_symbol_err_phy",
                                      "fec_corrected", "fec_uncorrectable", "carrier_changes")}
        self.state_now = "4: ACTIVE"
        self.phys_now = "5: LinkUp"

    @property
    def name(self):
        return f"{self.host.name}/{self.ibdev}"

    def sys_bus(self):
        return "0000:%02x:00.0" % self.bus


class Host:
    def __init__(self, name, rack, model, ngpu, nnic, ll, rng, rate=400, netdev_fmt=None):
        self.name, self.rack, self.rng = name, rack, rng
        self.gpus = [GPU(self, i, model, rng) for i in range(ngpu)]
        self.nics = [NIC(self, i, ll, rng, None if netdev_fmt is None else netdev_fmt % i, rate) for i in range(nnic)]
        self.node = False  # has node-level data
        self.boot = None
        self.dmesg = []  # (t, text)
        self.cpu_psi = (0.4, 0.2)  # avg10 some before, now
        self.mem_psi = None
        self.io_psi = None
        self.load = 18.0
        self.top_extra = []
        self.sel = None
        self.fans = None
        self.spare = False
        self.cpus = 192


class Switch:
    def __init__(self, name, tier, sonic=True):
        self.name, self.tier, self.sonic = name, tier, sonic
        self.ports = {}  # port -> dict(peer=..., peer_port=..., rx_pfc3, tx_pfc3, in_oct Ctr, out_oct Ctr, rx_err, discards)
        self.links = []
        self.pfcwd = []  # (port:queue, status, det/rest, txok/drop, rxok/drop)

    def port(self, p):
        if p not in self.ports:
            self.ports[p] = dict(rx_pfc3=0, tx_pfc3=0, in_oct=Ctr(0), out_oct=Ctr(0), rx_err=Ctr(0), discards=Ctr(0),
                                 rx_ok=0, tx_ok=0, state="U")
        return self.ports[p]


class Out:
    def __init__(self):
        self.files = {}

    def put(self, path, text, gz=False):
        data = text.encode() if isinstance(text, str) else text
        if gz:
            buf = io.BytesIO()
            with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=6) as g:
                g.write(data)
            data = buf.getvalue()
            path += ".gz"
        self.files[path] = data

    def write(self, root):
        for p in sorted(self.files):
            full = os.path.join(root, p)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "wb") as f:
                f.write(self.files[p])


# ----------------------------------------------------------------------------------------------
# printers
# ----------------------------------------------------------------------------------------------

def dmesg_lines(h, style, t0):
    """Render host kernel messages in one of the dmesg styles."""
    out = []
    seq = 1200 + int(abs(noise(h.name, "seq")) * 5000)
    for t, text in sorted(h.dmesg, key=lambda x: x[0]):
        up = t - h.boot
        d = dt(t)
        if style == "plain":
            out.append("[%12.6f] %s" % (up, text))
        elif style == "ctime":
            out.append("[%s %s %2d %02d:%02d:%02d %d] %s" % (WEEKDAY[d.weekday()], MONTH[d.month - 1], d.day, d.hour,
                                                           d.minute, d.second, d.year, text))
        elif style == "journal":
            out.append("%s %2d %02d:%02d:%02d %s kernel: %s" % (MONTH[d.month - 1], d.day, d.hour, d.minute,
                                                                d.second, h.name, text))
        elif style == "kmsg":
            prio = 3 if ("Xid" in text or "error" in text.lower()) else 6
            out.append("%d,%d,%d,-;%s" % (prio, seq, int(up * 1e6), text))
            seq += 1
    return "\n".join(out) + "\n"


def nvidia_smi_q(h, t, drv, old=False):
    L = []
    d = dt(t)
    L.append("")
    L.append("==============NVSMI LOG==============")
    L.append("")
    L.append("Timestamp                                 : %s %s %2d %02d:%02d:%02d %d" % (
        WEEKDAY[d.weekday()], MONTH[d.month - 1], d.day, d.hour, d.minute, d.second, d.year))
    L.append("Driver Version                            : %s" % drv)
    L.append("CUDA Version                              : %s" % ("12.4" if drv.startswith("550") else "12.2" if drv.startswith("535") else "12.8" if drv.startswith("570") else "11.4"))
    L.append("")
    L.append("Attached GPUs                             : %d" % len(h.gpus))
    pre = []
    for g in h.gpus:
        if g.lost_at is not None and g.lost_at <= t:
            pre.append("Unable to determine the device handle for GPU%s: Unknown Error" % g.nvml_bus())
            continue
        reasons = int(g.v("reasons", t))
        rs = lambda b: "Active" if reasons & b else "Not Active"
        L.append("GPU %s" % g.nvml_bus())
        L.append("    Product Name                          : %s" % g.m["name"])
        L.append("    Product Architecture                  : %s" % g.m["arch"])
        L.append("    Persistence Mode                      : Enabled")
        L.append("    Serial Number                         : %s" % g.serial)
        L.append("    GPU UUID                              : %s" % g.uuid)
        L.append("    Minor Number                          : %d" % g.idx)
        L.append("    PCI")
        L.append("        Bus                               : 0x%02X" % g.bus)
        L.append("        Bus Id                            : %s" % g.nvml_bus())
        L.append("        GPU Link Info")
        L.append("            PCIe Generation")
        L.append("                Max                       : %d" % g.max_gen)
        L.append("                Current                   : %d" % g.cur_gen)
        if not old:
            L.append("                Device Current            : %d" % g.cur_gen)
            L.append("                Device Max                : %d" % g.max_gen)
            L.append("                Host Max                  : %d" % g.max_gen)
        L.append("            Link Width")
        L.append("                Max                       : %dx" % g.max_width)
        L.append("                Current                   : %dx" % g.cur_width)
        L.append("        Replays Since Reset               : %d" % g.c["replay"].now)
        L.append("        Replay Number Rollovers           : 0")
        L.append("    Performance State                     : %s" % ("P0" if g.busy else "P8"))
        L.append("    %s" % ("Clocks Throttle Reasons" if old else "Clocks Event Reasons"))
        L.append("        Idle                              : %s" % rs(0x1))
        L.append("        Applications Clocks Setting       : %s" % rs(0x2))
        L.append("        SW Power Cap                      : %s" % rs(0x4))
        L.append("        HW Slowdown                       : %s" % rs(0x8))
        L.append("            HW Thermal Slowdown           : %s" % rs(0x40))
        L.append("            HW Power Brake Slowdown       : %s" % rs(0x80))
        L.append("        Sync Boost                        : %s" % rs(0x10))
        L.append("        SW Thermal Slowdown               : %s" % rs(0x20))
        L.append("        Display Clock Setting             : %s" % rs(0x100))
        L.append("    FB Memory Usage")
        L.append("        Total                             : %d MiB" % g.m["fb"])
        used = int(g.m["fb"] * 0.91) if g.busy else 0
        L.append("        Used                              : %d MiB" % used)
        L.append("    Utilization")
        L.append("        Gpu                               : %d %%" % int(g.v("util", t)))
        L.append("    ECC Errors")
        L.append("        Volatile")
        L.append("            SRAM Correctable              : 0")
        L.append("            SRAM Uncorrectable            : 0")
        L.append("            DRAM Correctable              : %d" % g.c["sbe"].now)
        L.append("            DRAM Uncorrectable            : %d" % g.c["dbe"].now)
        L.append("        Aggregate")
        L.append("            SRAM Correctable              : 0")
        L.append("            SRAM Uncorrectable            : 0")
        L.append("            DRAM Correctable              : %d" % (g.c["sbe"].now + g.agg_sbe_extra))
        L.append("            DRAM Uncorrectable            : %d" % g.c["dbe"].now)
        L.append("    Remapped Rows")
        L.append("        Correctable Error                 : %d" % g.rows["corrected"])
        L.append("        Uncorrectable Error               : %d" % g.rows["uncorrected"])
        L.append("        Pending                           : %s" % ("Yes" if g.rows["pending"] else "No"))
        L.append("        Remapping Failure Occurred        : %s" % ("Yes" if g.rows["failure"] else "No"))
        L.append("    Temperature")
        L.append("        GPU Current Temp                  : %d C" % int(g.v("temp", t)))
        L.append("        GPU Shutdown Temp                 : 92 C")
        L.append("        GPU Slowdown Temp                 : 89 C")
        L.append("        GPU Max Operating Temp            : 87 C")
        if old:
            L.append("    Power Readings")
            L.append("        Power Management                  : Supported")
            L.append("        Power Draw                        : %.2f W" % g.v("power", t))
            L.append("        Power Limit                       : %.2f W" % g.limit)
            L.append("        Default Power Limit               : %.2f W" % g.m["limit"])
            L.append("        Enforced Power Limit              : %.2f W" % g.limit)
        else:
            L.append("    GPU Power Readings")
            L.append("        Power Draw                        : %.2f W" % g.v("power", t))
            L.append("        Current Power Limit               : %.2f W" % g.limit)
            L.append("        Requested Power Limit             : %.2f W" % g.limit)
            L.append("        Default Power Limit               : %.2f W" % g.m["limit"])
        L.append("    Clocks")
        L.append("        Graphics                          : %d MHz" % int(g.v("clk", t)))
        L.append("        SM                                : %d MHz" % int(g.v("clk", t)))
        L.append("        Memory                            : %d MHz" % g.m["mem"])
        L.append("    Max Clocks")
        L.append("        Graphics                          : %d MHz" % g.m["clk"])
        L.append("        SM                                : %d MHz" % g.m["clk"])
        L.append("        Memory                            : %d MHz" % g.m["mem"])
        L.append("")
    return "\n".join(pre + L) + "\n"


def lspci_vv(h, t):
    L = []
    for g in h.gpus:
        lost = g.lost_at is not None and g.lost_at <= t
        if lost:
            L.append("%02x:00.0 3D controller: NVIDIA Corporation Device %s (rev ff) (prog-if ff)" % (g.bus, g.m["dev"]))
            L.append("\t!!! Unknown header type 7f")
            L.append("\tKernel driver in use: nvidia")
            L.append("")
            continue
        L += _lspci_block("%02x:00.0 3D controller: NVIDIA Corporation Device %s (rev a1)" % (g.bus, g.m["dev"]),
                          g.max_gen, g.max_width, g.cur_gen, g.cur_width, "nvidia", "nvidiafb, nouveau, nvidia_drm, nvidia")
    for n in h.nics:
        L += _lspci_block("%02x:00.0 %s controller: Mellanox Technologies MT2910 Family [ConnectX-7]" % (
            n.bus, "Infiniband" if n.ll == "InfiniBand" else "Ethernet"), n.max_gen, n.max_width, n.cur_gen,
            n.cur_width, "mlx5_core", "mlx5_core")
    return "\n".join(L) + "\n"


def _lspci_block(head, mg, mw, cg, cw, drv, mods):
    sp = "(ok)" if cg >= mg else "(downgraded)"
    wd = "(ok)" if cw >= mw else "(downgraded)"
    return [head,
            "\tSubsystem: NVIDIA Corporation Device 16c1" if "NVIDIA" in head else "\tSubsystem: Mellanox Technologies Device 0041",
            "\tControl: I/O- Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr- Stepping- SERR+ FastB2B- DisINTx+",
            "\tCapabilities: [60] Express (v2) Endpoint, MSI 00",
            "\t\tDevSta:\tCorrErr- NonFatalErr- FatalErr- UnsupReq- AuxPwr- TransPend-",
            "\t\tLnkCap:\tPort #0, Speed %s, Width x%d, ASPM L1, Exit Latency L1 <4us" % (LSPCI_SPEED[mg], mw),
            "\t\t\tClockPM+ Surprise- LLActRep- BwNot- ASPMOptComp+",
            "\t\tLnkCtl:\tASPM Disabled; RCB 64 bytes, Disabled- CommClk-",
            "\t\t\tExtSynch- ClockPM- AutWidDis- BWInt- AutBWInt-",
            "\t\tLnkSta:\tSpeed %s %s, Width x%d %s" % (LSPCI_SPEED[cg], sp, cw, wd),
            "\t\t\tTrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-",
            "\t\tLnkCap2: Supported Link Speeds: 2.5-%s, Crosslink- Retimer+ 2Retimers+ DRS-" % LSPCI_SPEED[mg],
            "\t\tLnkCtl2: Target Link Speed: %s, EnterCompliance- SpeedDis-" % LSPCI_SPEED[mg],
            "\tKernel driver in use: %s" % drv,
            "\tKernel modules: %s" % mods,
            ""]


def nvml_json(h, t, drv, events):
    devs = []
    for g in h.gpus:
        d = {"index": g.idx, "uuid": g.uuid, "pci_bus_id": g.nvml_bus(), "name": g.m["name"]}
        if g.lost_at is not None and g.lost_at <= t:
            d["error"] = "GPU is lost"
            devs.append(d)
            continue
        d.update({
            "nvmlDeviceGetCurrPcieLinkGeneration": g.cur_gen, "nvmlDeviceGetMaxPcieLinkGeneration": g.max_gen,
            "nvmlDeviceGetCurrPcieLinkWidth": g.cur_width, "nvmlDeviceGetMaxPcieLinkWidth": g.max_width,
            "nvmlDeviceGetPcieReplayCounter": g.c["replay"].now,
            "nvmlDeviceGetTemperature": int(g.v("temp", t)),
            "nvmlDeviceGetPowerUsage": int(g.v("power", t) * 1000),
            "nvmlDeviceGetEnforcedPowerLimit": int(g.limit * 1000),
            "nvmlDeviceGetClockInfo": {"sm": int(g.v("clk", t)), "mem": g.m["mem"]},
            "nvmlDeviceGetMaxClockInfo": {"sm": g.m["clk"], "mem": g.m["mem"]},
            "nvmlDeviceGetCurrentClocksEventReasons": int(g.v("reasons", t)),
            "nvmlDeviceGetTotalEccErrors": {"corrected_volatile": g.c["sbe"].now, "uncorrected_volatile": g.c["dbe"].now},
            "nvmlDeviceGetRemappedRows": dict(g.rows),
        })
        devs.append(d)
    return json.dumps({"driver_version": drv, "devices": devs, "events": events}, indent=1, sort_keys=True) + "\n"


def nvlink_e(h, t, t0, t1, nlinks=18):
    L = []
    for g in h.gpus:
        if g.lost_at is not None and g.lost_at <= t:
            continue
        L.append("GPU %d: %s (UUID: %s)" % (g.idx, g.m["name"], g.uuid))
        for l in range(nlinks):
            on = l == g.crc_link
            crc = g.c["crc"].at(t, t0, t1) if on else g.static_crc.get(l, 0)
            rep = g.c["nvreplay"].at(t, t0, t1) if on else 0
            rec = g.c["nvrecov"].at(t, t0, t1) if on else 0
            L.append("\t Link %d: Replay Errors: %d" % (l, rep))
            L.append("\t Link %d: Recovery Errors: %d" % (l, rec))
            L.append("\t Link %d: CRC Errors: %d" % (l, crc))
    return "\n".join(L) + "\n"


def ibstat(h):
    L = []
    for n in h.nics:
        L += ["CA '%s'" % n.ibdev, "\tCA type: MT4129", "\tNumber of ports: 1", "\tFirmware version: 28.41.1000",
              "\tHardware version: 0", "\tNode GUID: 0x%016x" % (0xa088c20300000000 + n.bus * 256 + len(h.name)),
              "\tSystem image GUID: 0x%016x" % (0xa088c20300000000 + len(h.name)), "\tPort 1:",
              "\t\tState: %s" % ("Active" if n.state_now.startswith("4") else "Down"),
              "\t\tPhysical state: %s" % n.phys_now.split(": ")[1],
              "\t\tRate: %d" % n.rate, "\t\tBase lid: %d" % (100 + n.bus), "\t\tLMC: 0", "\t\tSM lid: 1",
              "\t\tCapability mask: 0xa751e84a", "\t\tPort GUID: 0x%016x" % (0xa088c20300000000 + n.bus * 256 + len(h.name)),
              "\t\tLink layer: %s" % n.ll]
    return "\n".join(L) + "\n"


def ethtool_s(n, t, t0, t1):
    c = lambda k: n.c[k].at(t, t0, t1)
    tx_bytes = c("port_xmit_data") * 4
    rx_bytes = c("port_rcv_data") * 4
    rows = [("rx_packets_phy", rx_bytes // 4096), ("tx_packets_phy", tx_bytes // 4096), ("rx_bytes_phy", rx_bytes),
            ("tx_bytes_phy", tx_bytes), ("rx_crc_errors_phy", 0), ("rx_symbol_err_phy", c("rx_symbol_err_phy")),
            ("rx_discards_phy", c("rx_discards_phy")), ("tx_discards_phy", 0), ("rx_out_of_buffer", c("rx_out_of_buffer")),
            ("link_down_events_phy", c("link_down_events_phy")), ("rx_pause_ctrl_phy", 0), ("tx_pause_ctrl_phy", 0),
            ("rx_prio3_bytes", rx_bytes), ("tx_prio3_bytes", tx_bytes),
            ("rx_prio3_pause", c("rx_prio3_pause")), ("rx_prio3_pause_duration", c("rx_prio3_pause_duration")),
            ("rx_prio3_pause_transition", c("rx_prio3_pause") // 2),
            ("tx_prio3_pause", c("tx_prio3_pause")), ("tx_prio3_pause_duration", c("tx_prio3_pause_duration")),
            ("tx_pause_storm_warning_events", c("tx_pause_storm_warning_events")),
            ("tx_pause_storm_error_events", 0), ("rx_prio3_discards", 0),
            ("outbound_pci_stalled_rd", 0), ("outbound_pci_stalled_wr", c("rx_out_of_buffer") // 3)]
    return "NIC statistics:\n" + "".join("     %s: %d\n" % r for r in rows)


def fec(n, t, t0, t1):
    return ("FEC parameters for %s:\nSupported/Configured FEC encodings: RS\nActive FEC encoding: RS\n"
            "Statistics:\n  corrected_blocks: %d\n  uncorrectable_blocks: %d\n" % (
                n.netdev, n.c["fec_corrected"].at(t, t0, t1), n.c["fec_uncorrectable"].at(t, t0, t1)))


def ib_sys(n, t, t0, t1, pfx, before=False):
    files = {}
    b = "%s/sys/class/infiniband/%s/ports/1/" % (pfx, n.ibdev)
    if not before:
        files[b + "state"] = n.state_now + "\n"
        files[b + "phys_state"] = n.phys_now + "\n"
        rate = {400: "400 Gb/sec (4X NDR)", 200: "200 Gb/sec (4X HDR)", 100: "100 Gb/sec (4X EDR)"}.get(n.rate, "%d Gb/sec" % n.rate)
        files[b + "rate"] = rate + "\n"
        files[b + "link_layer"] = n.ll + "\n"
    ks = ["port_rcv_errors", "symbol_error", "link_downed", "port_xmit_wait", "port_rcv_data", "port_xmit_data"]
    if n.c["link_error_recovery"].now:
        ks.append("link_error_recovery")
    for k in ks:
        files[b + "counters/" + k] = "%d\n" % n.c[k].at(t, t0, t1)
    hw = ["local_ack_timeout_err", "out_of_sequence", "packet_seq_err"]
    if n.ll == "Ethernet":
        hw += ["np_cnp_sent", "rp_cnp_handled", "np_ecn_marked_roce_packets"]
    for k in hw:
        files[b + "hw_counters/" + k] = "%d\n" % n.c[k].at(t, t0, t1)
    nb = "%s/sys/class/net/%s/" % (pfx, n.netdev)
    if not before:
        files[nb + "operstate"] = ("up" if n.state_now.startswith("4") else "down") + "\n"
    files[nb + "carrier_changes"] = "%d\n" % n.c["carrier_changes"].at(t, t0, t1)
    return files


def pci_sys(bdf, mg, mw, cg, cw, oldk, pfx, lost=False, aer=None):
    b = "%s/sys/bus/pci/devices/%s/" % (pfx, bdf)
    sp = SPEED_OLD if oldk else SPEED
    suf = " GT/s" if oldk else " GT/s PCIe"
    f = {}
    if lost:
        f[b + "current_link_speed"] = "Unknown\n"
        f[b + "current_link_width"] = "63\n"
    else:
        f[b + "current_link_speed"] = sp[cg] + suf + "\n"
        f[b + "current_link_width"] = "%d\n" % cw
    f[b + "max_link_speed"] = sp[mg] + suf + "\n"
    f[b + "max_link_width"] = "%d\n" % mw
    if aer is not None:
        rx, tmo = aer
        f[b + "aer_dev_correctable"] = ("Receiver Error %d\nBad TLP 0\nBad DLLP 0\nRELAY_NUM Rollover 0\n"
                                        "Replay Timer Timeout %d\nAdvisory Non-Fatal 0\nCorrected Internal Error 0\n"
                                        "Header Log Overflow 0\nTOTAL_ERR_COR %d\n" % (rx, tmo, rx + tmo))
        f[b + "aer_dev_fatal"] = ("Undefined 0\nData Link Protocol 0\nSurprise Down Error 0\nPoisoned TLP 0\n"
                                  "Flow Control Protocol 0\nCompletion Timeout 0\nCompleter Abort 0\n"
                                  "Unexpected Completion 0\nReceiver Overflow 0\nMalformed TLP 0\nECRC 0\n"
                                  "Unsupported Request 0\nACS Violation 0\nUncorrectable Internal Error 0\n"
                                  "MC Blocked TLP 0\nAtomicOp Egress Blocked 0\nTLP Prefix Blocked Error 0\n"
                                  "TOTAL_ERR_FATAL 0\n")
    return f


def sonic_tables(sw, t, t0, t1):
    ports = sorted(sw.ports, key=lambda p: (len(p), p))
    w = max([7] + [len("{:,}".format(sw.ports[p][k])) for p in sw.ports for k in ("rx_pfc3", "tx_pfc3")]) + 2
    hdr = lambda d: ("%11s" % ("Port " + d)) + "".join(("%" + str(w) + "s") % ("PFC%d" % i) for i in range(8))
    sep = "-----------" + ("  " + "-" * (w - 2)) * 8
    def rows(key):
        out = []
        for p in ports:
            v = sw.ports[p][key]
            vals = ["0"] * 8
            vals[3] = "{:,}".format(v)
            out.append("%11s" % p + "".join(("%" + str(w) + "s") % x for x in vals))
        return out
    pfc = "\n".join([hdr("Rx"), sep] + rows("rx_pfc3") + ["", hdr("Tx"), sep] + rows("tx_pfc3")) + "\n"
    ic = ["      IFACE    STATE            RX_OK        RX_BPS    RX_UTIL    RX_ERR    RX_DRP    RX_OVR"
          "            TX_OK        TX_BPS    TX_UTIL    TX_ERR    TX_DRP    TX_OVR",
          "-----------  -------  ---------------  ------------  ---------  --------  --------  --------"
          "  ---------------  ------------  ---------  --------  --------  --------"]
    for p in ports:
        d = sw.ports[p]
        inb = d["in_oct"].at(t, t0, t1)
        outb = d["out_oct"].at(t, t0, t1)
        rbps = (d["in_oct"].now - d["in_oct"].base) / max(1, t1 - t0)
        tbps = (d["out_oct"].now - d["out_oct"].base) / max(1, t1 - t0)
        speed = d.get("speed", 400e9 / 8)
        ic.append("%11s  %7s  %15s  %12s  %9s  %8s  %8s  %8s  %15s  %12s  %9s  %8s  %8s  %8s" % (
            p, d["state"], "{:,}".format(inb // 4096), "%.2f MB/s" % (rbps / 1e6), "%.2f%%" % (100 * rbps / speed),
            "{:,}".format(d["rx_err"].at(t, t0, t1)), "0", "0", "{:,}".format(outb // 4096), "%.2f MB/s" % (tbps / 1e6),
            "%.2f%%" % (100 * tbps / speed), "0", "{:,}".format(d["discards"].at(t, t0, t1)), "0"))
    wd = ["      QUEUE    STATUS    STORM DETECTED/RESTORED    TX OK/DROP    RX OK/DROP    TX LAST OK/DROP    RX LAST OK/DROP",
          "-----------  --------  -------------------------  ------------  ------------  -----------------  -----------------"]
    for q, st, dr, tx, rx, txl, rxl in sw.pfcwd:
        wd.append("%11s  %8s  %25s  %12s  %12s  %17s  %17s" % (q, st, dr, tx, rx, txl, rxl))
    return pfc, "\n".join(ic) + "\n", "\n".join(wd) + "\n"


class OM:
    """OpenMetrics text builder; families keep first-seen order."""

    def __init__(self):
        self.fam = {}
        self.order = []

    def add(self, name, typ, helptext, labels, samples):
        if name not in self.fam:
            self.fam[name] = (typ, helptext, [])
            self.order.append(name)
        lab = ",".join('%s="%s"' % kv for kv in labels)
        lines = self.fam[name][2]
        for ts, v in samples:
            if isinstance(v, float):
                vs = "%.3f" % v if abs(v) < 1e6 else "%.6e" % v
            else:
                vs = "%d" % v
            lines.append("%s{%s} %s %d" % (name, lab, vs, ts))

    def text(self):
        out = []
        for n in self.order:
            typ, hp, lines = self.fam[n]
            out.append("# TYPE %s %s" % (n, typ))
            out.append("# HELP %s %s" % (n, hp))
            out.extend(lines)
        out.append("# EOF")
        return "\n".join(out) + "\n"
