"""`lspci -vv` for the GPUs, their NICs and the PCIe switch ports above them."""

from __future__ import annotations

from ..fleet import Host
from ..sim import Scenario
from .sysfs import GEN_SPEED, _at

_LS = {2.5: "2.5GT/s", 5.0: "5GT/s", 8.0: "8GT/s", 16.0: "16GT/s", 32.0: "32GT/s"}


def _lnk(
    cap_speed: float, cap_width: int, cur_speed: float, cur_width: int, port: int, aspm: str
) -> list[str]:
    sp = "(ok)" if cur_speed >= cap_speed else "(downgraded)"
    wd = "(ok)" if cur_width >= cap_width else "(downgraded)"
    return [
        f"\t\tLnkCap:\tPort #{port}, Speed {_LS[cap_speed]}, Width x{cap_width}, {aspm}",
        "\t\t\tClockPM+ Surprise- LLActRep- BwNot- ASPMOptComp+",
        "\t\tLnkCtl:\tASPM Disabled; RCB 64 bytes, Disabled- CommClk-",
        "\t\t\tExtSynch- ClockPM- AutWidDis- BWInt- AutBWInt-",
        f"\t\tLnkSta:\tSpeed {_LS[cur_speed]} {sp}, Width x{cur_width} {wd}",
        "\t\t\tTrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-",
        f"\t\tLnkCap2: Supported Link Speeds: 2.5-{_LS[cap_speed]}, Crosslink- Retimer+ 2Retimers+ DRS-",
        f"\t\tLnkCtl2: Target Link Speed: {_LS[cap_speed]}, EnterCompliance- SpeedDis-",
    ]


def render(scn: Scenario, host: Host, t: float) -> str:
    blocks: list[str] = []
    eth = host.nics[0].link_layer == "Ethernet"
    for g, n in zip(host.gpus, host.nics, strict=True):
        gs = scn.gpu(host.name, g.index)
        ns = scn.nic(host.name, n.ibdev)
        # PCIe switch downstream port above the pair
        sw_bus = min(g.pci.bus, n.pci.bus) - 1
        blocks.append(
            "\n".join(
                [
                    f"{sw_bus:02x}:00.0 PCI bridge: Broadcom / LSI PEX890xx PCIe Gen 5 Switch (rev b0) (prog-if 00 [Normal decode])",
                    "\tControl: I/O+ Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr+ Stepping- SERR+ FastB2B- DisINTx+",
                    f"\tBus: primary={sw_bus - 1:02x}, secondary={sw_bus:02x}, subordinate={max(g.pci.bus, n.pci.bus):02x}, sec-latency=0",
                    "\tCapabilities: [68] Express (v2) Downstream Port (Slot+), MSI 00",
                    *_lnk(32.0, 16, 32.0, 16, 0, "ASPM L1, Exit Latency L1 <4us"),
                    "\tKernel driver in use: pcieport",
                ]
            )
        )
        if gs.lost(t):
            blocks.append(
                "\n".join(
                    [
                        f"{g.pci.lspci} 3D controller: NVIDIA Corporation Device 2330 (rev ff) (prog-if ff)",
                        "\t!!! Unknown header type 7f",
                        "\tKernel driver in use: nvidia",
                        "\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia",
                    ]
                )
            )
        else:
            cg = GEN_SPEED[int(gs.pcie_cur_gen.mean(t))]
            cw = int(gs.pcie_cur_width.mean(t))
            blocks.append(
                "\n".join(
                    [
                        f"{g.pci.lspci} 3D controller: NVIDIA Corporation Device 2330 (rev a1)",
                        "\tSubsystem: NVIDIA Corporation Device 16c1",
                        "\tPhysical Slot: " + str(g.index + 1),
                        "\tControl: I/O- Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr+ Stepping- SERR+ FastB2B- DisINTx+",
                        "\tStatus: Cap+ 66MHz- UDF- FastB2B- ParErr- DEVSEL=fast >TAbort- <TAbort- <MAbort- >SERR- <PERR- INTx-",
                        "\tLatency: 0",
                        f"\tInterrupt: pin A routed to IRQ {16 + g.index}",
                        f"\tNUMA node: {0 if g.index < 4 else 1}",
                        f"\tRegion 0: Memory at {0xA0000000 + g.index * 0x4000000:x} (32-bit, non-prefetchable) [size=16M]",
                        f"\tRegion 2: Memory at {0x21C000000000 + g.index * 0x4000000000:x} (64-bit, prefetchable) [size=128G]",
                        "\tCapabilities: [60] Express (v2) Endpoint, MSI 00",
                        "\t\tDevCap:\tMaxPayload 256 bytes, PhantFunc 0, Latency L0s unlimited, L1 <64us",
                        "\t\t\tExtTag+ AttnBtn- AttnInd- PwrInd- RBE+ FLReset+ SlotPowerLimit 0.000W",
                        "\t\tDevSta:\tCorrErr+ NonFatalErr- FatalErr- UnsupReq- AuxPwr- TransPend+",
                        *_lnk(
                            GEN_SPEED[gs.pcie_max_gen],
                            gs.pcie_max_width,
                            cg,
                            cw,
                            0,
                            "ASPM L1, Exit Latency L1 <4us",
                        ),
                        "\tCapabilities: [1b8 v2] Advanced Error Reporting",
                        "\t\tUESta:\tDLP- SDES- TLP- FCP- CmpltTO- CmpltAbrt- UnxCmplt- RxOF- MalfTLP- ECRC- UnsupReq- ACSViol-",
                        "\t\tCESta:\tRxErr- BadTLP- BadDLLP- Rollover- Timeout- AdvNonFatalErr-",
                        "\t\tCEMsk:\tRxErr+ BadTLP+ BadDLLP+ Rollover+ Timeout+ AdvNonFatalErr+",
                        "\tKernel driver in use: nvidia",
                        "\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia",
                    ]
                )
            )
        kind = "Ethernet controller" if eth else "Infiniband controller"
        blocks.append(
            "\n".join(
                [
                    f"{n.pci.lspci} {kind}: Mellanox Technologies MT2910 Family [ConnectX-7]",
                    "\tSubsystem: Mellanox Technologies Device 0051",
                    "\tControl: I/O- Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr+ Stepping- SERR+ FastB2B- DisINTx+",
                    f"\tNUMA node: {0 if n.index < 4 else 1}",
                    "\tCapabilities: [60] Express (v2) Endpoint, MSI 00",
                    "\t\tDevCap:\tMaxPayload 512 bytes, PhantFunc 0, Latency L0s unlimited, L1 unlimited",
                    *_lnk(
                        ns.pcie_max_speed,
                        ns.pcie_max_width,
                        _at(ns.pcie_cur_speed, t),
                        _at(ns.pcie_cur_width, t),
                        0,
                        "ASPM not supported",
                    ),
                    "\tCapabilities: [100 v1] Advanced Error Reporting",
                    "\t\tUESta:\tDLP- SDES- TLP- FCP- CmpltTO- CmpltAbrt- UnxCmplt- RxOF- MalfTLP- ECRC- UnsupReq- ACSViol-",
                    "\t\tCESta:\tRxErr- BadTLP- BadDLLP- Rollover- Timeout- AdvNonFatalErr-",
                    "\tKernel driver in use: mlx5_core",
                    "\tKernel modules: mlx5_core",
                ]
            )
        )
    return "\n\n".join(blocks) + "\n\n"
