from datetime import UTC, datetime

import pytest
from forensic.tools.parsers import XID_CATALOG, PciAddress, parse_kernel_log, parse_pci_address, xid_info
from hypothesis import given
from hypothesis import strategies as st

BOOT = 1_776_000_000.0


def utc(*args: int) -> float:
    return datetime(*args, tzinfo=UTC).timestamp()


# --- real samples, verbatim from reference section 1.3 ------------------------------------------------

# leptonai/gpud components/accelerator/nvidia/sxid/README.md (H100 HGX)
XID79_BLOCK = """[6781741.548768] NVRM: GPU at PCI:0000:91:00: GPU-b6c3b2be-c55b-d076-fa0e-d464e4c7e08b
[6781741.548776] NVRM: GPU Board Serial Number: 1653723052734
[6781741.548779] NVRM: Xid (PCI:0000:91:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
[6781741.548783] NVRM: GPU 0000:91:00.0: GPU has fallen off the bus.
[6781741.548786] NVRM: GPU 0000:91:00.0: GPU serial number is 1653723052734.
[6781753.400584] nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 48 LTSSM Fault Up
[6781753.404587] nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 20034, Fatal, Link 63 LTSSM Fault Up
[6781753.404848] nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 20034, Severity 1 Engine instance 60 Sub-engine instance 00
[6781753.406566] nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 20034, Data {0x10000000, 0x10000000, 0x00000000, 0x10000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000}
"""

# NVIDIA/NVSentinel#155 (driver 570.158.01): multi-line, no Xid number.
MULTILINE_OFF = """[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0
               NVRM: (PCI ID: 10de:26b5) installed in this system has
               NVRM: fallen off the bus and is not responding to commands.
[ 1843.439662] NVRM: The NVIDIA probe routine failed for 1 device(s).
"""

# NVIDIA/gpu-operator#1146
XID48_64 = """Dec  2 11:38:47 worker4 kernel: [  219.470994] NVRM: Xid (PCI:0000:07:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x7fffa8860 partition 7, subpartition 1.
Dec  2 11:38:47 worker4 kernel: [  219.471050] NVRM: Xid (PCI:0000:07:00): 64, pid='<unknown>', name=<unknown>, Dynamic Page Retirement: Blacklisting failed.  Page should have been blacklisted on boot(0x00000000007fffa8).
Dec  2 11:38:46 worker4 kernel: [  218.250408] NVRM: GPU 0000:0a:00.0: RmInitAdapter failed! (0x24:0x72:1568)
Dec  2 11:38:46 worker4 kernel: [  218.250668] NVRM: GPU 0000:0a:00.0: rm_init_adapter failed, device minor number 5
"""

# stas00/ml-engineering
XID63 = """NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate.
May 19 07:08:57 ip-26-0-146-100 kernel: [680111.646286] NVRM: Xid (PCI:0000:10:1c): 63, pid=1850, Row Remapper: New row marked for remapping, reset gpu to activate
"""

# leptonai/gpud#46 (H100)
XID13_109 = """[Fri Aug 30 11:11:22 2024] nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid context, skipping further processing
[Fri Aug 30 11:43:09 2024] NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception on (GPC 7, TPC 7, SM 0): Illegal Instruction Parameter
[Fri Aug 30 11:43:09 2024] NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Global Exception on (GPC 7, TPC 7, SM 0): Multiple Warp Errors
[Fri Aug 30 11:43:09 2024] NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, Graphics Exception: ESR 0x57c730=0xc04000b 0x57c734=0x24 0x57c728=0x1f81fb60 0x57c72c=0x1174
[Fri Aug 30 11:43:14 2024] NVRM: Xid (PCI:0000:cb:00): 109, pid=1797828, name=pt_main_thread, Ch 00000008, errorString CTX SWITCH TIMEOUT, Info 0x58005
"""

OTHER_XIDS = """[  365.969681] NVRM: Xid (PCI:0000:01:00): 31, pid=13705, name=UnrealEditor, channel 0x0000000c, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC2 GPCCLIENT_PROP_0 faulted @ 0x0_00000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ
NVRM: Xid (PCI:0000:01:00): 31, Ch 0000005a, intr 10000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_1 faulted @ 0x0_00000000. Fault is of type FAULT_PDE ACCESS_TYPE_READ
NVRM: Xid (PCI:0000:01:00): 43, Ch 00000020, engmask 00000101
[155044.078590] NVRM: Xid (PCI:0000:06:00): 79, GPU has fallen off the bus.
NVRM: Xid (PCI:0004:01:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
[…] NVRM: GPU at 0000:03:00: GPU-b850f46d-d5ea-c752-ddf3-c4453e44d3f7
[…] NVRM: Xid (0000:03:00): 14, Channel 00000001
"""

