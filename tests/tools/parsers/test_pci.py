import pytest
from forensic.sandbox.errors import ParseError
from forensic.tools.parsers import PciAddress, parse_pci_address
from hypothesis import given
from hypothesis import strategies as st


@pytest.mark.parametrize(
    "text",
    [
        "00000000:1B:00.0",  # NVML / nvidia-smi / DCGM
        "0000:1b:00.0",  # sysfs
        "1b:00.0",  # lspci
        "PCI:0000:1b:00",  # Xid tag, no function
        "0000:1b:00",  # very old Xid tag, no "PCI:"
        "busId 1b000",  # NCCL
        "  0000:1B:00.0\n",
    ],
)
def test_every_spelling_names_the_same_device(text):
    address = parse_pci_address(text)
    assert (address.domain, address.bus, address.device) == (0, 0x1B, 0)
    assert address.matches(PciAddress(bus=0x1B, device=0, function=0))
    assert address.sysfs_form() == "0000:1b:00.0"


def test_missing_function_matches_function_zero_only():
    tag = parse_pci_address("PCI:0000:9b:00")
    assert tag.function is None
    assert tag.matches(parse_pci_address("00000000:9B:00.0"))
    assert parse_pci_address("00000000:9B:00.0").matches(tag)
    assert not tag.matches(parse_pci_address("0000:9b:00.1"))
    assert not tag.matches(parse_pci_address("0000:9c:00.0"))
    assert not tag.matches(parse_pci_address("0001:9b:00.0"))


def test_real_tags_from_the_reference():
    assert parse_pci_address("PCI:0009:01:00") == PciAddress(domain=9, bus=1, device=0)  # GB200
    assert parse_pci_address("PCI:0000:10:1c") == PciAddress(bus=0x10, device=0x1C)  # A100, device 0x1c
    sxid = parse_pci_address("PCI:0000:04:00.0")
    assert sxid.function == 0
    assert parse_pci_address("busId 9b000").sysfs_form() == "0000:9b:00.0"


def test_forms_and_str():
    address = parse_pci_address("0000:b3:00.1")
    assert address.nvml_form() == "00000000:B3:00.1"
    assert str(address) == "0000:b3:00.1"
    assert parse_pci_address(address) is address
    assert hash(address) == hash(parse_pci_address("00000000:B3:00.1"))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "garbage",
        "0000:1b:00.8",
        "0000:1b:20.0",
        "0000:1g:00.0",
        "PCI:...",
        "1b",
        "0000:1b:00.0.0",
        "123456789:1b:00.0",
        "busId zz",
        "0000:1b:00.0" * 1000,
        "\x00\x00",
        "12345",
    ],
)
def test_garbage_raises_parse_error(text):
    with pytest.raises(ParseError):
        parse_pci_address(text)


def test_non_text_raises_parse_error():
    with pytest.raises(ParseError):
        parse_pci_address(0x1B000)  # type: ignore[arg-type]


@given(st.text(max_size=80))
def test_fuzz_only_parse_error(text):
    try:
        address = parse_pci_address(text)
    except ParseError:
        return
    assert parse_pci_address(address.sysfs_form()).matches(address)
