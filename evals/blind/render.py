"""Render a Fleet into bundle files, in the formats real tools print (see gpu-formats.md)."""

from __future__ import annotations

import json
import random

from fleet import (HW_BRAKE, HW_SLOW, HW_THERM, IDLE, LSPEED, OLDSPEED, SPEED, SW_POWER,
                   SW_THERM, SYNC, Fleet, Host, dt, iso, sh)

# --------------------------------------------------------------------------------------------
# kernel log prefixes


def kline(h: Host, t: float, text: str, seq: int) -> str:
    style = h.dmesg_style
    up = t - h.boot
    if style == "plain":
        return f"[{up:12.6f}] {text}"
    if style == "caller":
        return f"[{up:12.6f}] [ T{(seq * 37) % 9000 + 400}] {text}"
    if style == "T":
        d = dt(t)
        return f"[{d.strftime('%a %b')} {d.day:2d} {d.strftime('%H:%M:%S %Y')}] {text}"
    if style == "journal":
        return f"{dt(t).strftime('%b %d %H:%M:%S')} {h.name} kernel: {text}"
    if style == "kmsg":
        prio = 3 if ("Xid" in text or "rror" in text or "fallen" in text) else 6
        if text.startswith("Lustre") or text.startswith("nfs:"):
            prio = 4
        return f"{prio},{seq},{int(up * 1e6)},-;{text}"
    raise ValueError(style)


def boot_lines(h: Host) -> list[tuple[float, str]]:
    g = h.gen
    f = h.fleet
    b = h.boot
    out = [(b + 0.0, f"Linux version {h.kernel} (buildd@lcy02-amd64-080) (x86_64-linux-gnu-gcc-12 (Ubuntu 12.3.0-1ubuntu1~22.04) 12.3.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #1 SMP"),
           (b + 0.000012, "Command line: BOOT_IMAGE=/vmlinuz root=UUID=5d1c2b0e ro iommu=pt pci=realloc=off"),
           (b + 2.91, "pci 0000:00:00.0: [8086:09a2] type 00 class 0x080000")]
    for n in h.nics:
        out.append((b + 11.2 + n.i * 0.01, f"mlx5_core {n.bdf}: firmware version: {g['fw']}"))
        out.append((b + 11.3 + n.i * 0.01, f"mlx5_core {n.bdf}: 504.112 Gb/s available PCIe bandwidth (32.0 GT/s PCIe x16 link)"
                    if g["pgen"] == 5 else f"mlx5_core {n.bdf}: 252.048 Gb/s available PCIe bandwidth (16.0 GT/s PCIe x16 link)"))
    out.append((b + 14.8, f"nvidia: module license 'NVIDIA' taints kernel."))
    out.append((b + 15.02, f"NVRM: loading NVIDIA UNIX x86_64 Kernel Module  {f.driver}  Release Build  (dvs-builder@U16-I3-B03-4-3)"))
    for gp in h.gpus:
        out.append((b + 15.4 + gp.index * 0.003, f"nvidia {gp.bdf}: enabling device (0000 -> 0002)"))
    for n in h.nics:
        out.append((b + 31.5 + n.i * 0.02, f"mlx5_core {n.bdf} {n.ibdev}: Port: 1 Link ACTIVE"))
    return out


def dmesg(h: Host) -> str:
    ev = boot_lines(h) + sorted(h.events)
    ev = [e for e in ev if e[0] <= h.fleet.t1]
    lines = []
    for seq, (t, text) in enumerate(ev, start=1):
        for k, part in enumerate(text.split("\n")):
            if k and h.dmesg_style in ("plain", "T", "caller"):
                lines.append(" " * (len(kline(h, t, "", seq)) - 0) + part.strip())
            else:
                lines.append(kline(h, t, part.strip(), seq))
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------
# nvidia-smi -q


def _act(x: bool) -> str:
    return "Active" if x else "Not Active"