# NVIDIA/open-gpu-kernel-modules#1150 and leptonai/gpud#117
XID45 = """kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous Xid 149
kernel: NVRM: Xid (PCI:0000:ed:00): 45, pid=1818992, name=python3, Ch 0000000c caused by previous Xid 145
kernel: NVRM: Xid (PCI:0000:ba:00): 45, pid=1818989, name=python3, Ch 00000002 caused by previous Xid 145
[Sat Oct 12 18:35:32 2024] NVRM: Xid (PCI:0000:61:00): 45, pid=1496200, name=distprovers-gpu, Ch 0000000a
[Sat Oct 12 18:38:44 2024] INFO: task cache_mgr_event:620917 blocked for more than 120 seconds.
[Sat Oct 12 18:38:44 2024] task:cache_mgr_event state:D stack:    0 pid:620917 ppid:620571 flags:0x00000002
"""

NVLINK = """[449410.332316] NVRM: Xid (PCI:0003:00:00): 74, pid='<unknown>', name=<unknown>, NVLink: fatal error detected on link 14(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)
kernel: NVRM: Xid (PCI:0000:c1:00): 74, pid='<unknown>', name=<unknown>, NVLink: fatal error detected on link 1
[171167.620236] NVRM: Xid (PCI:0009:01:00): 149, NETIR_LINK_EVT  Fatal   XC0 i0 Link 01 (0x021425c6 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)
[171167.621162] NVRM: Xid (PCI:0009:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x4 (Drain and Reset)
[171167.897562] NVRM: Xid (PCI:0019:01:00): 154, GPU recovery action changed from 0x4 (Drain and Reset) to 0x1 (GPU Reset Required)
NVRM: Xid (PCI:0018:01:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0409a0c2 0x00000008 0x00000001 0x00000000 0x00100000 0x00000004)
NVRM: Xid (PCI:0000:5f:00): 145, RLW_REMAP Nonfatal XC0 i0 Link 02
kernel: NVRM: Xid (PCI:...): 137, RLW_RXPIPE interrupt hit on link 11 on GPU0: PRIV Error
"""

# leptonai/gpud xid/testdata/dmesg-with-xid-119.log (H100, Dell XE9680)
XID119 = """[Sun Feb 23 16:24:18 2025] NVRM: GPU at PCI:0000:9b:00: GPU-509665ad-b600-ac93-3616-d754b23d636d
[Sun Feb 23 16:24:18 2025] NVRM: GPU Board Serial Number: 1650124014249
[Sun Feb 23 16:24:18 2025] NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi, Timeout after 6s of waiting for RPC response from GPU4 GSP! Expected function 103 (GSP_RM_ALLOC) (0x2081 0x4).
[Sun Feb 23 16:24:18 2025] NVRM: GPU4 GSP RPC buffer contains function 103 (GSP_RM_ALLOC) and data 0x0000000000002081 0x0000000000000004.
[Sun Feb 23 16:24:18 2025] NVRM: GPU4 RPC history (CPU -> GSP):
[Sun Feb 23 16:24:24 2025] NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi, Timeout after 6s of waiting for RPC response from GPU4 GSP! Expected function 10 (FREE) (0xa55a0210 0x0).
[Sun Feb 23 16:24:36 2025] NVRM: Rate limiting GSP RPC error prints for GPU at PCI:0000:9b:00 (printing 1 of every 30).  The GPU likely needs to be reset.
[Sun Feb 23 16:30:13 2025] NVRM: Xid (PCI:0000:9b:00): 119, pid=1240590, name=gpud, Timeout after 6s of waiting for RPC response from GPU4 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20803032 0x58c).
"""

# Source-consistent SYNTHETIC line (no real public paste of Xid 95 exists; reference 1.3 says so).
XID95_SYNTHETIC = "NVRM: Xid (PCI:0000:1b:00): 95, pid=7062, name=python3, Uncontained: LTC TAG (0x2, 0x0). RST: Yes, D-RST: No\n"

