"""Printers: every source text is rendered from the case's fleet state."""
import json
from fleet import iso, ctime, syslogts, SPEED, SPEED_OLD

THROTTLE_NAMES = [("Idle", 0x1), ("Applications Clocks Setting", 0x2), ("SW Power Cap", 0x4), ("HW Slowdown", 0x8),
                  ("HW Thermal Slowdown", 0x40), ("HW Power Brake Slowdown", 0x80), ("Sync Boost", 0x10),
                  ("SW Thermal Slowdown", 0x20), ("Display Clock Setting", 0x100)]


def nvidia_smi_q(c, h, now_state, t):
    fl = c.fl
    L = ["", "==============NVSMI LOG==============", "",
         "Timestamp                                 : %s" % ctime(t),
         "Driver Version                            : %s" % fl.driver,
         "CUDA Version                              : %s" % ("12.2" if fl.old_driver else "12.4"), "",
         "Attached GPUs                             : %d" % len(h["gpus"])]
    for g in h["gpus"]:
        s = now_state[g["index"]]
        if s["lost"]:
            continue
        L += ["GPU %s" % g["pci_bus_id"],
              "    Product Name                          : %s" % fl.m["name"],
              "    Persistence Mode                      : Enabled",
              "    GPU UUID                              : %s" % g["uuid"],
              "    Minor Number                          : %d" % g["index"],
              "    GPU Reset Status",
              "        Reset Required                    : No",
              "        Drain and Reset Recommended       : %s" % ("Yes" if s["remap"]["pending"] else "No"),
              "    PCI",
              "        Bus                               : 0x%s" % g["bus"].upper(),
              "        Device                            : 0x00",
              "        Domain                            : 0x0000",
              "        Bus Id                            : %s" % g["pci_bus_id"],
              "        GPU Link Info",
              "            PCIe Generation",
              "                Max                       : %d" % s["maxgen"],
              "                Current                   : %d" % s["gen"],
              "                Device Current            : %d" % s["gen"],
              "                Device Max                : %d" % s["maxgen"],
              "                Host Max                  : N/A",
              "            Link Width",
              "                Max                       : %dx" % s["maxwidth"],
              "                Current                   : %dx" % s["width"],
              "        Replays Since Reset               : %d" % s["pcie_replay_n"],
              "        Replay Number Rollovers           : 0",
              "    Performance State                     : %s" % ("P0" if s["busy"] else "P8"),
              "    Clocks %s Reasons" % ("Throttle" if fl.old_driver else "Event")]
        for name, bit in THROTTLE_NAMES:
            ind = "            " if bit in (0x40, 0x80) else "        "
            L.append("%s%s: %s" % (ind, name.ljust(34 - len(ind) + 8), "Active" if s["reasons"] & bit else "Not Active"))
        L += ["    FB Memory Usage",
              "        Total                             : %d MiB" % fl.m["mem"],
              "        Used                              : %d MiB" % (int(fl.m["mem"] * 0.93) if s["busy"] else 0),
              "    Utilization",
              "        Gpu                               : %d %%" % s["util"],
              "    ECC Errors",
              "        Volatile",
              "            SRAM Correctable              : 0",
              "            SRAM Uncorrectable            : 0",
              "            DRAM Correctable              : %d" % s["sbe_n"],
              "            DRAM Uncorrectable            : %d" % s["dbe"],
              "        Aggregate",
              "            SRAM Correctable              : 0",
              "            SRAM Uncorrectable            : 0",
              "            DRAM Correctable              : %d" % (s["sbe_n"] + s.get("sbe_agg_extra", 0)),
              "            DRAM Uncorrectable            : %d" % s["dbe"],
              "    Remapped Rows",
              "        Correctable Error                 : %d" % s["remap"]["corrected"],
              "        Uncorrectable Error               : %d" % s["remap"]["uncorrected"],
              "        Pending                           : %s" % ("Yes" if s["remap"]["pending"] else "No"),
              "        Remapping Failure Occurred        : %s" % ("Yes" if s["remap"]["failure"] else "No"),
              "    Temperature",
              "        GPU Current Temp                  : %d C" % s["temp"],
              "        GPU Shutdown Temp                 : 92 C",
              "        GPU Slowdown Temp                 : 89 C",
              "        GPU Max Operating Temp            : 87 C"]
        if fl.old_driver:
            L += ["    Power Readings",
                  "        Power Management                  : Supported",
                  "        Power Draw                        : %.2f W" % s["pw"],
                  "        Power Limit                       : %.2f W" % s["lim"],
                  "        Default Power Limit               : %.2f W" % fl.m["limit"],
                  "        Enforced Power Limit              : %.2f W" % s["lim"]]
        else:
            L += ["    GPU Power Readings",
                  "        Power Draw                        : %.2f W" % s["pw"],
                  "        Current Power Limit               : %.2f W" % s["lim"],
                  "        Requested Power Limit             : %.2f W" % s["lim"],
                  "        Default Power Limit               : %.2f W" % fl.m["limit"]]
        L += ["    Clocks",
              "        Graphics                          : %d MHz" % s["clk"],
              "        SM                                : %d MHz" % s["clk"],
              "        Memory                            : %d MHz" % fl.m["memclk"],
              "    Max Clocks",
              "        Graphics                          : %d MHz" % fl.m["maxclk"],
              "        SM                                : %d MHz" % fl.m["maxclk"],
              "        Memory                            : %d MHz" % fl.m["memclk"], ""]
    return "\n".join(L) + "\n"