def smi_q(h: Host, t: float) -> str:
    f = h.fleet
    g = h.gen
    old = f.driver < "535"
    out = ["", "==============NVSMI LOG==============", "",
           f"Timestamp                                 : {dt(t).strftime('%a %b %d %H:%M:%S %Y')}",
           f"Driver Version                            : {f.driver}",
           f"CUDA Version                              : {f.cuda}", "",
           f"Attached GPUs                             : {len(h.gpus)}"]
    for gp in h.gpus:
        s = gp.state(t)
        if s["lost"]:
            out.append(f"Unable to determine the device handle for GPU0000:{gp.bus.upper()}:00.0: Unknown Error")
            continue
        busy = s["busy"] and f.job and f.job.running(t) and not h.spare
        reasons = s["reasons"] if busy else IDLE
        sm = s["sm"] if busy else 345
        power = s["power"] if busy else 71.3 + gp.index * 0.4
        pgen = s["pgen"] if busy else 1
        head = "Clocks Throttle Reasons" if old else "Clocks Event Reasons"
        sbe, dbe = gp.count("sbe", t), gp.count("dbe", t)
        rows = gp.end_rows if gp.end_rows and t >= f.t1 else (gp.start["rows_cor"], gp.start["rows_unc"], gp.start["pending"], gp.start["failure"])
        out += [f"GPU {gp.nvml_bus}",
                f"    Product Name                          : {g['name']}",
                f"    Product Brand                         : NVIDIA",
                f"    Product Architecture                  : {g['arch']}",
                f"    Persistence Mode                      : Enabled",
                f"    MIG Mode",
                f"        Current                           : Disabled",
                f"        Pending                           : Disabled",
                f"    Serial Number                         : 1654{int(gp.uuid[4:12], 16) % 10**9:09d}",
                f"    GPU UUID                              : {gp.uuid}",
                f"    Minor Number                          : {gp.index}",
                f"    GPU Reset Status",
                f"        Reset Required                    : {'Yes' if rows[2] else 'No'}",
                f"        Drain and Reset Recommended       : No",
                f"    PCI",
                f"        Bus                               : 0x{gp.bus.upper()}",
                f"        Device                            : 0x00",
                f"        Domain                            : 0x0000",
                f"        Device Id                         : 0x{g['devid'].upper()}10DE",
                f"        Bus Id                            : {gp.nvml_bus}",
                f"        GPU Link Info",
                f"            PCIe Generation",
                f"                Max                       : {g['pgen']}",
                f"                Current                   : {pgen}",
                f"                Device Current            : {pgen}",
                f"                Device Max                : {g['pgen']}",
                f"                Host Max                  : {g['pgen']}",
                f"            Link Width",
                f"                Max                       : 16x",
                f"                Current                   : {s['width']}x",
                f"        Replays Since Reset               : {gp.count('replay', t)}",
                f"        Replay Number Rollovers           : 0",
                f"    Fan Speed                             : N/A",
                f"    Performance State                     : P0",
                f"    {head}",
                f"        Idle                              : {_act(reasons & IDLE)}",
                f"        Applications Clocks Setting       : Not Active",
                f"        SW Power Cap                      : {_act(reasons & SW_POWER)}",
                f"        HW Slowdown                       : {_act(reasons & HW_SLOW)}",
                f"            HW Thermal Slowdown           : {_act(reasons & HW_THERM)}",
                f"            HW Power Brake Slowdown       : {_act(reasons & HW_BRAKE)}",
                f"        Sync Boost                        : {_act(reasons & SYNC)}",
                f"        SW Thermal Slowdown               : {_act(reasons & SW_THERM)}",
                f"        Display Clock Setting             : Not Active",
                f"    FB Memory Usage",
                f"        Total                             : {g['mem_total']} MiB",
                f"        Reserved                          : 565 MiB",
                f"        Used                              : {int(g['mem_total'] * 0.82) if busy else 0} MiB",
                f"    ECC Mode",
                f"        Current                           : Enabled",
                f"        Pending                           : Enabled",
                f"    ECC Errors",
                f"        Volatile",
                f"            SRAM Correctable              : 0",
                f"            SRAM Uncorrectable            : 0",
                f"            DRAM Correctable              : {sbe}",
                f"            DRAM Uncorrectable            : {dbe}",
                f"        Aggregate",
                f"            SRAM Correctable              : 0",
                f"            SRAM Uncorrectable            : 0",
                f"            DRAM Correctable              : {sbe + gp.start.get('sbe_agg', 0)}",
                f"            DRAM Uncorrectable            : {dbe}",
                f"    Retired Pages",
                f"        Single Bit ECC                    : N/A",
                f"        Double Bit ECC                    : N/A",
                f"        Pending Page Blacklist            : N/A",
                f"    Remapped Rows",
                f"        Correctable Error                 : {rows[0]}",
                f"        Uncorrectable Error               : {rows[1]}",
                f"        Pending                           : {'Yes' if rows[2] else 'No'}",
                f"        Remapping Failure Occurred        : {'Yes' if rows[3] else 'No'}",
                f"    Temperature",
                f"        GPU Current Temp                  : {int(s['temp'] if busy else 33 + gp.index % 3)} C",
                f"        GPU Shutdown Temp                 : {g['shut_temp']} C",
                f"        GPU Slowdown Temp                 : {g['slow_temp']} C",
                f"        GPU Max Operating Temp            : {g['slow_temp'] - 2} C",
                f"    GPU Power Readings",
                f"        Power Draw                        : {power:.2f} W",
                f"        Current Power Limit               : {s['plimit']:.2f} W",
                f"        Requested Power Limit             : {s['plimit']:.2f} W",
                f"        Default Power Limit               : {g['plimit']:.2f} W",
                f"        Min Power Limit                   : {g['pmin']:.2f} W",
                f"        Max Power Limit                   : {g['plimit']:.2f} W",
                f"    Clocks",
                f"        Graphics                          : {sm} MHz",
                f"        SM                                : {sm} MHz",
                f"        Memory                            : {g['mem']} MHz",
                f"    Max Clocks",
                f"        Graphics                          : {g['sm']} MHz",
                f"        SM                                : {g['sm']} MHz",
                f"        Memory                            : {g['mem']} MHz",
                ""]
    return "\n".join(out) + "\n"


def nvml(h: Host, t: float) -> str:
    f = h.fleet
    g = h.gen
    devs = []
    for gp in h.gpus:
        s = gp.state(t)
        if s["lost"]:
            devs.append({"index": gp.index, "uuid": gp.uuid, "pci_bus_id": gp.nvml_bus, "error": "GPU is lost"})
            continue
        busy = s["busy"] and f.job and f.job.running(t) and not h.spare
        rows = gp.end_rows or (gp.start["rows_cor"], gp.start["rows_unc"], gp.start["pending"], gp.start["failure"])
        devs.append({
            "index": gp.index, "uuid": gp.uuid, "pci_bus_id": gp.nvml_bus, "name": g["name"],
            "nvmlDeviceGetCurrPcieLinkGeneration": s["pgen"] if busy else 1,
            "nvmlDeviceGetMaxPcieLinkGeneration": g["pgen"],
            "nvmlDeviceGetCurrPcieLinkWidth": s["width"], "nvmlDeviceGetMaxPcieLinkWidth": 16,
            "nvmlDeviceGetPcieReplayCounter": gp.count("replay", t),
            "nvmlDeviceGetTemperature": int(s["temp"] if busy else 34),
            "nvmlDeviceGetPowerUsage": int((s["power"] if busy else 72.0) * 1000),
            "nvmlDeviceGetEnforcedPowerLimit": int(s["plimit"] * 1000),
            "nvmlDeviceGetClockInfo": {"sm": s["sm"] if busy else 345, "mem": g["mem"]},
            "nvmlDeviceGetMaxClockInfo": {"sm": g["sm"], "mem": g["mem"]},
            "nvmlDeviceGetCurrentClocksEventReasons": s["reasons"] if busy else IDLE,
            "nvmlDeviceGetTotalEccErrors": {"corrected_volatile": gp.count("sbe", t), "uncorrected_volatile": gp.count("dbe", t)},
            "nvmlDeviceGetRemappedRows": {"corrected": rows[0], "uncorrected": rows[1], "pending": rows[2], "failure": rows[3]},
        })
    events = [{"device": d, "type": "XidCriticalError", "data": x, "time": iso(te)}
              for te, d, x in sorted(getattr(h, "nvml_events", [])) if f.t0 <= te <= t]
    return json.dumps({"driver_version": f.driver, "devices": devs, "events": events}, indent=1) + "\n"


# --------------------------------------------------------------------------------------------
# lspci -vv


