from forensic.tools.parsers import PciAddress, is_thermal, parse_nvidia_smi_q
from hypothesis import given
from hypothesis import strategies as st

# Real fragments quoted in reference 8.2, assembled under one GPU heading, verbatim otherwise:
# Clocks Event Reasons (H100, NVIDIA/nccl#1453), ECC/Remapped Rows (A100 after XID 63, stas00),
# GPU Link Info (HAMi#332).
HEADER = """
==============NVSMI LOG==============

Timestamp                                 : Tue Mar 10 02:18:11 2026
Driver Version                            : 535.104.05
CUDA Version                              : 12.2

Attached GPUs                             : 1
GPU 00000000:10:1C.0
    Product Name                          : NVIDIA A100-SXM4-80GB
    GPU UUID                              : GPU-b6c3b2be-c55b-d076-fa0e-d464e4c7e08b
    Minor Number                          : 3
    GPU Reset Status
        Reset Required                    : No
        Drain and Reset Recommended       : No
    PCI
        Bus                               : 0x10
        Bus Id                            : 00000000:10:1C.0
"""
LINK_INFO = """        GPU Link Info
            PCIe Generation
                Max                       : 4
                Current                   : 4
                Device Current            : 4
                Device Max                : 4
                Host Max                  : N/A
            Link Width
                Max                       : 16x
                Current                   : 16x
        Replays Since Reset               : 0
        Replay Number Rollovers           : 0
        Tx Throughput                     : 16 KB/s
        Rx Throughput                     : 22 KB/s
"""
CLOCK_EVENTS = """    Performance State                     : P0
    Clocks Event Reasons
        Idle                              : Active
        Applications Clocks Setting       : Not Active
        SW Power Cap                      : Not Active
        HW Slowdown                       : Not Active
            HW Thermal Slowdown           : Not Active
            HW Power Brake Slowdown       : Not Active
        Sync Boost                        : Not Active
        SW Thermal Slowdown               : Not Active
        Display Clock Setting             : Not Active
    Sparse Operation Mode                 : Disabled
    FB Memory Usage
        Total                             : 81559 MiB
        Reserved                          : 565 MiB
"""
ECC = """    ECC Errors
        Volatile
            SRAM Correctable              : 0
            SRAM Uncorrectable            : 0
            DRAM Correctable              : 177
            DRAM Uncorrectable            : 0
        Aggregate
            SRAM Correctable              : 0
            SRAM Uncorrectable            : 0
            DRAM Correctable              : 177
            DRAM Uncorrectable            : 0
    Retired Pages
        Single Bit ECC                    : N/A
        Double Bit ECC                    : N/A
        Pending Page Blacklist            : N/A
    Remapped Rows
        Correctable Error                 : 1
        Uncorrectable Error               : 0
        Pending                           : Yes
        Remapping Failure Occurred        : No
        Bank Remap Availability Histogram
            Max                           : 639 bank(s)
            High                          : 1 bank(s)
            Partial                       : 0 bank(s)
            Low                           : 0 bank(s)
            None                          : 0 bank(s)
"""
READINGS = """    Temperature
        GPU Current Temp                  : 61 C
        GPU T.Limit Temp                  : 26 C
        GPU Shutdown Temp                 : 92 C
        GPU Slowdown Temp                 : 89 C
        GPU Max Operating Temp            : 87 C
        Memory Current Temp               : 70 C
    GPU Power Readings
        Power Draw                        : 512.00 W
        Current Power Limit               : 700.00 W
        Default Power Limit               : 700.00 W
    Clocks
        Graphics                          : 1980 MHz
        SM                                : 1980 MHz
        Memory                            : 2619 MHz
        Video                             : 1755 MHz
    Max Clocks
        Graphics                          : 1980 MHz
        SM                                : 1980 MHz
        Memory                            : 2619 MHz
        Video                             : 1755 MHz
"""
FULL = HEADER + LINK_INFO + CLOCK_EVENTS + ECC + READINGS


