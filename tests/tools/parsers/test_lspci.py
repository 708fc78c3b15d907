from forensic.tools.parsers import PciAddress, parse_lspci_vv
from hypothesis import given
from hypothesis import strategies as st

# leptonai/gpud pkg/pci/testdata/lspci-vvv, H100 SXM block as quoted in reference 5.2 (tabs as lspci prints).
H100_BLOCK = """19:00.0 3D controller: NVIDIA Corporation Device 2330 (rev a1)
\tSubsystem: NVIDIA Corporation Device 16c1
\t...
\tCapabilities: [60] Express (v2) Endpoint, MSI 00
\t\tDevSta:\tCorrErr+ NonFatalErr- FatalErr- UnsupReq- AuxPwr- TransPend+
\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM L1, Exit Latency L1 <4us
\t\t\tClockPM+ Surprise- LLActRep- BwNot- ASPMOptComp+
\t\tLnkCtl:\tASPM Disabled; RCB 64 bytes, Disabled- CommClk-
\t\t\tExtSynch- ClockPM- AutWidDis- BWInt- AutBWInt-
\t\tLnkSta:\tSpeed 32GT/s (ok), Width x16 (ok)
\t\t\tTrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-
\t\tLnkCap2: Supported Link Speeds: 2.5-32GT/s, Crosslink- Retimer+ 2Retimers+ DRS-
\t\tLnkCtl2: Target Link Speed: 32GT/s, EnterCompliance- SpeedDis-
\t...
\tCapabilities: [1b8 v2] Advanced Error Reporting
\t\tUESta:\tDLP- SDES- TLP- FCP- CmpltTO- CmpltAbrt- UnxCmplt- RxOF- MalfTLP- ECRC- UnsupReq- ACSViol-
\t\tCESta:\tRxErr+ BadTLP+ BadDLLP- Rollover- Timeout+ AdvNonFatalErr-
\t\tCEMsk:\tRxErr+ BadTLP+ BadDLLP+ Rollover+ Timeout+ AdvNonFatalErr+
\tKernel driver in use: nvidia
\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia
"""

# The downgraded LnkCap/LnkSta pairs quoted from the same testdata file, in device blocks of their own.
DOWNGRADED = """00:1c.4 PCI bridge: Intel Corporation Device a33c (rev f0)
\t\tLnkCap:\tPort #12, Speed 8GT/s, Width x1, ASPM not supported
\t\tLnkSta:\tSpeed 5GT/s (downgraded), Width x1 (ok)
02:00.0 PCI bridge: ASPEED Technology, Inc. AST1150 PCI-to-PCI Bridge (rev 04)
\t\tLnkCap:\tPort #0, Speed 5GT/s, Width x2, ASPM L0s L1
\t\tLnkSta:\tSpeed 5GT/s (ok), Width x1 (downgraded)
1a:00.0 Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]
83:00.0 Bridge: NVIDIA Corporation Device 22a3 (rev a1)
"""

# A GPU that fell off the bus: config space reads all ones.
LOST = """0000:b3:00.0 3D controller: NVIDIA Corporation Device 2330 (rev ff) (prog-if ff)
\t!!! Unknown header type 7f
\tKernel driver in use: nvidia
"""


def test_real_h100_block():
    [gpu] = parse_lspci_vv(H100_BLOCK)
    assert gpu.address == PciAddress(bus=0x19, device=0, function=0)
    assert gpu.class_name == "3D controller"
    assert gpu.description == "3D controller: NVIDIA Corporation Device 2330"
    assert gpu.rev == "a1" and not gpu.lost
    assert gpu.driver == "nvidia"
    assert (gpu.lnkcap_speed_gts, gpu.lnkcap_width) == (32.0, 16)
    assert (gpu.lnksta_speed_gts, gpu.lnksta_width) == (32.0, 16)
    assert (gpu.lnksta_speed_status, gpu.lnksta_width_status) == ("ok", "ok")
    assert not gpu.downgraded
    assert gpu.correctable_errors == ["RxErr", "BadTLP", "Timeout"]
    assert gpu.uncorrectable_errors == []