# NVIDIA/nvtrust#124
SXID = """[   38.175561] nvidia-nvswitch3: SXid (PCI:0000:04:00.0): 22013, Data {0x0000002b, 0x0000002b, 0x00000000, 0x0000002b, 0x80005302, 0x00000000, 0x00000000, 0x00000000, 0x00000000}
[   38.178720] nvidia-nvswitch3: SXid (PCI:0000:04:00.0): 22013, Non-fatal, Link 44 Minion Link DLREQ interrupt
[   38.180708] nvidia-nvswitch3: SXid (PCI:0000:04:00.0): 22013, Severity 0 Engine instance 44 Sub-engine instance 00
"""

# pop-os/pop#3363
AER = """Sep 19 16:18:04 bubz kernel: [68185.875052] pcieport 0000:00:03.1: AER: Multiple Correctable error message received from 0000:00:00.0
Sep 19 16:18:04 bubz kernel: [68185.875295] nvidia 0000:07:00.0: PCIe Bus Error: severity=Correctable, type=Data Link Layer, (Transmitter ID)
Sep 19 16:18:04 bubz kernel: [68185.875301] nvidia 0000:07:00.0:   device [10de:2184] error status/mask=00001000/0000a000
Sep 19 16:18:04 bubz kernel: [68185.875308] nvidia 0000:07:00.0:    [12] Timeout
"""

# stas00 debug.md (real H100 node)
BANDWIDTH = "[   10.735323] pci 0000:04:00.0: 252.048 Gb/s available PCIe bandwidth, limited by 16.0 GT/s PCIe x16 link at 0000:01:00.0 (capable of 504.112 Gb/s with 32.0 GT/s PCIe x16 link)\n"

# leptonai/gpud#1209 and gpud matcher fixtures
MLX5 = """Feb 14 05:03:41 000-000-00000-1-gpu-1 kernel: mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link INIT
Feb 14 05:03:41 000-000-00000-1-gpu-1 kernel: mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link ACTIVE
Feb 14 05:03:41 000-000-00000-1-gpu-1 kernel: workqueue: ib_cache_event_task [ib_core] hogged CPU for >10000us 4 times, consider switching to WQ_UNBOUND
ny2g1r12hh2 kernel: mlx5_core 0000:5c:00.0: mlx5_pcie_event:299:(pid 268269): Detected insufficient power on the PCIe slot (27W).
mlx5_port_module_event:1131:(pid 0): Port module event[error]: module 0, Cable error, High Temperature
mlx5_core 0000:d2:00.0: mlx5_cmd_out_err:838:(pid 268269): ACCESS_REG(0x805) op_mod(0x1) failed, status bad resource(0x5), syndrome (0x305684), err(-22)
[Thu Sep 19 02:29:46 2024] nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid context, skipping further processing
"""


# --- XID forms --------------------------------------------------------------------------------------


def test_xid79_block_with_boot_time():
    log = parse_kernel_log(XID79_BLOCK, boot_unix=BOOT)
    assert [e.kind for e in log.events] == ["xid", "fell_off_bus", "sxid", "sxid", "sxid", "sxid"]
    xid, off = log.events[0], log.events[1]
    assert xid.xid == 79 and xid.category == "fell_off_bus"
    assert xid.mnemonic == "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS"
    assert xid.pci == PciAddress(bus=0x91, device=0) and xid.pci.function is None
    assert xid.pid is None and xid.process is None
    assert xid.message == "GPU has fallen off the bus."
    assert xid.line_no == 3
    assert xid.uptime_s == pytest.approx(6781741.548779)
    assert xid.time_unix == pytest.approx(BOOT + 6781741.548779)
    assert off.pci == parse_pci_address("0000:91:00.0") and off.pci.matches(xid.pci)
    assert off.xid is None
    assert log.line_count == 9


def test_sxid_lines():
    log = parse_kernel_log(XID79_BLOCK + SXID)
    sxids = log.of_kind("sxid")
    assert [e.sxid for e in sxids] == [20034] * 4 + [22013] * 3
    first = sxids[0]
    assert first.switch == "nvidia-nvswitch1" and first.severity == "Fatal" and first.link == 48
    assert first.pci == parse_pci_address("0000:06:00.0") and not first.detail
    assert sxids[2].detail and sxids[2].severity is None  # "Severity 1 Engine instance 60 ..."
    assert sxids[3].detail and sxids[3].message.startswith("Data {")
    nonfatal = sxids[5]
    assert nonfatal.severity == "Non-fatal" and nonfatal.link == 44 and nonfatal.switch == "nvidia-nvswitch3"
    assert first.time_unix is None and first.uptime_s == pytest.approx(6781753.400584)