def lspci(h: Host, t: float) -> str:
    g = h.gen
    out = []
    for gp in h.gpus:
        s = gp.state(t)
        if s["lost"]:
            out += [f"{gp.bus}:00.0 3D controller: NVIDIA Corporation Device {g['devid']} (rev ff) (prog-if ff)",
                    "\t!!! Unknown header type 7f", "\tKernel driver in use: nvidia", "\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia", ""]
            continue
        busy = s["busy"] and h.fleet.job and h.fleet.job.running(t) and not h.spare
        cur = s["pgen"] if busy else 1
        sp_ok = "ok" if cur == g["pgen"] else "downgraded"
        w_ok = "ok" if s["width"] == 16 else "downgraded"
        out += [f"{gp.bus}:00.0 3D controller: NVIDIA Corporation Device {g['devid']} (rev a1)",
                "\tSubsystem: NVIDIA Corporation Device 16c1",
                "\tControl: I/O- Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr+ Stepping- SERR+ FastB2B- DisINTx+",
                "\tCapabilities: [60] Express (v2) Endpoint, MSI 00",
                f"\t\tDevSta:\tCorrErr{'+' if gp.count('aer', t) else '-'} NonFatalErr- FatalErr- UnsupReq- AuxPwr- TransPend+",
                f"\t\tLnkCap:\tPort #0, Speed {g['lspci']}, Width x16, ASPM L1, Exit Latency L1 <4us",
                "\t\t\tClockPM+ Surprise- LLActRep- BwNot- ASPMOptComp+",
                f"\t\tLnkSta:\tSpeed {LSPEED[cur]} ({sp_ok}), Width x{s['width']} ({w_ok})",
                "\t\t\tTrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-",
                f"\t\tLnkCap2: Supported Link Speeds: 2.5-{g['lspci']}, Crosslink- Retimer+ 2Retimers+ DRS-",
                "\tCapabilities: [1b8 v2] Advanced Error Reporting",
                "\t\tUESta:\tDLP- SDES- TLP- FCP- CmpltTO- CmpltAbrt- UnxCmplt- RxOF- MalfTLP- ECRC- UnsupReq- ACSViol-",
                f"\t\tCESta:\tRxErr{'+' if gp.count('aer', t) else '-'} BadTLP- BadDLLP- Rollover- Timeout- AdvNonFatalErr-",
                "\tKernel driver in use: nvidia", "\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia", ""]
    model = "MT2910 Family [ConnectX-7]" if g["gbps"] == 400 else "MT28908 Family [ConnectX-6]"
    kind = "Ethernet controller" if h.fleet.roce else "Infiniband controller"
    for n in h.nics:
        s = n.state(t)
        cur = s["pgen"] or g["pgen"]
        w = s["width"]
        out += [f"{n.bus}:00.0 {kind}: Mellanox Technologies {model}",
                "\tSubsystem: Mellanox Technologies Device 0023",
                "\tCapabilities: [60] Express (v2) Endpoint, MSI 00",
                f"\t\tLnkCap:\tPort #0, Speed {g['lspci']}, Width x16, ASPM not supported",
                f"\t\tLnkSta:\tSpeed {LSPEED[cur]} ({'ok' if cur == g['pgen'] else 'downgraded'}), Width x{w} ({'ok' if w == 16 else 'downgraded'})",
                "\tKernel driver in use: mlx5_core", "\tKernel modules: mlx5_core", ""]
    return "\n".join(out)


# --------------------------------------------------------------------------------------------
# NIC command outputs