def test_downgraded_speed_and_width():
    bridge, aspeed, nic, nvswitch = parse_lspci_vv(DOWNGRADED)
    assert (bridge.lnkcap_speed_gts, bridge.lnksta_speed_gts) == (8.0, 5.0)
    assert bridge.lnksta_speed_status == "downgraded" and bridge.lnksta_width_status == "ok"
    assert bridge.downgraded
    assert (aspeed.lnkcap_width, aspeed.lnksta_width) == (2, 1)
    assert aspeed.lnksta_width_status == "downgraded" and aspeed.downgraded
    assert nic.rev is None and nic.class_name == "Ethernet controller"
    assert nic.description.endswith("[ConnectX-7]")
    assert nic.lnksta_speed_gts is None and not nic.downgraded
    assert nvswitch.address.bus == 0x83 and nvswitch.class_name == "Bridge"


def test_lost_device():
    [gpu] = parse_lspci_vv(LOST)
    assert gpu.lost and gpu.rev == "ff"
    assert gpu.address.sysfs_form() == "0000:b3:00.0"
    assert gpu.lnksta_width is None and not gpu.downgraded
    [header_only] = parse_lspci_vv(
        "b3:00.0 3D controller: NVIDIA Corporation Device 2330\n\t!!! Unknown header type 7f\n"
    )
    assert header_only.lost and header_only.rev is None


def test_old_lspci_without_verdicts_and_odd_speeds():
    text = (
        "04:00.0 VGA compatible controller: NVIDIA Corporation GP102 (rev a1) (prog-if 00 [VGA controller])\n"
        "\t\tLnkCap:\tPort #0, Speed 8GT/s, Width x16, ASPM L0s L1\n"
        "\t\tLnkSta:\tSpeed 2.5GT/s, Width x8, TrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-\n"
        "05:00.0 Non-Volatile memory controller: Vendor (rev 01)\n"
        "\t\tLnkSta:\tSpeed unknown (downgraded), Width x63 (downgraded)\n"
    )
    gpu, nvme = parse_lspci_vv(text)
    assert gpu.rev == "a1" and gpu.description.endswith("(prog-if 00 [VGA controller])")
    assert (gpu.lnksta_speed_gts, gpu.lnksta_width) == (2.5, 8)
    assert gpu.lnksta_speed_status is None and gpu.downgraded  # from the numbers
    assert nvme.lnksta_speed_gts is None and nvme.lnksta_width is None  # unknown / all-ones width
    assert nvme.lnksta_speed_status == "downgraded"


def test_lnkcap2_and_lnksta2_do_not_overwrite():
    text = "19:00.0 X: Y\n\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16\n\t\tLnkCap2: Supported Link Speeds: 2.5-32GT/s\n"
    [dev] = parse_lspci_vv(text)
    assert dev.lnkcap_speed_gts == 16.0


def test_empty_truncated_binary_hostile():
    assert parse_lspci_vv("") == []
    assert parse_lspci_vv("\x00\x01\ufffd") == []
    truncated = H100_BLOCK[: H100_BLOCK.index("LnkSta:") + 14]
    [gpu] = parse_lspci_vv(truncated)
    assert gpu.lnkcap_speed_gts == 32.0 and gpu.lnksta_speed_gts is None
    hostile = (
        "19:00.0 " + "(rev " * 50_000 + "\n"
        "\tLnkSta:\t" + "Speed " * 100_000 + "\n"
        "\tLnkCap:\t" + "Width x" * 100_000 + "\n"
        "\tCESta:\t" + "A" * 50 + "+ " * 10_000 + "\n" + "1a:00.0 " + "x" * 2_000_000 + "\n"
    )
    devices = parse_lspci_vv(hostile + H100_BLOCK)
    assert devices[-1].lnksta_width == 16


def test_huge_input():
    text = (H100_BLOCK + DOWNGRADED) * 5_000
    devices = parse_lspci_vv(text)
    assert len(devices) == 25_000


@given(st.text(max_size=400))
def test_fuzz_never_raises(text):
    parse_lspci_vv(text)
    parse_lspci_vv("19:00.0 X: Y\n\t" + text)
