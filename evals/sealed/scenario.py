"""A case under construction: a fleet, a window, a job, and hooks that bend the default healthy readings.

The defaults describe a healthy synchronous job. A case changes them only through hooks (a GPU's
readings at time t, a rank's compute at time t, a NIC's counters) and by adding files; every file
of a bundle is rendered from those hooks so the bundle stays consistent with itself.
"""

from __future__ import annotations

import json
import math
import random

from fleet import (APP, GEN_LSPCI, GEN_SPEED, GEN_SPEED_OLD, HW_BRAKE, HW_SLOW, HW_THERM, IDLE, OM, SW_POWER,
                   SW_THERM, SYNC, Fleet, Out, boot_lines, iso, kline, utc)


class Scenario:
    def __init__(self, name: str, seed: int, fleet: Fleet, *, start: int, minutes: int = 90, job: str = "train",
                 rng: random.Random | None = None):
        self.name = name
        self.rng = rng or random.Random(seed)
        self.fleet = fleet
        self.m = fleet.m
        self.t0, self.t1 = start, start + minutes * 60
        self.job = job
        self.out = Out()
        self.ranks: list[tuple[int, str, int]] = []
        r = 0
        for h in fleet.workers:
            for g in h.gpus:
                self.ranks.append((r, h.name, g.index))
                r += 1
        self.rank_of = {(h, g): r for r, h, g in self.ranks}
        self.boot = {h.name: start - self.rng.randint(3, 40) * 86400 - self.rng.randint(0, 80000) for h in fleet.hosts}
        # per-GPU personality
        self.base: dict[tuple[str, int], dict] = {}
        lo, hi = self.m["busy_w"]
        for h in fleet.hosts:
            for g in h.gpus:
                self.base[(h.name, g.index)] = dict(
                    temp=self.rng.randint(*self.m["temp"]), power=self.rng.uniform(lo, hi),
                    sbe=self.rng.choice([0, 0, 0, 0, 0, 0, 2, 7]), tensor=self.rng.uniform(0.38, 0.46))
        self.gpu_hooks = []      # fn(host, idx, t, st) -> None (mutates st)
        self.compute_hooks = []  # fn(rank, host, idx, t) -> multiplier
        self.comm_hooks = []     # fn(t) -> multiplier of comm time
        self.wait_hooks = []     # fn(t) -> extra seconds every rank waits (input)
        self.nic_hooks = []      # fn(host, nic, which) -> dict overrides of counter values
        self.pcie_now: dict[tuple[str, int], tuple[int, int]] = {}
        self.pcie_before: dict[tuple[str, int], tuple[int, int]] = {}
        self.lost: dict[tuple[str, int], float] = {}
        self.capped: set[tuple[str, int]] = set()   # normal software power capping
        self.sticky_xid: dict[tuple[str, int], int] = {}
        self.dmesg: dict[str, list[tuple[float, str]]] = {h.name: [] for h in fleet.hosts}
        self.nvml_events: dict[str, list[dict]] = {h.name: [] for h in fleet.hosts}

    # ---- readings -------------------------------------------------------------------------

    def busy(self, host: str) -> bool:
        return not self.fleet.host(host).spare

    def gpu_state(self, host: str, idx: int, t: float) -> dict:
        m, b = self.m, self.base[(host, idx)]
        # deterministic jitter from a hash of stable values (no Python hash randomisation)
        j = _jit(self.name, host, idx, int(t))
        if not self.busy(host):
            st = dict(sm=345 if m["sm"] > 1500 else 210, mem=m["mem"] if j > 0.5 else 405, temp=b["temp"] - 22 + int(j * 2),
                      power=m["idle_w"] + j * 4, util=0, tensor=0.0, reasons=IDLE, xid=0)
        else:
            st = dict(sm=m["sm"] - int(j * 15 // 5 * 5) if j > 0.8 else m["sm"], mem=m["mem"],
                      temp=b["temp"] + int(j * 3) - 1, power=b["power"] + (j - 0.5) * 30, util=100 if j > 0.1 else 99,
                      tensor=b["tensor"] + (j - 0.5) * 0.02, reasons=0, xid=0)
            if (host, idx) in self.capped:
                frac = 0.86 + 0.08 * _jit("cap", host, idx, int(t))
                st["power"] = m["plimit"] * frac
                if _jit("capbit", host, idx, int(t)) < 0.55:
                    st["reasons"] |= SW_POWER
                    st["sm"] = m["sm"] - 15 * (2 + int(_jit("capclk", host, idx, int(t)) * 6))
        st.update(sbe=b["sbe"], dbe=0, replay=0, pviol=0, tviol=0, nvl_crc=0, nvl_replay=0, remap_cor=0,
                  remap_unc=0, remap_fail=0)
        if (host, idx) in self.capped:
            st["pviol"] = int(max(0.0, t - (self.t0 - 7200)) * 0.12e9)
        st["xid"] = self.sticky_xid.get((host, idx), 0)
        for hook in self.gpu_hooks:
            hook(host, idx, t, st)
        return st

    def lost_at(self, host: str, idx: int, t: float) -> bool:
        return (host, idx) in self.lost and t >= self.lost[(host, idx)]

    # ---- steps.csv -----------------------------------------------------------------------

    def steps(self, *, compute: float, comm: float, every: int = 10, start: float | None = None,
              end: float | None = None, first_step: int = 0, cols=("compute_s", "loss", "grad_norm"),
              restarts=(), missing: float = 0.0, extra: dict | None = None, checksum_bad=None,
              ranks=None, gz: bool = False, name: str = "job/steps.csv", stop_at: float | None = None,
              loss0: float = 2.35) -> list[tuple[int, float, float]]:
        """Write steps.csv; returns (step, start, duration) of the logged steps."""
        rng = self.rng
        ranks = ranks if ranks is not None else self.ranks
        t = start if start is not None else self.t0 - 25 * 60
        end = end if end is not None else self.t1
        header = ["step", "rank", "start_unix", "duration_s"] + list(cols) + list((extra or {}).keys())
        rows = [",".join(header)]
        step = first_step
        pending = list(restarts)
        logged = []
        while t < end:
            if stop_at is not None and t >= stop_at:
                break
            if pending and t >= pending[0][0]:
                _, t, step = pending.pop(0)
                continue
            comps = []
            for r, h, g in ranks:
                mult = 1.0
                for hook in self.compute_hooks:
                    mult *= hook(r, h, g, t)
                comps.append(compute * (1 + rng.gauss(0, 0.006)) * mult)
            cm = 1.0
            for hook in self.comm_hooks:
                cm *= hook(t)
            wait = sum(hook(t) for hook in self.wait_hooks)
            dur = max(comps) + comm * cm * (1 + rng.gauss(0, 0.01)) + wait + abs(rng.gauss(0, 0.003))
            loss = loss0 + 1.1 * math.exp(-step / 9000.0) + rng.gauss(0, 0.02)
            gn = 0.9 + abs(rng.gauss(0, 0.15))
            csum = "%08x" % random.Random(f"{self.name}:{step}").getrandbits(32)
            for k, (r, h, g) in enumerate(ranks):
                if missing and rng.random() < missing:
                    continue
                d = dur + rng.gauss(0, 0.0002)
                c = min(comps[k], d - 0.001)
                row = [str(step), str(r), f"{t + rng.uniform(0, 0.0015):.3f}", f"{d:.4f}"]
                for col in cols:
                    if col == "compute_s":
                        row.append(f"{c:.4f}")
                    elif col == "loss":
                        row.append(f"{loss:.4f}")
                    elif col == "grad_norm":
                        row.append(f"{gn:.3f}")
                    elif col == "param_checksum":
                        bad = checksum_bad(r, step, t) if checksum_bad else False
                        row.append(("%08x" % random.Random(f"{self.name}:{step}:{r}").getrandbits(32)) if bad else csum)
                for v in (extra or {}).values():
                    row.append(str(v(r, step, t)) if callable(v) else str(v))
                rows.append(",".join(row))
            logged.append((step, t, dur))
            t += dur * every * (1 + rng.gauss(0, 0.002))
            step += every
        self.out.put(name, "\n".join(rows) + "\n", gz=gz)
        self._logged = logged
        return logged

    # ---- metrics ------------------------------------------------------------------------

    def dcgm(self, *, every: int = 60, before: int = 1200, fams=("sm", "temp", "power", "util", "tensor", "reasons", "xid"),
             hosts=None, gz: bool = True, name: str = "metrics/dcgm.om", label: str | None = None,
             extra_labels: dict | None = None) -> None:
        m = self.m
        label = label or m["host_label"]
        spec = {
            "sm": ("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."),
            "mem": ("DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz)."),
            "temp": ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."),
            "power": ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
            "util": ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
            "tensor": ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is active."),
            "reasons": (m["dcgm_reason"], "gauge", "Current clock throttle reasons." if m["event_word"] == "Throttle" else "Current clock event reasons."),
            "xid": ("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."),
            "sbe": ("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter", "Total number of single-bit volatile ECC errors."),
            "dbe": ("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", "Total number of double-bit volatile ECC errors."),
            "replay": ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries."),
            "pviol": ("DCGM_FI_DEV_POWER_VIOLATION", "counter", "Throttling duration due to power constraints (in ns)."),
            "tviol": ("DCGM_FI_DEV_THERMAL_VIOLATION", "counter", "Throttling duration due to thermal constraints (in ns)."),
            "nvl_crc": ("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink flow-control CRC errors."),
            "nvl_replay": ("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink retries."),
            "remap_cor": ("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for correctable errors"),
            "remap_unc": ("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for uncorrectable errors"),
            "remap_fail": ("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed"),
        }
        om = OM()
        times = list(range(self.t0 - before, self.t1 + 1, every))
        hs = [self.fleet.host(n) for n in hosts] if hosts else self.fleet.hosts
        states = {}
        for h in hs:
            for g in h.gpus:
                states[(h.name, g.index)] = [None if self.lost_at(h.name, g.index, t) else self.gpu_state(h.name, g.index, t)
                                             for t in times]
        for f in fams:
            fname, typ, hlp = spec[f]
            om.family(fname, typ, hlp)
            for h in hs:
                for g in h.gpus:
                    labels = {"gpu": str(g.index), "UUID": g.uuid, "pci_bus_id": g.nvml_bdf, "device": f"nvidia{g.index}",
                              "modelName": m["name"], label: h.name}
                    labels.update(extra_labels or {})
                    for t, st in zip(times, states[(h.name, g.index)]):
                        if st is None:
                            continue
                        v = st[f]
                        if f == "power":
                            v = round(float(v), 3)
                        elif f == "tensor":
                            v = round(float(max(0.0, v)), 6)
                        om.sample(fname, labels, v, t)
        self.out.put(name, om.text(), gz=gz)

    def node_om(self, *, every: int = 60, before: int = 1200, gz: bool = True, name: str = "metrics/node.om",
                ib: bool = True, psi=None, load=None, port_suffix: str = ":9100") -> None:
        om = OM()
        times = list(range(self.t0 - before, self.t1 + 1, every))
        fams = []
        if ib:
            fams += [("node_infiniband_port_data_received_bytes_total", "counter", "Infiniband port data received bytes total.", "rcv"),
                     ("node_infiniband_port_data_transmitted_bytes_total", "counter", "Infiniband port data transmitted bytes total.", "xmit"),
                     ("node_infiniband_port_errors_received_total", "counter", "Number of packets containing an error that were received on this port", "rcv_err"),
                     ("node_infiniband_link_downed_total", "counter", "Number of times the link failed to recover from an error state and went down", "downed"),
                     ("node_infiniband_port_transmit_wait_total", "counter", "Number of ticks during which the port had data to transmit but no data was sent during the entire tick", "xwait")]
            for fname, typ, hlp, key in fams:
                om.family(fname, typ, hlp)
                for h in self.fleet.hosts:
                    for n in h.nics:
                        lab = {"device": n.ibdev, "instance": h.instance + port_suffix, "job": "node", "port": "1"}
                        for t in times:
                            om.sample(fname, lab, self.nic_series(h, n, t)[key], t)
        om.family("node_load1", "gauge", "1m load average.")
        om.family("node_pressure_cpu_waiting_seconds_total", "counter", "Total time in seconds that processes have waited for CPU time")
        for h in self.fleet.hosts:
            lab = {"instance": h.instance + port_suffix, "job": "node"}
            for t in times:
                ld = (load(h.name, t) if load else None)
                if ld is None:
                    ld = (14.0 if not h.spare else 0.3) + 3 * _jit("load", h.name, 0, int(t))
                om.sample("node_load1", lab, round(ld, 2), t)
        for h in self.fleet.hosts:
            lab = {"instance": h.instance + port_suffix, "job": "node"}
            acc = 1000.0 + 500 * _jit("psi0", h.name, 0, 0)
            for t in times:
                rate = psi(h.name, t) if psi else None
                if rate is None:
                    rate = 0.02 + 0.03 * _jit("psi", h.name, 0, int(t))
                acc += rate * every
                om.sample("node_pressure_cpu_waiting_seconds_total", lab, round(acc, 2), t)
        self.out.put(name, om.text(), gz=gz)

    # ---- NICs ----------------------------------------------------------------------------

    def nic_rate(self, h, n, t) -> float:
        """bytes/s each way on a NIC at t (the job's traffic)."""
        if h.spare:
            return 2.0e3
        base = 9.0e9 if self.m["nic_gen"] == 5 else 4.5e9
        return base * (0.95 + 0.1 * _jit("bw", h.name, int(n.ibdev[-1]) if n.ibdev[-1].isdigit() else 0, int(t) // 600))

    def _integral(self, h, n, t) -> float:
        """bytes moved on a NIC since 4 h before the window (the integral of nic_rate, on a 60 s grid)."""
        t_start = self.t0 - 4 * 3600
        if t <= t_start:
            return 0.0
        memo = self.__dict__.setdefault("_imemo", {})
        key = (h.name, n.ibdev)
        grid = memo.setdefault(key, [0.0])
        k = int((t - t_start) // 60)
        while len(grid) <= k:
            tk = t_start + (len(grid) - 1) * 60
            grid.append(grid[-1] + self.nic_rate(h, n, tk) * 60)
        tk = t_start + k * 60
        return grid[k] + self.nic_rate(h, n, tk) * (t - tk)

    def nic_series(self, h, n, t) -> dict:
        cum = self._integral(h, n, t)
        base = 7.7e14 * (1 + _jit("nb", h.name, len(n.ibdev), 0))
        v = dict(rcv=int(base + cum), xmit=int(base * 1.01 + cum * 1.002), rcv_err=0, downed=0,
                 xwait=int(2.4e9 * (1 + _jit("xw", h.name, 0, 0)) + cum / 1.0e3))
        for hook in self.nic_hooks:
            hook(h, n, t, v)
        return v

    # ---- per-host files -----------------------------------------------------------------

    def collected(self, h, *, boot: bool = True) -> None:
        d = {"before": self.t0, "now": self.t1}
        if boot:
            d["boot"] = self.boot[h.name]
        self.out.json(f"nodes/{h.name}/collected.json", d)

    def nvml(self, h, *, gz: bool = False) -> None:
        m = self.m
        devs = []
        for g in h.gpus:
            if self.lost_at(h.name, g.index, self.t1):
                devs.append({"index": g.index, "uuid": g.uuid, "pci_bus_id": g.nvml_bdf, "error": "GPU is lost"})
                continue
            st = self.gpu_state(h.name, g.index, self.t1)
            gen, width = self.link(h.name, g.index, "now")
            maxgen = m["gen"]
            devs.append({
                "index": g.index, "uuid": g.uuid, "pci_bus_id": g.nvml_bdf, "name": m["name"],
                "nvmlDeviceGetCurrPcieLinkGeneration": gen, "nvmlDeviceGetMaxPcieLinkGeneration": maxgen,
                "nvmlDeviceGetCurrPcieLinkWidth": width, "nvmlDeviceGetMaxPcieLinkWidth": 16,
                "nvmlDeviceGetPcieReplayCounter": st["replay"],
                "nvmlDeviceGetTemperature": int(st["temp"]), "nvmlDeviceGetPowerUsage": int(st["power"] * 1000),
                "nvmlDeviceGetEnforcedPowerLimit": int(st.get("plimit", m["plimit"]) * 1000),
                "nvmlDeviceGetClockInfo": {"sm": int(st["sm"]), "mem": int(st["mem"])},
                "nvmlDeviceGetMaxClockInfo": {"sm": m["sm"], "mem": m["mem"]},
                "nvmlDeviceGetCurrentClocksEventReasons": int(st["reasons"]),
                "nvmlDeviceGetTotalEccErrors": {"corrected_volatile": int(st["sbe"]), "uncorrected_volatile": int(st["dbe"])},
                "nvmlDeviceGetRemappedRows": {"corrected": int(st["remap_cor"]), "uncorrected": int(st["remap_unc"]),
                                              "pending": bool(st.get("remap_pending", False)), "failure": bool(st["remap_fail"])},
            })
        doc = {"driver_version": m["driver"], "devices": devs, "events": sorted(self.nvml_events[h.name], key=lambda e: e["time"])}
        self.out.json(f"nodes/{h.name}/nvml.json", doc, gz=gz)

    def link(self, host: str, idx: int, which: str) -> tuple[int, int]:
        d = self.pcie_now if which == "now" else self.pcie_before
        if (host, idx) in d:
            return d[(host, idx)]
        if which == "before" and (host, idx) in self.pcie_now and (host, idx) not in self.pcie_before:
            return self.pcie_now[(host, idx)]
        if not self.busy(host):
            return (1, 16)  # idle GPUs drop to 2.5 GT/s (link power management)
        return (self.m["gen"], 16)

    def sys_pci(self, h, *, old_kernel: bool = False, aer: dict | None = None, before: bool = True) -> None:
        speeds = GEN_SPEED_OLD if old_kernel else GEN_SPEED
        for which in (("now", "before") if before else ("now",)):
            pre = f"nodes/{h.name}/" + ("" if which == "now" else "before/") + "sys/bus/pci/devices/"
            t = self.t1 if which == "now" else self.t0
            for g in h.gpus:
                d = pre + g.sys_bdf + "/"
                if self.lost_at(h.name, g.index, t):
                    self.out.put(d + "current_link_speed", "Unknown\n")
                    self.out.put(d + "current_link_width", "63\n")
                else:
                    gen, w = self.link(h.name, g.index, which)
                    self.out.put(d + "current_link_speed", speeds[gen] + "\n")
                    self.out.put(d + "current_link_width", f"{w}\n")
                self.out.put(d + "max_link_speed", speeds[self.m["gen"]] + "\n")
                self.out.put(d + "max_link_width", "16\n")
                cnt = (aer or {}).get((g.index, which))
                if cnt is None:
                    cnt = {"Receiver Error": _small(h.name, g.index)}
                self.out.put(d + "aer_dev_correctable", aer_text(cnt))
            for n in h.nics:
                d = pre + n.sys_bdf + "/"
                self.out.put(d + "current_link_speed", speeds[self.m["nic_gen"]] + "\n")
                self.out.put(d + "max_link_speed", speeds[self.m["nic_gen"]] + "\n")
                self.out.put(d + "current_link_width", "16\n")
                self.out.put(d + "max_link_width", "16\n")

    def sys_ib(self, h, *, hw: bool = True, before: bool = True, net: bool = True) -> None:
        for which in (("now", "before") if before else ("now",)):
            pre = f"nodes/{h.name}/" + ("" if which == "now" else "before/") + "sys/class/"
            t = self.t1 if which == "now" else self.t0
            for n in h.nics:
                v = self.nic_series(h, n, t)
                p = f"{pre}infiniband/{n.ibdev}/ports/1/"
                st = v.get("state", "4: ACTIVE")
                self.out.put(p + "state", st + "\n")
                self.out.put(p + "phys_state", v.get("phys_state", "5: LinkUp") + "\n")
                self.out.put(p + "rate", v.get("rate", self.m["nic_rate"] if n.link_layer == "InfiniBand" else "400 Gb/sec (4X NDR)" if self.m["nic_gen"] == 5 else "200 Gb/sec (4X HDR)") + "\n")
                self.out.put(p + "link_layer", n.link_layer + "\n")
                ctr = {"port_rcv_data": v["rcv"] // 4, "port_xmit_data": v["xmit"] // 4, "port_rcv_errors": v["rcv_err"],
                       "symbol_error": v.get("symbol_error", 0), "link_downed": v["downed"], "port_xmit_wait": v["xwait"],
                       "link_error_recovery": v.get("link_error_recovery", 0), "port_xmit_discards": v.get("xmit_discards", 0),
                       "excessive_buffer_overrun_errors": 0, "local_link_integrity_errors": 0,
                       "port_rcv_packets": v["rcv"] // 3900, "port_xmit_packets": v["xmit"] // 3900}
                for k in sorted(ctr):
                    self.out.put(p + "counters/" + k, f"{ctr[k]}\n")
                if hw:
                    hwc = {"out_of_sequence": v.get("out_of_sequence", 0), "packet_seq_err": v.get("packet_seq_err", 0),
                           "local_ack_timeout_err": v.get("local_ack_timeout_err", 0), "out_of_buffer": 0,
                           "duplicate_request": 0, "rnr_nak_retry_err": 0}
                    if n.link_layer == "Ethernet":
                        hwc.update(np_cnp_sent=v.get("np_cnp_sent", int(v["rcv"] / 2.2e6)),
                                   rp_cnp_handled=v.get("rp_cnp_handled", int(v["xmit"] / 2.3e6)),
                                   np_ecn_marked_roce_packets=v.get("np_ecn", int(v["rcv"] / 2.1e6)))
                    for k in sorted(hwc):
                        self.out.put(p + "hw_counters/" + k, f"{hwc[k]}\n")
                if net:
                    self.out.put(f"{pre}net/{n.netdev}/operstate", "up\n")
                    self.out.put(f"{pre}net/{n.netdev}/carrier_changes", f"{v.get('carrier_changes', 2)}\n")

    def ethtool(self, h, n, *, before: bool = True, gz: bool = False) -> None:
        for which in (("now", "before") if before else ("now",)):
            t = self.t1 if which == "now" else self.t0
            v = self.nic_series(h, n, t)
            el = max(0.0, t - (self.t0 - 4 * 3600))
            stats = [("rx_packets_phy", v["rcv"] // 4100), ("tx_packets_phy", v["xmit"] // 4100),
                     ("rx_bytes_phy", v["rcv"]), ("tx_bytes_phy", v["xmit"]),
                     ("rx_crc_errors_phy", v.get("rx_crc", 0)), ("rx_symbol_err_phy", v.get("rx_symbol_err_phy", 0)),
                     ("rx_discards_phy", v.get("rx_discards_phy", 0)), ("tx_discards_phy", 0),
                     ("rx_out_of_buffer", v.get("rx_out_of_buffer", 0)), ("link_down_events_phy", v.get("link_down_events_phy", 0)),
                     ("rx_pause_ctrl_phy", 0), ("tx_pause_ctrl_phy", 0),
                     ("rx_prio3_bytes", v["rcv"] - 10 ** 9), ("tx_prio3_bytes", v["xmit"] - 10 ** 9),
                     ("rx_prio3_pause", v.get("rx_prio3_pause", int(el * 0.4))),
                     ("rx_prio3_pause_duration", v.get("rx_prio3_pause_duration", int(el * 0.4) * 3)),
                     ("rx_prio3_pause_transition", v.get("rx_prio3_pause_transition", int(el * 0.2))),
                     ("tx_prio3_pause", v.get("tx_prio3_pause", 0)), ("tx_prio3_pause_duration", v.get("tx_prio3_pause_duration", 0)),
                     ("rx_prio3_discards", 0), ("tx_pause_storm_warning_events", v.get("tx_pause_storm_warning_events", 0)),
                     ("tx_pause_storm_error_events", v.get("tx_pause_storm_error_events", 0)),
                     ("rx_buffer_passed_thres_phy", v.get("rx_buffer_passed_thres_phy", 0)),
                     ("outbound_pci_stalled_rd", v.get("outbound_pci_stalled_rd", 0)),
                     ("outbound_pci_stalled_wr", v.get("outbound_pci_stalled_wr", 0)),
                     ("rx_vport_rdma_unicast_bytes", v["rcv"] - 2 * 10 ** 9), ("tx_vport_rdma_unicast_bytes", v["xmit"] - 2 * 10 ** 9)]
            text = "NIC statistics:\n" + "".join(f"     {k}: {val}\n" for k, val in stats)
            pre = f"nodes/{h.name}/" + ("" if which == "now" else "before/") + "cmd/"
            self.out.put(pre + f"ethtool-S-{n.netdev}.txt", text, gz=gz)

    def write_dmesg(self, h, style: str, *, gz: bool = False, extra_boot: list | None = None, name: str = "dmesg.txt") -> None:
        boot = self.boot[h.name]
        ev = [(boot + dt, txt) for dt, txt in boot_lines(self.fleet.model)]
        for g in h.gpus:
            ev.append((boot + 13.5 + g.index * 0.01, f"nvidia {g.sys_bdf}: enabling device (0000 -> 0002)"))
        for n in h.nics:
            ev.append((boot + 44.1 + int(n.ibdev[-1]) * 0.3 if n.ibdev[-1].isdigit() else boot + 44.1,
                       f"mlx5_core {n.sys_bdf} {n.ibdev}: Port: 1 Link ACTIVE"))
        ev += [(boot + dt, txt) for dt, txt in (extra_boot or [])]
        for t, txt in self.dmesg[h.name]:
            t = t if t > boot + 60 else boot + 60 + (t % 3600)
            ev.append((t + 0.9 * _jit("frac", h.name, int(t)), txt))
        ev.sort(key=lambda e: e[0])
        lines = []
        for seq, (t, txt) in enumerate(ev):
            lines.append(kline(style, t, boot, h.name, txt, seq=1000 + seq * 3, caller=f"    T{1 + (seq * 37) % 3000}"))
        self.out.put(f"nodes/{h.name}/cmd/{name}", "\n".join(lines) + "\n", gz=gz)

    def lspci(self, h, *, gz: bool = False) -> None:
        m = self.m
        blocks = []
        for g in h.gpus:
            lost = self.lost_at(h.name, g.index, self.t1)
            if lost:
                blocks.append(f"{g.bus:02x}:00.0 3D controller: NVIDIA Corporation Device {m['devid'].lower()} (rev ff) (prog-if ff)\n"
                              "\t!!! Unknown header type 7f\n\tKernel driver in use: nvidia\n\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia\n")
                continue
            gen, w = self.link(h.name, g.index, "now")
            sp = GEN_LSPCI[gen]
            sp_ok = "ok" if gen == m["gen"] else "downgraded"
            w_ok = "ok" if w == 16 else "downgraded"
            blocks.append(
                f"{g.bus:02x}:00.0 3D controller: NVIDIA Corporation Device {m['devid'].lower()} (rev a1)\n"
                f"\tSubsystem: NVIDIA Corporation Device 16c1\n"
                f"\tControl: I/O- Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr+ Stepping- SERR+ FastB2B- DisINTx+\n"
                f"\tCapabilities: [60] Express (v2) Endpoint, MSI 00\n"
                f"\t\tDevSta:\tCorrErr- NonFatalErr- FatalErr- UnsupReq- AuxPwr- TransPend-\n"
                f"\t\tLnkCap:\tPort #0, Speed {GEN_LSPCI[m['gen']]}, Width x16, ASPM L1, Exit Latency L1 <4us\n"
                f"\t\t\tClockPM+ Surprise- LLActRep- BwNot- ASPMOptComp+\n"
                f"\t\tLnkCtl:\tASPM Disabled; RCB 64 bytes, Disabled- CommClk-\n"
                f"\t\t\tExtSynch- ClockPM- AutWidDis- BWInt- AutBWInt-\n"
                f"\t\tLnkSta:\tSpeed {sp} ({sp_ok}), Width x{w} ({w_ok})\n"
                f"\t\t\tTrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-\n"
                f"\t\tLnkCap2: Supported Link Speeds: 2.5-{GEN_LSPCI[m['gen']]}, Crosslink- Retimer+ 2Retimers+ DRS-\n"
                f"\tKernel driver in use: nvidia\n\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia\n")
        for n in h.nics:
            kind = "Infiniband controller" if n.link_layer == "InfiniBand" else "Ethernet controller"
            sp = GEN_LSPCI[m["nic_gen"]]
            blocks.append(
                f"{n.bus:02x}:00.0 {kind}: Mellanox Technologies {m['nic']}\n"
                f"\tSubsystem: Mellanox Technologies Device 0023\n"
                f"\tCapabilities: [60] Express (v2) Endpoint, MSI 00\n"
                f"\t\tLnkCap:\tPort #0, Speed {sp}, Width x16, ASPM not supported\n"
                f"\t\tLnkSta:\tSpeed {sp} (ok), Width x16 (ok)\n"
                f"\tKernel driver in use: mlx5_core\n\tKernel modules: mlx5_core\n")
        self.out.put(f"nodes/{h.name}/cmd/lspci-vv.txt", "\n".join(blocks), gz=gz)

    def ibstat(self, h) -> None:
        parts = []
        for n in h.nics:
            v = self.nic_series(h, n, self.t1)
            rate = (v.get("rate") or self.m["nic_rate"]).split()[0]
            state = "Active" if v.get("state", "4: ACTIVE").endswith("ACTIVE") else "Down"
            phys = (v.get("phys_state") or "5: LinkUp").split(": ")[1]
            parts.append(f"CA '{n.ibdev}'\n\tCA type: {'MT4129' if self.m['nic_gen'] == 5 else 'MT4123'}\n\tNumber of ports: 1\n"
                         f"\tFirmware version: {'28.41.1000' if self.m['nic_gen'] == 5 else '20.39.1002'}\n\tHardware version: 0\n"
                         f"\tNode GUID: 0x{_guid(h.name, n.ibdev)}\n\tSystem image GUID: 0x{_guid(h.name, 'sys')}\n"
                         f"\tPort 1:\n\t\tState: {state}\n\t\tPhysical state: {phys}\n\t\tRate: {rate}\n\t\tBase lid: 0\n"
                         f"\t\tLMC: 0\n\t\tSM lid: 0\n\t\tCapability mask: 0x00010000\n\t\tPort GUID: 0x{_guid(h.name, n.ibdev + 'p')}\n"
                         f"\t\tLink layer: {n.link_layer}\n")
        self.out.put(f"nodes/{h.name}/cmd/ibstat.txt", "\n".join(parts))

    def smi_q(self, h, *, which: str = "now", gz: bool = False) -> None:
        m = self.m
        t = self.t1 if which == "now" else self.t0
        ev = m["event_word"]
        old = ev == "Throttle"
        L = []
        L.append("")
        L.append("==============NVSMI LOG==============")
        L.append("")
        L.append(f"{'Timestamp':<42}: {utc(t).strftime('%a %b %e %H:%M:%S %Y')}")
        L.append(f"{'Driver Version':<42}: {m['driver']}")
        L.append(f"{'CUDA Version':<42}: {m['cuda']}")
        L.append("")
        L.append(f"{'Attached GPUs':<42}: {len(h.gpus)}")

        def kv(ind, k, v):
            L.append(" " * ind + f"{k:<{42 - ind}}: {v}")

        def act(b):
            return "Active" if b else "Not Active"

        for g in h.gpus:
            if self.lost_at(h.name, g.index, t):
                continue
            st = self.gpu_state(h.name, g.index, t)
            gen, w = self.link(h.name, g.index, which)
            L.append(f"GPU {g.nvml_bdf}")
            kv(4, "Product Name", m["name"])
            kv(4, "Product Brand", "NVIDIA")
            kv(4, "Product Architecture", m["arch"])
            kv(4, "Persistence Mode", "Enabled")
            kv(4, "GPU UUID", g.uuid)
            kv(4, "Minor Number", g.index)
            L.append("    PCI")
            kv(8, "Bus", f"0x{g.bus:02X}")
            kv(8, "Device", "0x00")
            kv(8, "Domain", "0x0000")
            kv(8, "Device Id", f"0x{m['devid']}10DE")
            kv(8, "Bus Id", g.nvml_bdf)
            L.append("        GPU Link Info")
            L.append("            PCIe Generation")
            kv(16, "Max", m["gen"])
            kv(16, "Current", gen)
            kv(16, "Device Current", gen)
            kv(16, "Device Max", m["gen"])
            kv(16, "Host Max", m["gen"])
            L.append("            Link Width")
            kv(16, "Max", "16x")
            kv(16, "Current", f"{w}x")
            kv(8, "Replays Since Reset", st["replay"])
            kv(8, "Replay Number Rollovers", 0)
            kv(4, "Performance State", "P0")
            r = st["reasons"]
            L.append(f"    Clocks {ev} Reasons")
            kv(8, "Idle", act(r & IDLE))
            kv(8, "Applications Clocks Setting", act(r & APP))
            kv(8, "SW Power Cap", act(r & SW_POWER))
            kv(8, "HW Slowdown", act(r & (HW_SLOW | HW_THERM | HW_BRAKE)))
            kv(12, "HW Thermal Slowdown", act(r & HW_THERM))
            kv(12, "HW Power Brake Slowdown", act(r & HW_BRAKE))
            kv(8, "Sync Boost", act(r & SYNC))
            kv(8, "SW Thermal Slowdown", act(r & SW_THERM))
            kv(8, "Display Clock Setting", "Not Active")
            L.append("    ECC Errors")
            for agg in ("Volatile", "Aggregate"):
                L.append(f"        {agg}")
                kv(12, "SRAM Correctable", 0)
                kv(12, "SRAM Uncorrectable", 0)
                kv(12, "DRAM Correctable", st["sbe"] + (st.get("sbe_agg", 0) if agg == "Aggregate" else 0))
                kv(12, "DRAM Uncorrectable", st["dbe"])
            L.append("    Remapped Rows")
            kv(8, "Correctable Error", st["remap_cor"])
            kv(8, "Uncorrectable Error", st["remap_unc"])
            kv(8, "Pending", "Yes" if st.get("remap_pending") else "No")
            kv(8, "Remapping Failure Occurred", "Yes" if st["remap_fail"] else "No")
            L.append("    Temperature")
            kv(8, "GPU Current Temp", f"{int(st['temp'])} C")
            kv(8, "GPU Shutdown Temp", f"{m['shut_t']} C")
            kv(8, "GPU Slowdown Temp", f"{m['slow_t']} C")
            kv(8, "GPU Max Operating Temp", f"{m['maxop_t']} C")
            kv(8, "Memory Current Temp", f"{int(st['temp']) + 6} C")
            plim = st.get("plimit", m["plimit"])
            if old:
                L.append("    Power Readings")
                kv(8, "Power Management", "Supported")
                kv(8, "Power Draw", f"{st['power']:.2f} W")
                kv(8, "Power Limit", f"{plim:.2f} W")
                kv(8, "Default Power Limit", f"{m['plimit']:.2f} W")
                kv(8, "Enforced Power Limit", f"{plim:.2f} W")
                kv(8, "Min Power Limit", f"{m['pmin']:.2f} W")
                kv(8, "Max Power Limit", f"{m['plimit']:.2f} W")
            else:
                L.append("    GPU Power Readings")
                kv(8, "Power Draw", f"{st['power']:.2f} W")
                kv(8, "Current Power Limit", f"{plim:.2f} W")
                kv(8, "Requested Power Limit", f"{plim:.2f} W")
                kv(8, "Default Power Limit", f"{m['plimit']:.2f} W")
                kv(8, "Min Power Limit", f"{m['pmin']:.2f} W")
                kv(8, "Max Power Limit", f"{m['plimit']:.2f} W")
            L.append("    Clocks")
            kv(8, "Graphics", f"{int(st['sm'])} MHz")
            kv(8, "SM", f"{int(st['sm'])} MHz")
            kv(8, "Memory", f"{int(st['mem'])} MHz")
            L.append("    Max Clocks")
            kv(8, "Graphics", f"{m['sm']} MHz")
            kv(8, "SM", f"{m['sm']} MHz")
            kv(8, "Memory", f"{m['mem']} MHz")
            L.append("")
        pre = f"nodes/{h.name}/" + ("" if which == "now" else "before/") + "cmd/"
        self.out.put(pre + "nvidia-smi-q.txt", "\n".join(L) + "\n", gz=gz)

    # ---- json files ---------------------------------------------------------------------

    def incident(self, *, title: str, reported: str = "", alerts=None, job_name: str | None = None, ranks: int | None = None,
                 iid: str | None = None) -> None:
        doc = {"schema": "forensic.bundle/v1", "id": iid or f"INC-{2600000 + int(_jit('id', self.name) * 99999)}", "title": title,
               "window": {"start": iso(self.t0), "end": iso(self.t1)},
               "job": {"name": job_name or self.job, "ranks": ranks if ranks is not None else len(self.ranks),
                       "gpus_per_node": self.fleet.gpn},
               "reported": reported}
        if alerts:
            doc["alerts"] = alerts
        self.out.json("incident.json", doc)

    def topology(self, *, ranks: bool = True, host_order=None, rank_shuffle: bool = False, switches=None,
                 with_nics: bool = True) -> None:
        hosts = self.fleet.hosts
        if host_order:
            hosts = [self.fleet.host(n) for n in host_order]
        hd = []
        for h in hosts:
            d = {"name": h.name, "rack": h.rack,
                 "gpus": [{"index": g.index, "pci_bus_id": g.nvml_bdf, "uuid": g.uuid} for g in h.gpus]}
            if with_nics:
                d["nics"] = [{"ibdev": n.ibdev, "netdev": n.netdev, "pci_bus_id": n.sys_bdf, "port": 1,
                              "link_layer": n.link_layer, "switch": n.switch, "switch_port": n.switch_port} for n in h.nics]
            hd.append(d)
        doc = {"hosts": hd}
        if ranks:
            rl = [{"rank": r, "host": h, "gpu": g} for r, h, g in self.ranks]
            if rank_shuffle:
                rl = sorted(rl, key=lambda x: (x["host"], x["gpu"]))
            doc["ranks"] = rl
        if switches is None:
            switches = self.default_switches()
        doc["switches"] = switches
        self.out.json("topology.json", doc)

    def default_switches(self, spines: int = 2, uplinks: int = 4):
        leaves = sorted({n.switch for h in self.fleet.hosts for n in h.nics})
        sw = []
        for li, leaf in enumerate(leaves):
            links = []
            for s in range(spines):
                for u in range(uplinks):
                    links.append({"port": f"Ethernet{256 + (s * uplinks + u) * 8}", "peer": f"spine-{s + 1:02d}",
                                  "peer_port": f"Ethernet{(li * uplinks + u) * 8}"})
            sw.append({"name": leaf, "tier": "leaf", "links": links})
        for s in range(spines):
            sw.append({"name": f"spine-{s + 1:02d}", "tier": "spine", "links": []})
        return sw

    def truth(self, root_cause: str, component) -> None:
        self.truth_doc = {"root_cause": root_cause, "component": component}

    def write(self, out_root) -> None:
        case = out_root / self.name
        self.out.write(case / "bundle")
        (case / "truth.json").write_text(json.dumps(self.truth_doc) + "\n")



def _jit(*key) -> float:
    """A deterministic pseudo-random number in [0, 1) from a key (stable across processes)."""
    import hashlib

    d = hashlib.blake2b(repr(key).encode(), digest_size=8).digest()
    return int.from_bytes(d, "big") / 2 ** 64


def _small(host: str, idx: int) -> int:
    j = _jit("aer", host, idx)
    return 0 if j < 0.7 else int(j * 10)


def _guid(host: str, what: str) -> str:
    j = _jit("guid", host, what)
    return "%016x" % int(j * 2 ** 64)


def aer_text(cnt: dict) -> str:
    names = ["Receiver Error", "Bad TLP", "Bad DLLP", "RELAY_NUM Rollover", "Replay Timer Timeout", "Advisory Non-Fatal",
             "Corrected Internal Error", "Header Log Overflow"]
    total = sum(cnt.get(n, 0) for n in names)
    return "".join(f"{n} {cnt.get(n, 0)}\n" for n in names) + f"TOTAL_ERR_COR {total}\n"