def test_multiline_fell_off_bus():
    log = parse_kernel_log(MULTILINE_OFF, boot_unix=BOOT)
    [event] = log.events
    assert event.kind == "fell_off_bus"
    assert event.pci == parse_pci_address("0000:b3:00.0")
    assert event.line_no == 1
    assert event.time_unix == pytest.approx(BOOT + 1843.308145)
    assert "not responding to commands" in event.message
    assert event.raw.count("\n") == 2


def test_multiline_fell_off_bus_in_journal_form():
    text = (
        "Mar 10 02:18:11 gpu-a017 kernel: NVRM: The NVIDIA GPU 0000:b3:00.0\n"
        "Mar 10 02:18:11 gpu-a017 kernel: NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
        "Mar 10 02:18:11 gpu-a017 kernel: NVRM: fallen off the bus and is not responding to commands.\n"
    )
    [event] = parse_kernel_log(text, year=2026).events
    assert event.kind == "fell_off_bus" and event.time_unix == utc(2026, 3, 10, 2, 18, 11)
    single = "NVRM: The NVIDIA GPU 0000:b3:00.0 (PCI ID: 10de:26b5) installed in this system has fallen off the bus and is not responding to commands.\n"
    [event] = parse_kernel_log(single).events
    assert event.kind == "fell_off_bus" and event.pci.bus == 0xB3


def test_the_nvidia_gpu_without_fallen_off_is_not_an_event():
    text = "NVRM: The NVIDIA GPU 0000:b3:00.0\nNVRM: (PCI ID: 10de:26b5) installed in this system is\nNVRM: not supported by the NVIDIA 570.158.01 driver release.\n"
    assert parse_kernel_log(text).events == []


def test_syslog_with_embedded_dmesg_stamp():
    log = parse_kernel_log(XID48_64, year=2025, boot_unix=BOOT)
    dbe, retire = log.events
    assert dbe.xid == 48 and dbe.category == "memory" and dbe.pci == PciAddress(bus=7, device=0)
    assert dbe.message.startswith("An uncorrectable double bit error (DBE)")
    assert dbe.time_unix == utc(2025, 12, 2, 11, 38, 47)  # the syslog wall time wins
    assert dbe.uptime_s == pytest.approx(219.470994)
    assert retire.xid == 64 and "Blacklisting failed.  Page" in retire.message  # two spaces kept
    assert log.warnings == []


def test_syslog_without_year_falls_back_to_boot_or_nothing():
    log = parse_kernel_log(XID48_64, boot_unix=BOOT)
    assert log.events[0].time_unix == pytest.approx(BOOT + 219.470994)
    assert any("year" in w for w in log.warnings)
    log = parse_kernel_log(MLX5)
    assert all(e.time_unix is None for e in log.events)


def test_xid63_forms():
    first, second = parse_kernel_log(XID63, year=2023).events
    assert first.xid == second.xid == 63
    assert first.pid == 1896 and first.process is None
    assert first.pci == PciAddress(bus=0x10, device=0x1C)
    assert first.message == "Row Remapper: New row marked for remapping, reset gpu to activate."
    assert first.time_unix is None and first.uptime_s is None
    assert second.pid == 1850 and second.time_unix == utc(2023, 5, 19, 7, 8, 57)


def test_dmesg_ctime_xid13_and_109():
    log = parse_kernel_log(XID13_109)
    assert [e.xid for e in log.events] == [13, 13, 13, 109]
    assert log.events[0].time_unix == utc(2024, 8, 30, 11, 43, 9)
    assert log.events[0].category == "app"
    assert "Illegal Instruction Parameter" in log.events[0].message
    ctxsw = log.events[3]
    assert ctxsw.pid == 1797828 and ctxsw.process == "pt_main_thread"
    assert ctxsw.message == "Ch 00000008, errorString CTX SWITCH TIMEOUT, Info 0x58005"
    assert ctxsw.time_unix == utc(2024, 8, 30, 11, 43, 14)
    assert ctxsw.uptime_s is None


def test_other_xid_forms():
    log = parse_kernel_log(OTHER_XIDS)
    mmu, mmu_old, x43, x79_old, x79_arm, x14 = log.events
    assert mmu.xid == 31 and mmu.pid == 13705 and mmu.process == "UnrealEditor"
    assert mmu.message.startswith("channel 0x0000000c")
    assert mmu_old.xid == 31 and mmu_old.pid is None and mmu_old.message.startswith("Ch 0000005a")
    assert x43.xid == 43 and x43.message == "Ch 00000020, engmask 00000101"
    assert x79_old.xid == 79 and x79_old.uptime_s == pytest.approx(155044.07859)
    assert x79_arm.pci == PciAddress(domain=4, bus=1, device=0)
    assert x14.xid == 14 and x14.pci == PciAddress(bus=3, device=0)  # "(0000:03:00)" without PCI:
    assert x14.mnemonic == "UNKNOWN" and x14.category == "other"