def test_real_fragments():
    [gpu] = parse_nvidia_smi_q(FULL)
    assert gpu.bus_id == "00000000:10:1C.0"
    assert gpu.pci == PciAddress(bus=0x10, device=0x1C, function=0)
    assert gpu.driver_version == "535.104.05" and gpu.cuda_version == "12.2"
    assert gpu.product_name == "NVIDIA A100-SXM4-80GB"
    assert gpu.uuid == "GPU-b6c3b2be-c55b-d076-fa0e-d464e4c7e08b"
    assert gpu.minor_number == 3
    assert gpu.reset_required is False and gpu.drain_and_reset_recommended is False
    assert (gpu.pcie_gen_max, gpu.pcie_gen_current) == (4, 4)
    assert (gpu.pcie_gen_device_max, gpu.pcie_gen_device_current) == (4, 4)
    assert gpu.pcie_gen_host_max is None  # N/A
    assert (gpu.link_width_max, gpu.link_width_current) == (16, 16)
    assert gpu.replays_since_reset == 0 and gpu.replay_number_rollovers == 0
    assert gpu.clock_event_reasons["gpu_idle"] is True
    assert gpu.clock_event_reasons["hw_thermal_slowdown"] is False
    assert len(gpu.clock_event_reasons) == 9
    assert gpu.clock_event_reasons_mask == 0x1
    assert gpu.ecc_volatile.dram_correctable == 177 and gpu.ecc_volatile.dram_uncorrectable == 0
    assert gpu.ecc_volatile.correctable_total == 177 and gpu.ecc_volatile.uncorrectable_total == 0
    assert gpu.ecc_aggregate.dram_correctable == 177 and gpu.ecc_aggregate.sram_uncorrectable == 0
    assert (
        gpu.retired_pages_sbe is None and gpu.retired_pages_dbe is None and gpu.retired_pages_pending is None
    )
    assert gpu.remapped_rows_correctable == 1 and gpu.remapped_rows_uncorrectable == 0
    assert gpu.remapped_rows_pending is True and gpu.remapped_rows_failure is False
    assert gpu.temp_gpu_c == 61 and gpu.temp_slowdown_c == 89 and gpu.temp_shutdown_c == 92
    assert gpu.temp_max_operating_c == 87 and gpu.temp_memory_c == 70
    assert gpu.power_draw_w == 512.0 and gpu.power_limit_w == 700.0
    assert (gpu.clock_graphics_mhz, gpu.clock_sm_mhz, gpu.clock_mem_mhz) == (1980, 1980, 2619)
    assert (gpu.max_clock_sm_mhz, gpu.max_clock_mem_mhz) == (1980, 2619)
    assert not gpu.lost and gpu.warnings == []


OLD_DRIVER = """
==============NVSMI LOG==============

Driver Version                            : 470.82.01
Attached GPUs                             : 2
GPU 00000000:3B:00.0
    Product Name                          : Tesla V100-SXM2-32GB
    PCI
        Bus Id                            : 00000000:3B:00.0
        GPU Link Info
            PCIe Generation
                Max                       : 3
                Current                   : 1
            Link Width
                Max                       : 16x
                Current                   : 8x
        Replays Since Reset               : 12
    Clocks Throttle Reasons
        Idle                              : Not Active
        Applications Clocks Setting       : Not Active
        SW Power Cap                      : Active
        HW Slowdown                       : Active
            HW Thermal Slowdown           : Active
            HW Power Brake Slowdown       : Not Active
        Sync Boost                        : Not Active
        SW Thermal Slowdown               : Active
        Display Clock Setting             : Not Active
    ECC Errors
        Volatile
            Single Bit
                Device Memory             : 5
                Register File             : 0
                L1 Cache                  : 0
                L2 Cache                  : 1
                Texture Memory            : N/A
                Texture Shared            : N/A
                CBU                       : N/A
                Total                     : 6
            Double Bit
                Device Memory             : 2
                Register File             : 0
                L1 Cache                  : 0
                L2 Cache                  : 0
                Texture Memory            : N/A
                Texture Shared            : N/A
                CBU                       : 0
                Total                     : 2
    Retired Pages
        Single Bit ECC                    : 3
        Double Bit ECC                    : 1
        Pending Page Blacklist            : Yes
    Temperature
        GPU Current Temp                  : 88 C
    Power Readings
        Power Management                  : Supported
        Power Draw                        : 299.51 W
        Power Limit                       : 300.00 W
        Enforced Power Limit              : 300.00 W

Unable to determine the device handle for GPU0000:91:00.0: Unknown Error
"""


def test_older_driver_layouts_and_lost_gpu():
    v100, lost = parse_nvidia_smi_q(OLD_DRIVER)
    assert v100.driver_version == "470.82.01"
    assert (v100.pcie_gen_max, v100.pcie_gen_current) == (3, 1)
    assert (v100.link_width_max, v100.link_width_current) == (16, 8)
    assert v100.pcie_gen_device_max is None
    assert v100.replays_since_reset == 12
    assert v100.clock_event_reasons["sw_power_cap"] and v100.clock_event_reasons["hw_thermal_slowdown"]
    assert v100.clock_event_reasons_mask == 0x4 | 0x8 | 0x40 | 0x20
    assert is_thermal(v100.clock_event_reasons_mask)
    assert v100.ecc_volatile.dram_correctable == 5 and v100.ecc_volatile.correctable_total == 6
    assert v100.ecc_volatile.dram_uncorrectable == 2 and v100.ecc_volatile.uncorrectable_total == 2
    assert v100.ecc_aggregate.correctable_total is None
    assert (v100.retired_pages_sbe, v100.retired_pages_dbe, v100.retired_pages_pending) == (3, 1, True)
    assert v100.temp_gpu_c == 88
    assert v100.power_draw_w == 299.51 and v100.power_limit_w == 300.0
    assert lost.lost and lost.lost_reason == "Unknown Error"
    assert lost.pci == PciAddress(bus=0x91, device=0, function=0)
    assert lost.product_name is None and lost.driver_version == "470.82.01"