def ethtool_s(n, t: float) -> str:
    f = n.host.fleet
    b = f.traffic_bytes(n, t) + n.start["data"] * 4
    pk = int(b / 4096)
    c = lambda k: n.count(k, t)  # noqa: E731
    rows = [("rx_packets", pk), ("tx_packets", pk + 1733), ("rx_bytes", int(b)), ("tx_bytes", int(b * 1.0002)),
            ("rx_vport_rdma_unicast_packets", pk - 4121), ("rx_vport_rdma_unicast_bytes", int(b * 0.998)),
            ("tx_vport_rdma_unicast_packets", pk - 3977), ("tx_vport_rdma_unicast_bytes", int(b * 0.9985)),
            ("rx_out_of_buffer", c("oob")), ("tx_queue_stopped", 0),
            ("rx_packets_phy", pk + 9120), ("tx_packets_phy", pk + 9981), ("rx_bytes_phy", int(b * 1.003)),
            ("tx_bytes_phy", int(b * 1.003)), ("rx_crc_errors_phy", 0), ("rx_symbol_err_phy", c("symbol")),
            ("rx_discards_phy", c("rx_disc")), ("tx_discards_phy", 0), ("link_down_events_phy", c("downed")),
            ("rx_pause_ctrl_phy", 0), ("tx_pause_ctrl_phy", 0),
            ("rx_pcs_symbol_err_phy", c("symbol")), ("rx_corrected_bits_phy", int(c("fec_corr") * 3.1)),
            ("rx_prio0_bytes", 8811201), ("rx_prio0_packets", 60120), ("tx_prio0_bytes", 9120331), ("tx_prio0_packets", 61010),
            ("rx_prio3_bytes", int(b * 0.997)), ("rx_prio3_packets", pk - 100), ("tx_prio3_bytes", int(b * 0.997)),
            ("tx_prio3_packets", pk - 80),
            ("rx_prio3_pause", c("rx_pause")), ("rx_prio3_pause_duration", c("rx_pause_dur")),
            ("rx_prio3_pause_transition", c("rx_pause") // 2),
            ("tx_prio3_pause", c("tx_pause")), ("tx_prio3_pause_duration", c("tx_pause_dur")),
            ("tx_prio3_pause_transition", c("tx_pause") // 2),
            ("rx_prio3_discards", 0), ("tx_pause_storm_warning_events", c("storm_warn")),
            ("tx_pause_storm_error_events", 0), ("rx_pci_signal_integrity", 0), ("tx_pci_signal_integrity", 0),
            ("outbound_pci_stalled_rd", 0), ("outbound_pci_stalled_wr", int(c("tx_pause") * 0.9)),
            ("outbound_pci_stalled_rd_events", 0), ("outbound_pci_stalled_wr_events", int(c("tx_pause") * 0.02)),
            ("module_unplug", 0), ("module_bus_stuck", 0), ("module_high_temp", 0), ("module_bad_shorted", 0)]
    return "NIC statistics:\n" + "".join(f"     {k}: {v}\n" for k, v in rows)


def ethtool_fec(n, t: float) -> str:
    corr = n.count("fec_corr", t)
    unc = n.count("fec_unc", t)
    r = random.Random(sh(n.host.name, n.i) & 0xffff)
    w = [r.uniform(0.8, 1.2) for _ in range(4)]
    if n.state(t).get("fec_lane") is not None:
        w[n.state(t)["fec_lane"]] *= 40
    tot = sum(w)
    lanes_c = [int(corr * x / tot) for x in w]
    lanes_u = [0, 0, 0, 0]
    if unc:
        k = n.state(t).get("fec_lane") or 0
        lanes_u[k] = unc
    out = [f"FEC parameters for {n.netdev}:", "Supported/Configured FEC encodings: Auto RS",
           "Active FEC encoding: RS", "Statistics:", f"  corrected_blocks: {sum(lanes_c)}"]
    out += [f"    Lane {i}: {v}" for i, v in enumerate(lanes_c)]
    out += [f"  uncorrectable_blocks: {sum(lanes_u)}"]
    out += [f"    Lane {i}: {v}" for i, v in enumerate(lanes_u)]
    return "\n".join(out) + "\n"


def ibstat(h: Host, t: float) -> str:
    g = h.gen
    out = []
    for n in h.nics:
        s = n.state(t)
        active = s["state"].endswith("ACTIVE")
        rate = (s["rate"] or g["rate"]).split()[0]
        guid = f"0x{sh(h.name, n.i) & 0xffffffffffff:016x}"
        out += [f"CA '{n.ibdev}'", f"\tCA type: {g['hca']}", "\tNumber of ports: 1",
                f"\tFirmware version: {g['fw']}", "\tHardware version: 0", f"\tNode GUID: {guid}",
                f"\tSystem image GUID: {guid}", "\tPort 1:",
                f"\t\tState: {'Active' if active else 'Down'}",
                f"\t\tPhysical state: {'LinkUp' if active else 'Polling'}", f"\t\tRate: {rate}",
                f"\t\tBase lid: {0 if h.fleet.roce else 100 + n.i + 16 * h.fleet.hosts.index(h)}", "\t\tLMC: 0",
                f"\t\tSM lid: {0 if h.fleet.roce else 1}", "\t\tCapability mask: 0xa751e848",
                f"\t\tPort GUID: {guid}", f"\t\tLink layer: {'Ethernet' if h.fleet.roce else 'InfiniBand'}"]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------
# sysfs


def sysfs(h: Host, t: float, before: bool = False) -> dict[str, str]:
    out = _sysfs(h, t)
    if before:
        keep = ("current_link_speed", "current_link_width", "aer_dev_correctable", "/counters/", "/hw_counters/", "carrier_changes")
        out = {k: v for k, v in out.items() if any(x in k for x in keep)}
    return out


def _sysfs(h: Host, t: float) -> dict[str, str]:
    f = h.fleet
    g = h.gen
    out = {}
    for gp in h.gpus:
        s = gp.state(t)
        base = f"sys/bus/pci/devices/{gp.bdf}/"
        speed = SPEED if not h.kernel.startswith("5.4") else OLDSPEED
        if s["lost"]:
            cur, mx, w, mw = "Unknown", "Unknown", "63", "63"
        else:
            busy = s["busy"] and f.job and f.job.running(t) and not h.spare
            cur, mx, w, mw = speed[s["pgen"] if busy else 1], speed[g["pgen"]], str(s["width"]), "16"
        out[base + "current_link_speed"] = cur + "\n"
        out[base + "max_link_speed"] = mx + "\n"
        out[base + "current_link_width"] = w + "\n"
        out[base + "max_link_width"] = mw + "\n"
        aer = gp.count("aer", t)
        out[base + "aer_dev_correctable"] = (f"Receiver Error {aer}\nBad TLP 0\nBad DLLP 0\nRELAY_NUM Rollover 0\n"
                                             f"Replay Timer Timeout 0\nAdvisory Non-Fatal 0\nCorrected Internal Error 0\n"
                                             f"Header Log Overflow 0\nTOTAL_ERR_COR {aer}\n")
        if "aer_fatal" not in gp.base:
            continue
        fatal = gp.count("aer_fatal", t)
        out[base + "aer_dev_fatal"] = (f"Undefined 0\nData Link Protocol 0\nSurprise Down Error {fatal}\nPoisoned TLP 0\n"
                                       f"Flow Control Protocol 0\nCompletion Timeout 0\nCompleter Abort 0\nUnexpected Completion 0\n"
                                       f"Receiver Overflow 0\nMalformed TLP 0\nECRC 0\nUnsupported Request 0\nACS Violation 0\n"
                                       f"Uncorrectable Internal Error 0\nMC Blocked TLP 0\nAtomicOp Egress Blocked 0\n"
                                       f"TLP Prefix Blocked Error 0\nTOTAL_ERR_FATAL {fatal}\n")
    for n in h.nics:
        s = n.state(t)
        p = f"sys/class/infiniband/{n.ibdev}/ports/1/"
        out[p + "state"] = s["state"] + "\n"
        out[p + "phys_state"] = s["phys"] + "\n"
        out[p + "rate"] = (s["rate"] or (g["rate"] if not f.roce else f"{g['gbps']} Gb/sec (4X NDR)" if g["gbps"] == 400 else f"{g['gbps']} Gb/sec (4X HDR)")) + "\n"
        out[p + "link_layer"] = ("Ethernet" if f.roce else "InfiniBand") + "\n"
        words = int((f.traffic_bytes(n, t) + n.start["data"] * 4) / 4)
        c = {"port_rcv_errors": n.count("rcv_err", t), "symbol_error": n.count("symbol", t),
             "link_downed": n.count("downed", t), "link_error_recovery": n.count("recovery", t),
             "port_xmit_wait": n.count("xmit_wait", t), "port_rcv_data": words, "port_xmit_data": int(words * 1.0004),
             }
        for k, v in c.items():
            out[p + "counters/" + k] = f"{v}\n"
        hw = {"out_of_sequence": n.count("oos", t), "packet_seq_err": n.count("seqerr", t),
              "local_ack_timeout_err": n.count("acktmo", t)}
        if f.roce:
            hw.update(np_cnp_sent=n.count("cnp", t), rp_cnp_handled=int(n.count("cnp", t) * 0.97),
                      np_ecn_marked_roce_packets=n.count("ecn", t))
        if f.roce:
            for k, v in hw.items():
                out[p + "hw_counters/" + k] = f"{v}\n"
        out[f"sys/class/net/{n.netdev}/operstate"] = ("up" if s["state"].endswith("ACTIVE") else "down") + "\n"
        out[f"sys/class/net/{n.netdev}/carrier_changes"] = f"{n.count('carrier', t)}\n"
    return out


# --------------------------------------------------------------------------------------------
# host load


def pressure(kind: str, vals: tuple[float, float], total: int) -> str:
    some, full = vals
    jit = lambda v, k: max(0.0, v * k)  # noqa: E731
    return (f"some avg10={jit(some, 1.05):.2f} avg60={jit(some, 1.0):.2f} avg300={jit(some, 0.8):.2f} total={total}\n"
            f"full avg10={jit(full, 1.05):.2f} avg60={jit(full, 1.0):.2f} avg300={jit(full, 0.8):.2f} total={int(total * (full / some) if some else 0)}\n")


def top(h: Host, t: float, procs: list[tuple], load: tuple, cpu: str, mem: str) -> str:
    d = dt(t)
    up = (t - h.boot) / 86400
    days = int(up)
    hm = int((up - days) * 24 * 60)
    out = [f"top - {d.strftime('%H:%M:%S')} up {days} days, {hm // 60:2d}:{hm % 60:02d},  0 users,  load average: {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f}",
           f"Tasks: {812 + len(procs)} total,  {sum(1 for p in procs if p[6] == 'R'):2d} running, {800 + len(procs)} sleeping,   0 stopped,   0 zombie",
           f"%Cpu(s): {cpu}", f"MiB Mem : {mem}",
           "MiB Swap:      0.0 total,      0.0 free,      0.0 used. 1641210.8 avail Mem", "",
           "    PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND"]
    for pid, user, virt, res, shr, cpu_p, state, mem_p, tm, cmd in procs:
        out.append(f"{pid:>7} {user:<9} 20   0 {virt:>7} {res:>6} {shr:>6} {state} {cpu_p:>5.1f} {mem_p:>5.1f} {tm:>9} {cmd}")
    return "\n".join(out) + "\n"


def train_top(h: Host, t: float, extra: list[tuple] | None = None, load=None, cpu=None) -> str:
    procs = []
    base_pid = 41000 + (sh(h.name) & 0xfff)
    for gp in h.gpus:
        procs.append((base_pid + gp.index * 7, "train", "98.1g", "11.2g", "1.1g", 101.3 - gp.index * 0.7, "R", 0.5, "912:41.07", "python"))
    procs += extra or []
    procs.sort(key=lambda p: -p[5])
    n = len(h.gpus)
    load = load or (n * 1.6, n * 1.55, n * 1.5)
    return top(h, t, procs, load, cpu or " 9.8 us,  2.1 sy,  0.0 ni, 87.6 id,  0.1 wa,  0.0 hi,  0.4 si,  0.0 st",
               "2063777.0 total, 120554.2 free, 402331.1 used, 1540891.7 buff/cache")


# --------------------------------------------------------------------------------------------
# BMC


def sel(h: Host) -> str:
    out = []
    for i, (t, sensor, event, direction) in enumerate(sorted(h.sel), start=1):
        d = dt(t)
        out.append(f"{i:4x} | {d.strftime('%m/%d/%Y')} | {d.strftime('%H:%M:%S')} | {sensor} | {event} | {direction}")
    return "\n".join(out) + "\n"


def sdr_fan(h: Host) -> str:
    out = []
    fans = h.fans or [(f"Fan{i // 2 + 1}{'AB'[i % 2]}", 6840 + (i * 131) % 400, "ok") for i in range(12)]
    for i, (name, rpm, st) in enumerate(fans):
        out.append(f"{name:<16} | {0x30 + i:02X}h | {st:<3} |  7.1 | {rpm} RPM" if rpm else f"{name:<16} | {0x30 + i:02X}h | {st:<3} |  7.1 | 0 RPM")
    return "\n".join(out) + "\n"


def nvlink_e(h: Host, t: float) -> str:
    g = h.gen
    nl = 18 if h.genname != "A100" else 12
    out = []
    for gp in h.gpus:
        if gp.state(t)["lost"]:
            continue
        out.append(f"GPU {gp.index}: {g['name']} (UUID: {gp.uuid})")
        bad = gp.base.get("bad_link", gp.state(t).get("bad_link"))
        for link in range(nl):
            rep = gp.count("nvreplay", t) if link == bad else 0
            rec = gp.count("nvrecovery", t) if link == bad else 0
            crc = gp.count("crc", t) if link == bad else 0
            out += [f"\t Link {link}: Replay Errors: {rep}", f"\t Link {link}: Recovery Errors: {rec}",
                    f"\t Link {link}: CRC Errors: {crc}"]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------
# OpenMetrics

DCGM_HELP = {
    "DCGM_FI_DEV_SM_CLOCK": ("gauge", "SM clock frequency (in MHz)."),
    "DCGM_FI_DEV_GPU_TEMP": ("gauge", "GPU temperature (in C)."),
    "DCGM_FI_DEV_POWER_USAGE": ("gauge", "Power draw (in W)."),
    "DCGM_FI_DEV_GPU_UTIL": ("gauge", "GPU utilization (in %)."),
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": ("gauge", "Ratio of cycles the tensor (HMMA) pipe is active."),
    "DCGM_FI_PROF_SM_ACTIVE": ("gauge", "The ratio of cycles an SM has at least 1 warp assigned."),
    "DCGM_FI_DEV_PCIE_REPLAY_COUNTER": ("counter", "Total number of PCIe retries."),
    "DCGM_FI_DEV_XID_ERRORS": ("gauge", "Value of the last XID error encountered."),
    "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS": ("gauge", "Current clock throttle reasons."),
    "DCGM_FI_DEV_CLOCKS_EVENT_REASONS": ("gauge", "Current clock event reasons."),
    "DCGM_FI_DEV_POWER_VIOLATION": ("counter", "Throttling duration due to power constraints (in ns)."),
    "DCGM_FI_DEV_THERMAL_VIOLATION": ("counter", "Throttling duration due to thermal constraints (in ns)."),
    "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL": ("counter", "Total number of single-bit volatile ECC errors."),
    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": ("counter", "Total number of double-bit volatile ECC errors."),
    "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL": ("counter", "Total number of NVLink flow-control CRC errors."),
    "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL": ("counter", "Total number of NVLink retries."),
    "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS": ("counter", "Number of remapped rows for correctable errors"),
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": ("counter", "Number of remapped rows for uncorrectable errors"),
    "DCGM_FI_DEV_ROW_REMAP_FAILURE": ("gauge", "Whether remapping of rows has failed"),
}
DEFAULT_FAMILIES = ["DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_UTIL",
                    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "DCGM_FI_DEV_XID_ERRORS",
                    "DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "DCGM_FI_DEV_POWER_VIOLATION", "DCGM_FI_DEV_THERMAL_VIOLATION",
                    "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"]


def sample_times(f: Fleet) -> list[int]:
    span = f.t1 - f.tm
    step = max(f.sample, int(span / 40) // 60 * 60)
    if len(f.hosts) * f.gpn > 120:
        step = max(step, int(span / 28) // 60 * 60)
    return list(range(int(f.tm), int(f.t1) + 1, step))


def dcgm_om(f: Fleet) -> str:
    fams = f.dcgm_families or DEFAULT_FAMILIES
    if f.driver < "535":
        fams = ["DCGM_FI_DEV_CLOCK_THROTTLE_REASONS" if x == "DCGM_FI_DEV_CLOCKS_EVENT_REASONS" else x for x in fams]
    ts = sample_times(f)
    rng = random.Random(f.seed * 3 + 1)
    out = []
    j = f.job
    for fam in fams:
        typ, hlp = DCGM_HELP[fam]
        if typ == "counter":
            typ = "gauge" if fam.endswith("COUNTER") or "VIOLATION" in fam else "unknown"
        out.append(f"# HELP {fam} {hlp}")
        out.append(f"# TYPE {fam} {typ}")
        for h in f.hosts:
            for gp in h.gpus:
                lab = (f'gpu="{gp.index}",UUID="{gp.uuid}",pci_bus_id="{gp.nvml_bus}",device="nvidia{gp.index}",'
                       f'modelName="{h.gen["name"]}",{f.hostname_label}="{h.name}",DCGM_FI_DRIVER_VERSION="{f.driver}"')
                for t in ts:
                    s = gp.state(t)
                    if s["lost"]:
                        continue
                    busy = s["busy"] and j is not None and j.running(t) and not h.spare
                    v = _dcgm_value(fam, gp, s, t, busy, rng, f)
                    if v is None:
                        continue
                    out.append(f"{fam}{{{lab}}} {v} {t}")
    out.append("# EOF")
    return "\n".join(out) + "\n"


def _dcgm_value(fam, gp, s, t, busy, rng, f):
    j = f.job
    if fam == "DCGM_FI_DEV_SM_CLOCK":
        return int(s["sm"] - (rng.choice([0, 0, 15, 30]) if s["reasons"] & SW_POWER else 0)) if busy else 345
    if fam == "DCGM_FI_DEV_GPU_TEMP":
        return int(s["temp"] + rng.uniform(-1.2, 1.2)) if busy else 33 + gp.index % 3
    if fam == "DCGM_FI_DEV_POWER_USAGE":
        return round(s["power"] * (1 + rng.uniform(-0.03, 0.03)), 3) if busy else round(70 + rng.uniform(0, 5), 3)
    if fam == "DCGM_FI_DEV_GPU_UTIL":
        if not busy:
            return 0
        dur, _ = j.step_time(t)
        waiting = sum(x for t0, t1, x in j.extra if t0 <= t < t1)
        return max(0, min(100, int(round(100 * (dur - waiting) / dur)) - (0 if rng.random() < 0.9 else 1)))
    if fam in ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_SM_ACTIVE"):
        if not busy:
            return 0.0
        dur, _ = j.step_time(t)
        rank = next((r for r, (hh, g) in enumerate(f.placement) if hh is gp.host and g == gp.index), None)
        comp = j.compute_of(rank, t) if rank is not None else 0
        base = 0.52 if fam.endswith("TENSOR_ACTIVE") else 0.86
        # a GPU doing the same work slower keeps its pipes busy for longer but at a lower rate
        slow = comp / (j.compute_of(-1, t) or comp)
        return round(base * min(1.0, comp / dur) / max(1.0, slow) * (1 + rng.uniform(-0.02, 0.02)), 6)
    if fam == "DCGM_FI_DEV_PCIE_REPLAY_COUNTER":
        return gp.count("replay", t)
    if fam == "DCGM_FI_DEV_XID_ERRORS":
        x = 0
        for te, code in getattr(gp, "xids", []):
            if te <= t:
                x = code
        return x
    if fam in ("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"):
        return s["reasons"] if busy else IDLE
    if fam == "DCGM_FI_DEV_POWER_VIOLATION":
        return int(gp.count("pviol", t))
    if fam == "DCGM_FI_DEV_THERMAL_VIOLATION":
        return int(gp.count("tviol", t))
    if fam == "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL":
        return gp.count("sbe", t)
    if fam == "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL":
        return gp.count("dbe", t)
    if fam == "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL":
        return gp.count("crc", t)
    if fam == "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL":
        return gp.count("nvreplay", t)
    if fam == "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS":
        return gp.start["rows_cor"] + (gp.end_rows[0] - gp.start["rows_cor"] if gp.end_rows and t >= getattr(gp, "remap_t", 1e12) else 0)
    if fam == "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS":
        return gp.start["rows_unc"] + (gp.end_rows[1] - gp.start["rows_unc"] if gp.end_rows and t >= getattr(gp, "remap_t", 1e12) else 0)
    if fam == "DCGM_FI_DEV_ROW_REMAP_FAILURE":
        return 0
    raise KeyError(fam)


def node_om(f: Fleet) -> str:
    ts = sample_times(f)
    out = []
    fams = [("node_infiniband_port_data_received_bytes", "counter", "Number of data octets received on all links"),
            ("node_infiniband_port_data_transmitted_bytes", "counter", "Number of data octets transmitted on all links"),
            ("node_infiniband_port_errors_received", "counter", "Number of errors received on this port"),
            ("node_infiniband_link_downed", "counter", "Number of times the link failed to recover from an error state and went down"),
            ("node_infiniband_port_transmit_wait", "counter", "Number of ticks during which the port had data to transmit but no data was sent during the entire tick"),
            ("node_pressure_cpu_waiting_seconds", "counter", "Total time in seconds that processes have waited for CPU time"),
            ("node_load1", "gauge", "1m load average.")]
    for fam, typ, hlp in fams:
        out.append(f"# HELP {fam} {hlp}")
        out.append(f"# TYPE {fam} {typ}")
        for h in f.hosts:
            inst = f"{h.name}:9100"
            if fam.startswith("node_infiniband"):
                for n in h.nics:
                    lab = f'device="{n.ibdev}",instance="{inst}",job="node",port="1"'
                    for t in ts:
                        if fam.endswith("received_bytes"):
                            v = int(f.traffic_bytes(n, t) + n.start["data"] * 4)
                        elif fam.endswith("transmitted_bytes"):
                            v = int((f.traffic_bytes(n, t) + n.start["data"] * 4) * 1.0004)
                        elif fam.endswith("errors_received"):
                            v = n.count("rcv_err", t)
                        elif fam.endswith("link_downed"):
                            v = n.count("downed", t)
                        else:
                            v = n.count("xmit_wait", t)
                        out.append(f"{fam}_total{{{lab}}} {v} {t}")
            elif fam == "node_pressure_cpu_waiting_seconds":
                for t in ts:
                    out.append(f'{fam}_total{{instance="{inst}",job="node"}} {round(host_cpu_wait(h, t), 3)} {t}')
            else:
                for t in ts:
                    out.append(f'{fam}{{instance="{inst}",job="node"}} {round(host_load(h, t), 2)} {t}')
    out.extend(f.metric_extra.get("node", []))
    out.append("# EOF")
    return "\n".join(out) + "\n"


def host_cpu_wait(h: Host, t: float) -> float:
    f = h.fleet
    total = 1000.0 + (sh(h.name) & 0xff)
    marks = sorted({f.tm, t} | {p[0] for p in h.cpu_phases if f.tm < p[0] < t})
    for a, b in zip(marks, marks[1:]):
        rate = h.cpu_wait_rate
        for t0, kw in h.cpu_phases:
            if t0 <= a:
                rate = kw.get("wait", rate)
        total += rate * (b - a)
    return total


def host_load(h: Host, t: float) -> float:
    v = h.load1 if not h.spare else 0.4
    for t0, kw in h.cpu_phases:
        if t0 <= t:
            v = kw.get("load", v)
    return v * (1 + 0.03 * ((int(t) // 60) % 5 - 2) / 2)


def snmp_om(f: Fleet, series: dict) -> str:
    """series: {(switch, ifName): {"in": rate_fn, "out": rate_fn, "disc": rate_fn}} as byte/s functions of t."""
    ts = sample_times(f)
    out = []
    for fam, key, hlp in (("ifHCInOctets", "in", "The total number of octets received on the interface, including framing characters - 1.3.6.1.2.1.31.1.1.1.6"),
                          ("ifHCOutOctets", "out", "The total number of octets transmitted out of the interface, including framing characters - 1.3.6.1.2.1.31.1.1.1.10"),
                          ("ifOutDiscards", "disc", "The number of outbound packets which were chosen to be discarded even though no errors had been detected to prevent their being transmitted - 1.3.6.1.2.1.2.2.1.19")):
        out.append(f"# HELP {fam} {hlp}")
        out.append(f"# TYPE {fam} counter" if False else f"# TYPE {fam} gauge")
        for (sw, port), fns in sorted(series.items()):
            acc = 10**12 if key != "disc" else 0
            prev = ts[0]
            for t in ts:
                acc += fns[key](prev) * (t - prev)
                prev = t
                out.append(f'{fam}{{ifAlias="",ifDescr="{port}",ifIndex="{1000 + int(port[8:])}",ifName="{port}",instance="{sw}",job="snmp"}} {int(acc)} {t}')
    out.append("# EOF")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------
# SONiC


def sonic_counters(rows: list[tuple]) -> str:
    """rows: (iface, state, rx_ok, rx_bps, rx_util, rx_err, rx_drp, tx_ok, tx_bps, tx_util, tx_err, tx_drp)."""
    hdr = ("IFACE", "STATE", "RX_OK", "RX_BPS", "RX_UTIL", "RX_ERR", "RX_DRP", "RX_OVR",
           "TX_OK", "TX_BPS", "TX_UTIL", "TX_ERR", "TX_DRP", "TX_OVR")
    body = []
    for (iface, st, rxok, rxbps, rxu, rxe, rxd, txok, txbps, txu, txe, txd) in rows:
        body.append((iface, st, f"{rxok:,}", rxbps, f"{rxu:.2f}%", f"{rxe:,}", f"{rxd:,}", "N/A",
                     f"{txok:,}", txbps, f"{txu:.2f}%", f"{txe:,}", f"{txd:,}", "N/A"))
    w = [max(len(hdr[i]), *(len(r[i]) for r in body)) for i in range(len(hdr))]
    line = lambda cells: "  ".join(c.rjust(w[i]) for i, c in enumerate(cells))  # noqa: E731
    return "\n".join([line(hdr), "  ".join("-" * x for x in w)] + [line(r) for r in body]) + "\n"


def sonic_pfc(rx: dict[str, list[int]], tx: dict[str, list[int]]) -> str:
    out = []
    for title, tab in (("Port Rx", rx), ("Port Tx", tx)):
        hdr = [title] + [f"PFC{i}" for i in range(8)]
        rows = [[p] + [f"{v:,}" for v in vals] for p, vals in tab.items()]
        w = [max(len(hdr[i]), *(len(r[i]) for r in rows)) for i in range(9)]
        out.append("  ".join(c.rjust(w[i]) for i, c in enumerate(hdr)))
        out.append("  ".join("-" * x for x in w))
        out += ["  ".join(c.rjust(w[i]) for i, c in enumerate(r)) for r in rows]
        out.append("")
    return "\n".join(out)


def sonic_pfcwd(rows: list[tuple]) -> str:
    hdr = ("QUEUE", "STATUS", "STORM DETECTED/RESTORED", "TX OK/DROP", "RX OK/DROP", "TX LAST OK/DROP", "RX LAST OK/DROP")
    w = [max(len(hdr[i]), *(len(r[i]) for r in rows)) if rows else len(hdr[i]) for i in range(7)]
    out = ["  ".join(c.rjust(w[i]) for i, c in enumerate(hdr)), "  ".join("-" * x for x in w)]
    out += ["  ".join(c.rjust(w[i]) for i, c in enumerate(r)) for r in rows]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------
# The whole bundle


def render(f: Fleet) -> None:
    j = f.job
    b = "bundle/"
    inc = {"schema": "forensic.bundle/v1", "id": f.case,
           "title": f.incident["title"],
           "window": {"start": iso(f.t0), "end": iso(f.t1)},
           "job": {"name": j.name if j else "", "ranks": f.nranks, "gpus_per_node": f.gpn},
           "reported": f.incident.get("reported", "")}
    if f.incident.get("alerts"):
        inc["alerts"] = f.incident["alerts"]
    f.put(b + "incident.json", json.dumps(inc, indent=2) + "\n")
    f.put("truth.json", json.dumps(f.truth) + "\n")

    if "topology" not in f.skip:
        topo = {"hosts": [{"name": h.name, "rack": h.rack,
                           "gpus": [{"index": g.index, "pci_bus_id": g.nvml_bus, "uuid": g.uuid} for g in h.gpus],
                           "nics": [{"ibdev": n.ibdev, "netdev": n.netdev, "pci_bus_id": n.bdf, "port": 1,
                                     "link_layer": "Ethernet" if f.roce else "InfiniBand",
                                     **({"switch": n.switch.name, "switch_port": n.port} if n.switch else {})}
                                    for n in h.nics]} for h in f.hosts]}
        if getattr(f, "topo_shuffle", False):
            random.Random(f.seed + 7).shuffle(topo["hosts"])
        if f.rank_order != "default":
            topo["ranks"] = [{"rank": r, "host": h.name, "gpu": g} for r, (h, g) in enumerate(f.placement)]
        if f.switches:
            topo["switches"] = [{"name": s.name, "tier": s.tier, "links": s.links} for s in f.switches]
        f.put(b + "topology.json", json.dumps(topo, indent=1) + "\n")

    if j is not None:
        j.simulate()
        if "steps" not in f.skip:
            cols = ["step", "rank", "start_unix", "duration_s"] + [c for c in ("compute_s", "loss", "grad_norm", "param_checksum", "tokens") if c in j.cols]
            rows = j.rows()
            rng = random.Random(f.seed + 99)
            if getattr(f, "shuffle_rows", False):
                rng.shuffle(rows)
            text = ",".join(cols) + "\n" + "".join(",".join(str(x) for x in r) + "\n" for r in rows)
            f.put(b + "job/steps.csv", text, gz="steps" in f.gz or len(text) > 2_000_000)
    for name, lines in sorted(f.logs.items()):
        f.put(b + f"job/logs/{name}", "".join(l + "\n" for _, l in sorted(lines, key=lambda x: x[0])),
              gz=name in f.gz)

    if "dcgm" not in f.skip:
        text = dcgm_om(f)
        f.put(b + "metrics/dcgm.om", text, gz="dcgm" in f.gz or len(text) > 3_000_000)
    if "node" not in f.skip:
        text = node_om(f)
        f.put(b + "metrics/node.om", text, gz="node" in f.gz or len(text) > 3_000_000)
    for name, text in sorted(getattr(f, "extra_metrics", {}).items()):
        f.put(b + f"metrics/{name}", text, gz=name.endswith(".gz"))

    for h in f.hosts:
        if not h.collect:
            continue
        p = b + f"nodes/{h.name}/"
        col = {"before": f.t0, "now": f.t1}
        if h.keep_boot:
            col["boot"] = h.boot
        f.put(p + "collected.json", json.dumps(col) + "\n")
        for when, t in (("", f.t1), ("before/", f.t0)):
            for rel, text in sysfs(h, t, before=bool(when)).items():
                f.put(p + when + rel, text)
            if f.roce and h.ethtool:
                for n in h.nics:
                    f.put(p + when + f"cmd/ethtool-S-{n.netdev}.txt", ethtool_s(n, t))
            if h.fec:
                for n in h.nics:
                    f.put(p + when + f"cmd/ethtool-I-show-fec-{n.netdev}.txt", ethtool_fec(n, t))
            if getattr(h, "nvlink_cmd", False):
                f.put(p + when + "cmd/nvidia-smi-nvlink-e.txt", nvlink_e(h, t))
        f.put(p + "cmd/nvidia-smi-q.txt", smi_q(h, f.t1))
        f.put(p + "cmd/lspci-vv.txt", lspci(h, f.t1))
        f.put(p + "cmd/dmesg.txt", dmesg(h), gz=getattr(h, "gz_dmesg", False))
        f.put(p + "cmd/ibstat.txt", ibstat(h, f.t1))
        f.put(p + "nvml.json", nvml(h, f.t1))
        if getattr(h, "write_pressure", True):
            f.put(p + "cmd/pressure-cpu.txt", pressure("cpu", h.pressure["cpu"], int(host_cpu_wait(h, f.t1) * 1e6)))
            f.put(p + "cmd/pressure-memory.txt", pressure("memory", h.pressure["mem"], int(h.pressure["mem"][0] * 8e8 + 120334)))
            f.put(p + "cmd/pressure-io.txt", pressure("io", h.pressure["io"], int(h.pressure["io"][0] * 9e8 + 3320012)))
        if h.top is not None:
            f.put(p + "cmd/top.txt", h.top)
        if h.sel:
            f.put(p + "cmd/ipmitool-sel-elist.txt", sel(h))
        if h.fans is not None:
            f.put(p + "cmd/ipmitool-sdr-type-fan.txt", sdr_fan(h))
        for name, text in sorted(h.cmd_extra.items()):
            f.put(p + name, text)
    for sw in f.switches:
        for name, text in sorted(sw.ports.get("_cmd", {}).items()):
            f.put(b + f"switches/{sw.name}/cmd/{name}", text)