def test_xid45_cascade():
    log = parse_kernel_log(XID45)
    assert [e.caused_by_xid for e in log.events] == [149, 145, 145, None]
    assert all(e.xid == 45 and e.process in ("python3", "distprovers-gpu") for e in log.events)
    assert log.events[3].time_unix == utc(2024, 10, 12, 18, 35, 32)


def test_nvlink_xids():
    log = parse_kernel_log(NVLINK, boot_unix=BOOT)
    x74, x74_short, x149, x154a, x154b, x145, x145_trunc, x137 = log.events
    assert x74.category == "nvlink" and x74.link == 14 and x74.severity == "Fatal"
    assert x74.pci == PciAddress(domain=3, bus=0, device=0)
    assert x74_short.link == 1 and x74_short.severity == "Fatal"
    assert x149.nvlink_error == "NETIR_LINK_EVT" and x149.severity == "Fatal" and x149.link == 1
    assert x149.pci == PciAddress(domain=9, bus=1, device=0)
    assert x154a.category == "info" and x154a.recovery_action == "Drain and Reset"
    assert x154b.recovery_action == "GPU Reset Required" and x154b.pci.domain == 0x19
    assert x145.nvlink_error == "RLW_RXPIPE" and x145.severity == "Nonfatal" and x145.link == 13
    assert x145_trunc.nvlink_error == "RLW_REMAP" and x145_trunc.link == 2
    assert x137.xid == 137 and x137.pci is None  # the reporter redacted the address: "PCI:..."
    assert x137.nvlink_error == "RLW_RXPIPE" and x137.link == 11


def test_xid119_gsp():
    log = parse_kernel_log(XID119)
    assert [e.xid for e in log.events] == [119, 119, 119]
    assert {e.category for e in log.events} == {"gsp"}
    assert log.events[2].process == "gpud" and log.events[2].time_unix == utc(2025, 2, 23, 16, 30, 13)


def test_xid95_synthetic_contained_flag():
    [event] = parse_kernel_log(XID95_SYNTHETIC).events
    assert event.xid == 95 and event.severity == "Uncontained" and event.category == "memory"


# --- prefixes ---------------------------------------------------------------------------------------

BODY = "NVRM: Xid (PCI:0000:9b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."


@pytest.mark.parametrize(
    ("line", "time_unix", "uptime_s"),
    [
        (f"[ 5821.004113] {BODY}", BOOT + 5821.004113, 5821.004113),
        (f"[  130.456250] [ T1946] {BODY}", BOOT + 130.45625, 130.45625),
        (f"[  130.456250] [    C3] {BODY}", BOOT + 130.45625, 130.45625),
        (f"[Tue Mar 10 02:18:11 2026] {BODY}", utc(2026, 3, 10, 2, 18, 11), None),
        (f"[Mon Mar  2 02:18:11 2026] {BODY}", utc(2026, 3, 2, 2, 18, 11), None),
        (f"Mar 10 02:18:11 gpu-a017 kernel: {BODY}", utc(2026, 3, 10, 2, 18, 11), None),
        (f"Feb 14 05:03:41 000-000-00000-1-gpu-1 kernel: {BODY}", utc(2026, 2, 14, 5, 3, 41), None),
        (
            f"Mar 10 02:18:11.250000 gpu1018.dc3.internal kernel: {BODY}",
            utc(2026, 3, 10, 2, 18, 11) + 0.25,
            None,
        ),
        (f"Mar 10 02:18:11 gpu-a017 kernel: [ 5821.004113] {BODY}", utc(2026, 3, 10, 2, 18, 11), 5821.004113),
        (
            f"2026-03-10T02:18:11.500000+00:00 gpu-a017 kernel: {BODY}",
            utc(2026, 3, 10, 2, 18, 11) + 0.5,
            None,
        ),
        (f"2026-03-10T04:18:11,000000+0200 {BODY}", utc(2026, 3, 10, 2, 18, 11), None),
        (f"[ 5821.004113] gpu-a017 kernel: {BODY}", BOOT + 5821.004113, 5821.004113),
        (f"kernel: {BODY}", None, None),
        (f"kernel: [ 5821.004113] {BODY}", BOOT + 5821.004113, 5821.004113),
        (f"gpu-a017 kernel: {BODY}", None, None),
        (f"6,3973,227986636,-;{BODY}", BOOT + 227.986636, 227.986636),
        (f"6,3973,227986636,-,caller=T1;{BODY}", BOOT + 227.986636, 227.986636),
        (BODY, None, None),
        (f"    {BODY}", None, None),
    ],
)
def test_every_prefix(line, time_unix, uptime_s):
    [event] = parse_kernel_log(line + "\n", boot_unix=BOOT, year=2026).events
    assert event.xid == 79 and event.pci == PciAddress(bus=0x9B, device=0)
    assert event.time_unix == pytest.approx(time_unix)
    assert event.uptime_s == pytest.approx(uptime_s)
    assert event.raw == line