def test_r550_split_sram_and_power_draw_names():
    text = """GPU 00000000:9B:00.0
    ECC Errors
        Volatile
            SRAM Correctable              : 2
            SRAM Uncorrectable Parity     : 1
            SRAM Uncorrectable SEC-DED    : 3
            DRAM Correctable              : 0
            DRAM Uncorrectable            : 0
    GPU Power Readings
        Average Power Draw                : 250.10 W
        Instantaneous Power Draw          : 260.20 W
        Current Power Limit               : 700.00 W
"""
    [gpu] = parse_nvidia_smi_q(text)
    assert gpu.ecc_volatile.sram_uncorrectable == 4 and gpu.ecc_volatile.uncorrectable_total == 4
    assert gpu.ecc_volatile.correctable_total == 2
    assert gpu.power_draw_w == 260.2


def test_gpu_is_lost_inside_a_block_and_other_lost_spelling():
    text = """GPU 00000000:18:00.0
    Product Name                          : NVIDIA H100 80GB HBM3
GPU 00000000:91:00.0
    GPU is lost
Unable to determine the device handle for GPU 0000:04:00.0: GPU is lost.  Reboot the system to recover this GPU
"""
    ok, lost_block, lost_line = parse_nvidia_smi_q(text)
    assert not ok.lost and ok.product_name == "NVIDIA H100 80GB HBM3"
    assert lost_block.lost and lost_block.bus_id == "00000000:91:00.0"
    assert lost_line.lost and lost_line.lost_reason.startswith("GPU is lost")
    assert lost_line.pci == PciAddress(bus=4, device=0, function=0)


def test_two_gpus_and_no_handle_for_a_listed_gpu():
    text = (
        FULL
        + FULL.replace("00000000:10:1C.0", "00000000:18:00.0").split("Attached GPUs", 1)[1].split("\n", 1)[1]
    )
    text += "Unable to determine the device handle for GPU0000:18:00.0: Unknown Error\n"
    first, second = parse_nvidia_smi_q(text)
    assert not first.lost and second.lost and second.bus_id == "00000000:18:00.0"
    assert second.temp_gpu_c == 61


def test_empty_truncated_binary():
    assert parse_nvidia_smi_q("") == []
    assert parse_nvidia_smi_q("No devices were found\n") == []
    assert parse_nvidia_smi_q("\x00\xff\ufffd :: \x00\n\t\t: :") == []
    truncated = FULL[: FULL.index("DRAM Correctable") + 20]
    [gpu] = parse_nvidia_smi_q(truncated)
    assert gpu.link_width_current == 16 and gpu.ecc_volatile.dram_correctable is None
    assert gpu.temp_gpu_c is None


def test_hostile_and_huge():
    hostile = (
        "GPU 00000000:10:1C.0\n"
        + "    Product Name "
        + " " * 60_000
        + "\n"  # no colon on a long line
        + " " * 30_000
        + "x" * 30_000
        + "\n"  # very deep indent
        + "    Temperature\n        GPU Current Temp : "
        + "9" * 50_000
        + " C\n"
        + "Unable to determine the device handle for GPU"
        + "0" * 60_000
        + "\n"
        + "x" * 2_000_000
        + "\n"
    )
    [gpu] = parse_nvidia_smi_q(hostile)
    assert gpu.temp_gpu_c is None
    staircase = "GPU 00000000:10:1C.0\n" + "".join(
        " " * i + "h\n" + " " * (i + 1) + "k : 1\n" for i in range(3_000)
    )
    [gpu] = parse_nvidia_smi_q(staircase)
    assert gpu.product_name is None
    blocks = [f"GPU 00000000:{i % 256:02X}:00.0\n    PCI\n" + LINK_INFO for i in range(3000)]
    huge = HEADER.split("GPU 0", 1)[0] + "".join(blocks)
    gpus = parse_nvidia_smi_q(huge)
    assert len(gpus) == 3000 and all(g.link_width_max == 16 for g in gpus)


@given(st.text(max_size=400))
def test_fuzz_never_raises(text):
    parse_nvidia_smi_q(text)
    parse_nvidia_smi_q("GPU 00000000:10:1C.0\n" + text)