def nvml_json(c, h, st, events):
    devs = []
    for g in h["gpus"]:
        s = st[g["index"]]
        d = {"index": g["index"], "uuid": g["uuid"], "pci_bus_id": g["pci_bus_id"], "name": c.fl.m["name"]}
        if s["lost"]:
            d["error"] = "GPU is lost"
        else:
            d.update({"nvmlDeviceGetCurrPcieLinkGeneration": s["gen"], "nvmlDeviceGetMaxPcieLinkGeneration": s["maxgen"],
                      "nvmlDeviceGetCurrPcieLinkWidth": s["width"], "nvmlDeviceGetMaxPcieLinkWidth": s["maxwidth"],
                      "nvmlDeviceGetPcieReplayCounter": s["pcie_replay_n"], "nvmlDeviceGetTemperature": s["temp"],
                      "nvmlDeviceGetPowerUsage": int(round(s["pw"] * 1000)), "nvmlDeviceGetEnforcedPowerLimit": s["lim"] * 1000,
                      "nvmlDeviceGetClockInfo": {"sm": s["clk"], "mem": c.fl.m["memclk"]},
                      "nvmlDeviceGetMaxClockInfo": {"sm": c.fl.m["maxclk"], "mem": c.fl.m["memclk"]},
                      ("nvmlDeviceGetCurrentClocksThrottleReasons" if c.fl.old_driver else "nvmlDeviceGetCurrentClocksEventReasons"): s["reasons"],
                      "nvmlDeviceGetTotalEccErrors": {"corrected_volatile": s["sbe_n"], "uncorrected_volatile": s["dbe"]},
                      "nvmlDeviceGetRemappedRows": dict(s["remap"])})
        devs.append(d)
    return {"driver_version": c.fl.driver, "devices": devs, "events": events}


def lspci(c, h, st, nst):
    L = []
    for g in h["gpus"]:
        s = st[g["index"]]
        if s["lost"]:
            L += ["%s:00.0 3D controller: NVIDIA Corporation Device %s (rev ff) (prog-if ff)" % (g["bus"], c.fl.m["dev"]),
                  "\t!!! Unknown header type 7f", ""]
            continue
        cs = "%sGT/s" % SPEED_OLD[s["maxgen"]]
        ns = "%sGT/s" % SPEED_OLD[s["gen"]]
        L += ["%s:00.0 3D controller: NVIDIA Corporation Device %s (rev a1)" % (g["bus"], c.fl.m["dev"]),
              "\tSubsystem: NVIDIA Corporation Device 16c1",
              "\tCapabilities: [60] Express (v2) Endpoint, MSI 00",
              "\t\tLnkCap:\tPort #0, Speed %s, Width x%d, ASPM L1, Exit Latency L1 <4us" % (cs, s["maxwidth"]),
              "\t\tLnkSta:\tSpeed %s (%s), Width x%d (%s)" % (ns, "ok" if s["gen"] == s["maxgen"] else "downgraded", s["width"],
                                                            "ok" if s["width"] == s["maxwidth"] else "downgraded"),
              "\t\t\tTrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-",
              "\tKernel driver in use: nvidia", ""]
    for n in h["nics"]:
        s = nst[n["ibdev"]]
        L += ["%s:00.0 %s controller: Mellanox Technologies MT2910 Family [ConnectX-7]" % (n["bus"], "Infiniband" if c.fl.ll == "InfiniBand" else "Ethernet"),
              "\tCapabilities: [60] Express (v2) Endpoint, MSI 00",
              "\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x%d, ASPM not supported" % s["maxwidth"],
              "\t\tLnkSta:\tSpeed %sGT/s (%s), Width x%d (%s)" % (SPEED_OLD[s["gen"]], "ok" if s["gen"] == s["maxgen"] else "downgraded",
                                                                s["width"], "ok" if s["width"] == s["maxwidth"] else "downgraded"),
              "\tKernel driver in use: mlx5_core", ""]
    return "\n".join(L)


def ibstat(c, h, nst):
    L = []
    for n in h["nics"]:
        s = nst[n["ibdev"]]
        L += ["CA '%s'" % n["ibdev"], "\tCA type: MT4129", "\tNumber of ports: 1", "\tFirmware version: 28.41.1000",
              "\tHardware version: 0", "\tPort 1:", "\t\tState: %s" % ("Active" if "ACTIVE" in s["state"] else "Down"),
              "\t\tPhysical state: %s" % s["phys"].split(": ")[1], "\t\tRate: %d" % s["rate"],
              "\t\tLink layer: %s" % c.fl.ll, ""]
    return "\n".join(L)


def ethtool_s(n, s, when):
    k = "_n" if when == "now" else "_b"
    dur = lambda cnt: cnt * 3  # each pause frame ~3 us of quanta at 400G
    rows = [("rx_packets_phy", s["pkts" + k]), ("tx_packets_phy", s["pkts" + k]),
            ("rx_bytes_phy", s["bytes" + k]), ("tx_bytes_phy", s["bytes" + k]),
            ("rx_crc_errors_phy", 0), ("rx_symbol_err_phy", s["sym" + k]), ("rx_discards_phy", s["disc" + k]),
            ("tx_discards_phy", 0), ("rx_out_of_buffer", s["oob" + k]), ("link_down_events_phy", s["down" + k]),
            ("rx_prio3_pause", s["rxp" + k]), ("rx_prio3_pause_duration", dur(s["rxp" + k])),
            ("tx_prio3_pause", s["txp" + k]), ("tx_prio3_pause_duration", dur(s["txp" + k])),
            ("tx_pause_storm_warning_events", s["storm"] if when == "now" else 0), ("tx_pause_storm_error_events", 0),
            ("outbound_pci_stalled_wr", s.get("stall" + k, 0))]
    return "NIC statistics:\n" + "".join("     %s: %d\n" % r for r in rows)