def test_boot_relative_without_boot_keeps_uptime_only():
    [event] = parse_kernel_log(f"[ 5821.004113] {BODY}\n6,1,5000000,-;{BODY}\n").events[:1]
    assert event.time_unix is None and event.uptime_s == pytest.approx(5821.004113)
    kmsg = parse_kernel_log(f"6,1,5000000,-;{BODY}\n").events[0]
    assert kmsg.time_unix is None and kmsg.uptime_s == 5.0


def test_impossible_dates_have_no_time():
    text = f"[Tue Feb 30 02:18:11 2026] {BODY}\nFeb 31 02:18:11 h kernel: {BODY}\n"
    log = parse_kernel_log(text, year=2026)
    assert [e.time_unix for e in log.events] == [None, None]


# --- PCIe and mlx5 ----------------------------------------------------------------------------------


def test_aer_real_lines():
    log = parse_kernel_log(AER, year=2023)
    received, bus_error = log.events
    assert received.kind == "aer" and received.form == "received"
    assert received.reporter == parse_pci_address("0000:00:03.1")
    assert received.pci == parse_pci_address("0000:00:00.0")
    assert received.multiple and received.severity == "Correctable"
    assert bus_error.form == "bus_error" and bus_error.pci == parse_pci_address("0000:07:00.0")
    assert bus_error.severity == "Correctable" and bus_error.error_type == "Data Link Layer"
    assert bus_error.agent == "Transmitter ID"
    assert bus_error.error_bits == ["Timeout"]
    assert bus_error.time_unix == utc(2023, 9, 19, 16, 18, 4)


def test_aer_older_and_newer_kernels():
    text = (
        "[ 4.1] pcieport 0000:00:1c.0: AER: Multiple Corrected error received: id=00e5\n"
        "[ 4.2] pcieport 0000:00:1c.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, id=00e5(Receiver ID)\n"
        "[ 4.3] pcieport 0000:00:1c.0:   device [8086:a33c] error status/mask=00000001/00002000\n"
        "[ 4.4] pcieport 0000:00:1c.0:    [ 0] Receiver Error         (First)\n"
        "[ 5.0] pcieport 0000:00:01.0: AER: Uncorrected (Non-Fatal) error message received from 0000:01:00.0\n"
        "[ 5.1] nvidia 0000:01:00.0: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction Layer, (Requester ID)\n"
        "[ 5.2] nvidia 0000:01:00.0:    [14] CmpltTO                (First)\n"
        "[ 5.3] nvidia 0000:01:00.0:    [ 0] RxErr                  (First)\n"
    )
    old_received, old_error, received, error = parse_kernel_log(text).events
    assert old_received.pci == PciAddress(bus=0, device=0x1C, function=5)  # id=00e5 decoded
    assert old_error.severity == "Corrected" and old_error.agent == "Receiver ID"
    assert old_error.error_bits == ["Receiver Error"]
    assert received.severity == "Uncorrected (Non-Fatal)" and not received.multiple
    assert error.error_type == "Transaction Layer" and error.error_bits == ["CmpltTO", "RxErr"]


def test_bandwidth_limited():
    [event] = parse_kernel_log(BANDWIDTH, boot_unix=BOOT).events
    assert event.kind == "pcie_bandwidth_limited"
    assert event.pci == parse_pci_address("0000:04:00.0")
    assert event.available_gbps == 252.048 and event.capable_gbps == 504.112
    assert (event.limited_speed_gts, event.limited_width) == (16.0, 16)
    assert (event.capable_speed_gts, event.capable_width) == (32.0, 16)
    assert event.limiting_device == parse_pci_address("0000:01:00.0")
    flit = BANDWIDTH.replace("link)", "link), in Flit mode")
    assert parse_kernel_log(flit).events[0].capable_speed_gts == 32.0
    old = "pci 0000:04:00.0: 8.000 Gb/s available PCIe bandwidth, limited by 2.5 GT/s x4 link at 0000:00:1c.0 (capable of 63.008 Gb/s with 8 GT/s x8 link)\n"
    assert parse_kernel_log(old).events[0].limited_speed_gts == 2.5


def test_mlx5_lines():
    log = parse_kernel_log(MLX5, year=2026)
    init, active, power, module = log.events
    assert (
        init.kind == "mlx5_link" and init.ibdev == "mlx5_5" and init.port == 1 and init.link_state == "INIT"
    )
    assert init.pci == parse_pci_address("0000:ab:00.0")
    assert init.time_unix == utc(2026, 2, 14, 5, 3, 41)
    assert active.link_state == "ACTIVE"
    assert power.kind == "mlx5_power" and power.watts == 27 and power.pci == parse_pci_address("0000:5c:00.0")
    assert module.kind == "mlx5_module" and module.module == 0 and module.severity == "error"
    assert module.message == "Cable error, High Temperature" and module.pci is None


def test_mlx5_link_down_and_module_without_severity():
    text = (
        "[ 9.1] mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link DOWN\n"
        "[ 9.2] mlx5_core 0000:ab:00.0 ibp171s0: Link down\n"
        "[ 9.3] mlx5_core 0000:ab:00.0: Port module event: module 3, Cable unplugged\n"
        "[ 9.4] e1000e 0000:00:1f.6 eno1: Link down\n"
    )
    down, netdev, module = parse_kernel_log(text).events
    assert down.link_state == "DOWN"
    assert netdev.netdev == "ibp171s0" and netdev.ibdev is None and netdev.link_state == "DOWN"
    assert module.module == 3 and module.severity is None and module.message == "Cable unplugged"


# --- log API, catalog ---------------------------------------------------------------------------------


def test_for_device_and_of_kind():
    log = parse_kernel_log(XID79_BLOCK + AER + BANDWIDTH)
    about_91 = log.for_device("00000000:91:00.0")
    assert [e.kind for e in about_91] == ["xid", "fell_off_bus"]
    assert [e.kind for e in log.for_device("PCI:0000:07:00")] == ["sxid", "aer"]
    assert len(log.of_kind("aer", "pcie_bandwidth_limited")) == 3


def test_catalog():
    assert XID_CATALOG[79].category == "fell_off_bus"
    assert XID_CATALOG[48] == ("ROBUST_CHANNEL_GPU_ECC_DBE", "Double Bit ECC Error", "memory")
    assert XID_CATALOG[119].category == XID_CATALOG[120].category == "gsp"
    assert {XID_CATALOG[c].category for c in (74, 136, 137, 144, 145, 146, 147, 148, 149, 150, 155)} == {
        "nvlink"
    }
    assert XID_CATALOG[154].category == "info"
    assert XID_CATALOG[167].category == "pcie"
    assert XID_CATALOG[54].category == "thermal_power"
    assert XID_CATALOG[13].category == "app"
    assert len(XID_CATALOG) == 43  # every row of the reference table
    assert xid_info(9999).category == "other" and xid_info(9999).mnemonic == "UNKNOWN"


# --- robustness ---------------------------------------------------------------------------------------


def test_empty_and_binary():
    assert parse_kernel_log("").events == []
    binary = "\x00\x01\x02\ufffd\ufffd[\x00] NVRM: Xid (\x00): \n\x7fELF\x02\x01" * 100
    assert parse_kernel_log(binary).events == []


def test_truncated_lines():
    line = XID79_BLOCK.splitlines()[2]
    for cut in range(len(line)):
        parse_kernel_log(line[:cut])
    assert parse_kernel_log(line[: line.index("79,") + 2]).events[0].xid == 79
    truncated_multiline = MULTILINE_OFF.split("\n")[0] + "\n"
    assert parse_kernel_log(truncated_multiline).events == []


def test_lying_lines_are_not_events():
    text = (
        "NVRM: Xid (PCI:0000:9b:00): 99999999999, overflow\n"
        "NVRM: Xid (PCI:zzzz): 79, not an address\n"  # still an Xid 79, address unknown
        "[ 99999999999999999999.1] NVRM: Xid (PCI:0000:9b:00): 79, huge uptime\n"
        "[Tue Mar 10 02:18:11 0000] NVRM: Xid (PCI:0000:9b:00): 79, year zero\n"
        "nvidia 0000:07:00.0: PCIe Bus Error: severity=, type=\n"
        "mlx5_core 0000:ab:00.0 mlx5_5: Port: 99999 Link ACTIVE\n"
        "6,3973,99999999999999999999999,-;NVRM: Xid (PCI:0000:9b:00): 79, huge usec\n"
    )
    events = parse_kernel_log(text, boot_unix=BOOT).events
    assert [e.xid for e in events] == [79, 79, 79, 79]
    assert events[0].pci is None
    # Stamps that cannot be real give no time; the Xid in the line is still evidence.
    assert all(e.time_unix is None and e.uptime_s is None for e in events[1:])
    assert [e.message for e in events[1:]] == ["huge uptime", "year zero", "huge usec"]


def test_hostile_lines_finish():
    hostile = "\n".join(
        [
            "NVRM: Xid (" * 20_000,
            "NVRM: Xid (PCI:0000:9b:00): 79, pid=" + "1" * 40_000,
            "[" + " " * 60_000 + "1.0]",
            "Mar 10 02:18:11 " + "h" * 60_000 + " kernel: x",
            "nvidia 0000:07:00.0: AER: " + "Multiple " * 7_000 + "error received from 0000:01:00.0",
            "nvidia 0000:07:00.0:" + " [1]" * 15_000,
            "pci 0000:04:00.0: " + "1.1 Gb/s available PCIe bandwidth, limited by " * 1_200,
            "mlx5_core 0000:ab:00.0 " + "mlx5_5: Port: " * 4_000,
            "NVRM: The NVIDIA GPU 0000:b3:00.0 " + "fallen off " * 5_000,
            "x" * 1_000_000,
            "6," * 30_000,
            "2026-03-10T02:18:11" + " h" * 30_000,
            BODY,
        ]
    )
    log = parse_kernel_log(hostile)
    assert log.events[-1].xid == 79 and log.events[-1].message == "GPU has fallen off the bus."
    assert any("longer than" in w for w in log.warnings)
    assert all(len(e.raw) <= 512 for e in log.events)


def test_huge_log():
    noise = '[ 12.345678] audit: type=1400 audit(1700000000.123:42): apparmor="DENIED" operation="open"\n'
    text = (noise * 2_000 + XID79_BLOCK + AER + MLX5 + NVLINK) * 50  # about 10 MB
    assert len(text) > 9_000_000
    log = parse_kernel_log(text, boot_unix=BOOT, year=2026)
    assert len(log.of_kind("xid")) == 50 * 9
    assert len(log.of_kind("fell_off_bus")) == 50


@given(st.text(max_size=400))
def test_fuzz_never_raises(text):
    parse_kernel_log(text, boot_unix=BOOT, year=2026)
    parse_kernel_log("[ 1.0] NVRM: Xid (PCI:0000:9b:00): " + text)


@given(
    st.lists(st.sampled_from((XID79_BLOCK + MULTILINE_OFF + AER + MLX5 + NVLINK).splitlines()), max_size=30)
)
def test_fuzz_shuffled_real_lines(lines):
    log = parse_kernel_log("\n".join(lines), year=2026)
    assert all(e.line_no <= len(lines) for e in log.events)


def test_a_journal_line_from_last_december_is_dated_last_year():
    # Read on Jan 1 2026 at 00:40: the Dec 31 XID is twenty minutes old, not eleven months ahead,
    # and the Jan 1 one is this year's; a window that starts in 2025 must not date both 2025.
    read_at = utc(2026, 1, 1, 0, 40, 0)
    text = f"Dec 31 23:58:02 h1 kernel: {BODY}\nJan  1 00:05:10 h1 kernel: {BODY}\n"
    old, new = parse_kernel_log(text, year=2025, not_after=read_at).events
    assert old.time_unix == utc(2025, 12, 31, 23, 58, 2)
    assert new.time_unix == utc(2026, 1, 1, 0, 5, 10)
    # A line a day past the read (a fast clock) is still this year's; lines that print their year
    # are never moved; a read time no calendar holds is ignored.
    [ahead] = parse_kernel_log(f"Jan  2 00:30:00 h1 kernel: {BODY}\n", not_after=read_at).events
    assert ahead.time_unix == utc(2026, 1, 2, 0, 30, 0)
    [ctime] = parse_kernel_log(f"[Mon Dec 31 23:58:02 2029] {BODY}\n", not_after=read_at).events
    assert ctime.time_unix == utc(2029, 12, 31, 23, 58, 2)
    [odd] = parse_kernel_log(f"Dec 31 23:58:02 h1 kernel: {BODY}\n", year=2026, not_after=1e300).events
    assert odd.time_unix == utc(2026, 12, 31, 23, 58, 2)
