"""NCCL debug output (``NCCL_DEBUG=INFO``/``WARN``/``TRACE``) inside job logs.

Line shape (``src/debug.cc``, reference §6.1)::

    [timestamp] host:pid:tid [cudaDev] [time] [file:line [(func)]] NCCL INFO|WARN|TRACE message

Job launchers glue their own prefixes in front (``[default0]:``, ``[1,0]<stdout>:``, ``12: ``), the
redacted pastes drop the tid, and 2.2x WARNs start with a blank line. The prefix is therefore read
from the right, starting at ``NCCL <LEVEL>``, and anything left of the host token is ignored.

Beyond the line prefix this module pulls out the facts an investigation needs: the NCCL version,
which network and NICs were chosen, ``X set by environment to Y`` settings, per-channel transports,
rank placement from comm-init lines, IB completion errors in every format NCCL has printed (also
when PyTorch quotes them inside its own error text) and IB async events.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import pairwise
from typing import Literal, cast

from forensic.tools.parsers._text import BoundedWarnings, as_lines, numbered_lines
from pydantic import BaseModel, ConfigDict, PrivateAttr

from forensic.names import is_host_name

__all__ = [
    "AsyncEvent",
    "ChannelConnection",
    "ChannelDirection",
    "ChannelKind",
    "CommEvent",
    "CommInit",
    "CompletionError",
    "CompletionFormat",
    "EnvSetting",
    "NcclEntry",
    "NcclLevel",
    "NcclLog",
    "NcclVersion",
    "NetDevice",
    "NetSelection",
    "NetTransport",
    "NetworkUse",
    "RankPlacement",
    "nccl_bus_id_to_pci",
    "parse_nccl_log",
]

_MAX_LINE = 64 * 1024
#: Records of one kind kept per log (entries, channels, ...); later ones are dropped, so memory
#: stays bounded on logs of any size.
MAX_RECORDS = 10_000
_MAX_WARNINGS = 20
_MAX_MESSAGE = 4096

NcclLevel = Literal["INFO", "WARN", "TRACE", "ABORT"]
CompletionFormat = Literal[
    "error_no_peer", "peer_with_error", "peer_status", "peer_status_hca", "peer_status_named"
]
CommEvent = Literal["init_start", "init_complete", "destroy", "abort", "info"]
ChannelKind = Literal["NET", "P2P", "SHM", "COLLNET", "NVLS", "other"]
ChannelDirection = Literal["send", "receive"]
NetTransport = Literal["IB", "Socket"]

_CHANNEL_KINDS: dict[str, ChannelKind] = {
    "NET": "NET",
    "P2P": "P2P",
    "SHM": "SHM",
    "COLLNET": "COLLNET",
    "NVLS": "NVLS",
}
_LEVEL = re.compile(r"\bNCCL (INFO|WARN|TRACE|ABORT)\b ?")
_DEV = re.compile(r"\[([0-9]{1,4})\]")
_SOURCE = re.compile(r"[A-Za-z0-9_./-]{1,128}:[0-9]{1,6}")
_FLOAT = re.compile(r"[0-9]{1,12}\.[0-9]{1,12}")
_VERSION = re.compile(
    r"NCCL version ([0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3})(?:\+cuda([0-9]{1,3}\.[0-9]{1,3}))?(?![0-9.])"
)
_ENV = re.compile(r"([A-Z][A-Z0-9_]{1,63}) set by environment to (.{0,512})")
_NET_USING = re.compile(r"NET/(IB|Socket) ?: Using ")
_NET_DEVICE = re.compile(r"\[([0-9]{1,3})\]([^\s\[;]{1,256})")
_NETWORK = re.compile(r"(?:^|: )Using network (.{1,64})$")
_CHANNEL = re.compile(
    r"Channel ([0-9]{1,4})(?:/([0-9]{1,4}))? : ([0-9]{1,7})\[([0-9a-fA-F]{1,16})\] -> "
    r"([0-9]{1,7})\[([0-9a-fA-F]{1,16})\](?: \[(send|receive)\])? via (.{1,128})"
)
_ASYNC = re.compile(
    r"(?:([A-Za-z0-9_.+-]{1,64}:[0-9]{1,3}) )?"
    r"(Got async event|async (?:fatal |non-fatal )?event(?: on [A-Z]{2,3} \([^)]{0,32}\))?|port event) ?: ?(.{1,256})"
)
_STATUS_NAMED = re.compile(r"status=([A-Za-z_][A-Za-z0-9_ ]{0,63})\(([0-9]{1,4})\)")
_STATUS_NUM = re.compile(r"status=([0-9]{1,4})(?![0-9])")
_WITH_ERROR = re.compile(r"with error ([0-9]{1,4})(?![0-9])")
_OPCODE_NAMED = re.compile(r"opcode=([A-Za-z_][A-Za-z0-9_]{0,63})\(([0-9]{1,4})\)")
_OPCODE_NUM = re.compile(r"opcode[= ]([0-9]{1,4})(?![0-9])")
_LENGTH = re.compile(r"(?:len|reqSize)[= ]([0-9]{1,12})(?![0-9])")
_VENDOR = re.compile(r"vendor[ _]err[= ]([0-9]{1,10})(?![0-9])")
_DIRECTION = re.compile(r"\((Send|Recv)\)")
_LOCAL_GID = re.compile(r"localGid ([0-9A-Fa-f:.]{1,64})")
_REMOTE_GID = re.compile(r"remoteGids ?([0-9A-Fa-f:.]{1,64})")
_HCA = re.compile(r" hca ([A-Za-z0-9_.+-]{1,64})")

# ibv_wc_status and ibv_wc_opcode (rdma-core verbs.h), to name what older NCCLs print as numbers.
_WC_STATUS = (
    "IBV_WC_SUCCESS",
    "IBV_WC_LOC_LEN_ERR",
    "IBV_WC_LOC_QP_OP_ERR",
    "IBV_WC_LOC_EEC_OP_ERR",
    "IBV_WC_LOC_PROT_ERR",
    "IBV_WC_WR_FLUSH_ERR",
    "IBV_WC_MW_BIND_ERR",
    "IBV_WC_BAD_RESP_ERR",
    "IBV_WC_LOC_ACCESS_ERR",
    "IBV_WC_REM_INV_REQ_ERR",
    "IBV_WC_REM_ACCESS_ERR",
    "IBV_WC_REM_OP_ERR",
    "IBV_WC_RETRY_EXC_ERR",
    "IBV_WC_RNR_RETRY_EXC_ERR",
    "IBV_WC_LOC_RDD_VIOL_ERR",
    "IBV_WC_REM_INV_RD_REQ_ERR",
    "IBV_WC_REM_ABORT_ERR",
    "IBV_WC_INV_EECN_ERR",
    "IBV_WC_INV_EEC_STATE_ERR",
    "IBV_WC_FATAL_ERR",
    "IBV_WC_RESP_TIMEOUT_ERR",
    "IBV_WC_GENERAL_ERR",
    "IBV_WC_TM_ERR",
    "IBV_WC_TM_RNDV_INCOMPLETE",
)
_WC_OPCODE = {
    0: "IBV_WC_SEND",
    1: "IBV_WC_RDMA_WRITE",
    2: "IBV_WC_RDMA_READ",
    3: "IBV_WC_COMP_SWAP",
    4: "IBV_WC_FETCH_ADD",
    5: "IBV_WC_BIND_MW",
    6: "IBV_WC_LOCAL_INV",
    7: "IBV_WC_TSO",
    128: "IBV_WC_RECV",
    129: "IBV_WC_RECV_RDMA_WITH_IMM",
}


class _Model(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)


class _Located(_Model):
    line_no: int
    """1-based line in the log."""
    host: str | None = None
    """Host name from the NCCL prefix; None when the line had no prefix."""
    pid: int | None = None
    """Process id from the prefix (None when redacted or absent)."""
    cuda_dev: int | None = None
    """CUDA device index from ``[N]`` in the prefix."""


class NcclEntry(_Located):
    """One line with an NCCL prefix."""

    tid: int | None = None
    """Thread id from the prefix."""
    level: NcclLevel
    """Debug level word after ``NCCL``."""
    source: str | None = None
    """``file:line`` that WARN and TRACE lines carry, e.g. ``ib_plugin.c:1615``."""
    timestamp: str | None = None
    """Leading ``[...]`` timestamp (``NCCL_DEBUG_TIMESTAMP_FORMAT``), as printed."""
    message: str
    """Text after ``NCCL <LEVEL>`` (cut at 4 KiB)."""


class NcclVersion(_Located):
    """``NCCL version 2.21.5+cuda12.4``."""

    version: str
    """NCCL version, e.g. ``2.21.5``."""
    cuda: str | None = None
    """CUDA version it was built for, e.g. ``12.4``."""


class EnvSetting(_Located):
    """``NCCL_IB_TIMEOUT set by environment to 18.``"""

    name: str
    """Variable name."""
    value: str
    """Value as printed, without NCCL's trailing full stop."""


class NetDevice(_Model):
    """One NIC in a ``NET/... : Using`` line."""

    index: int
    """NCCL's device index (``[0]``)."""
    name: str
    """Device or interface name: ``mlx5_2``, ``irdma0``, ``eth0``."""
    port: int | None = None
    """IB port number (``mlx5_2:1``); None for sockets."""
    link: str | None = None
    """``IB`` or ``RoCE`` for NET/IB devices."""
    sharp: bool = False
    """The device offers SHARP in-network reductions (``/SHARP``)."""
    address: str | None = None
    """IP address of a socket interface (``eth0:10.0.0.1<0>``)."""


class NetSelection(_Located):
    """``NET/IB : Using [0]mlx5_2:1/IB/SHARP [RO]; OOB bond0:10.0.0.1<0>`` or ``NET/Socket : Using ...``."""

    transport: NetTransport
    """Which NCCL net transport printed the line."""
    devices: list[NetDevice]
    """NICs the transport will use, in printed order."""
    relaxed_ordering: bool = False
    """PCIe relaxed ordering enabled (``[RO]``)."""
    oob_interface: str | None = None
    """Interface of the out-of-band (bootstrap) socket."""
    oob_address: str | None = None
    """Address of the out-of-band socket."""


class NetworkUse(_Located):
    """``Using network IB`` / ``Using network Socket`` / a plugin's name."""

    name: str
    """Network name as printed."""


class ChannelConnection(_Located):
    """``Channel 01 : 2[c7000] -> 0[87000] [receive] via NET/IB/5/GDRDMA``."""

    channel: int
    """Channel index."""
    src_rank: int
    """Rank on the sending side."""
    dst_rank: int
    """Rank on the receiving side."""
    src_bus_id: str
    """Sending GPU's bus id as NCCL prints it (``c7000``)."""
    dst_bus_id: str
    """Receiving GPU's bus id."""
    direction: ChannelDirection | None = None
    """Side of a network connection this line describes; None for P2P/SHM."""
    via: str
    """Transport path as printed: ``NET/IB/5/GDRDMA``, ``NET/Socket/0``, ``P2P/IPC``, ``SHM/direct/direct``."""
    kind: ChannelKind
    """First part of ``via``."""


class CommInit(_Located):
    """``comm 0x... rank 36 nranks 64 cudaDev 4 nvmlDev 4 busId 9b000 commId 0x... - Init COMPLETE``."""

    comm: str
    """Communicator pointer, local to one process."""
    comm_id: str | None = None
    """Communicator id shared by all its ranks (NCCL >= 2.18); None on older versions."""
    rank: int
    """Rank within this communicator."""
    nranks: int
    """Communicator size."""
    cuda_device: int | None = None
    """``cudaDev`` of the rank."""
    nvml_device: int | None = None
    """``nvmlDev`` of the rank."""
    bus_id: str | None = None
    """GPU bus id as NCCL prints it (``9b000`` = ``0000:9b:00.0``)."""
    event: CommEvent
    """Which comm line this was."""


class RankPlacement(_Model):
    """Where one rank of a communicator ran."""

    host: str | None
    """Host from the NCCL prefix."""
    pid: int | None
    """Process id."""
    cuda_device: int | None
    """CUDA device index."""
    bus_id: str | None
    """Bus id as NCCL prints it."""
    line_no: int
    """Line that placed the rank."""

    @property
    def pci_address(self) -> str | None:
        """``bus_id`` as a sysfs-style address (``9b000`` -> ``0000:9b:00.0``)."""
        return nccl_bus_id_to_pci(self.bus_id) if self.bus_id else None


class CompletionError(_Located):
    """``NET/IB : Got completion from peer ...`` with a failed work-completion status.

    ``status`` 12 (``IBV_WC_RETRY_EXC_ERR``) is seen by the reporting rank; the faulty link can be
    anywhere on the path to ``peer``.
    """

    format: CompletionFormat
    """Which NCCL format printed it: ``error_no_peer`` (<= 2.7), ``peer_with_error`` (to 2.20),
    ``peer_status`` (2.21), ``peer_status_hca`` (2.23-2.29), ``peer_status_named`` (2.30)."""
    peer: str | None = None
    """Peer socket as printed, e.g. ``172.36.143.59<44206>``."""
    peer_ip: str | None = None
    """Peer IP address."""
    peer_port: int | None = None
    """Peer TCP port."""
    status: int | None = None
    """ibv_wc_status code."""
    status_name: str | None = None
    """Status name as printed (2.30) or looked up, e.g. ``IBV_WC_RETRY_EXC_ERR``."""
    opcode: int | None = None
    """ibv_wc_opcode code."""
    opcode_name: str | None = None
    """Opcode name as printed (2.30) or looked up."""
    length: int | None = None
    """``len`` / ``reqSize``."""
    vendor_err: int | None = None
    """Vendor syndrome."""
    direction: Literal["Send", "Recv"] | None = None
    """Request type in ``(Send)`` / ``(Recv)``."""
    local_gid: str | None = None
    """Local GID (RoCE)."""
    remote_gid: str | None = None
    """Remote GID (RoCE)."""
    hca: str | None = None
    """Local HCA that saw the completion (2.23+)."""


class AsyncEvent(_Located):
    """``NET/IB : mlx5_0:1 Got async event : local catastrophic error`` and newer ``async fatal event``."""

    device: str | None = None
    """``device:port`` when printed (NCCL >= 2.12)."""
    event: str
    """Event text from ibv_event_type_str, e.g. ``local catastrophic error``, ``port error``."""
    fatal: bool
    """NCCL called it fatal, or the event is a catastrophic error."""


class NcclLog(_Model):
    """Everything NCCL-related found in one log."""

    entries: list[NcclEntry]
    """Every line with an NCCL prefix."""
    versions: list[NcclVersion]
    """Every ``NCCL version`` line (ranks on different versions are a misconfiguration)."""
    env: list[EnvSetting]
    """Every ``X set by environment to Y`` line."""
    nets: list[NetSelection]
    """Every ``NET/IB : Using`` / ``NET/Socket : Using`` line."""
    networks: list[NetworkUse]
    """Every ``Using network X`` line."""
    channels: list[ChannelConnection]
    """Every channel connection line with its transport."""
    comms: list[CommInit]
    """Every comm line that names a rank and a size."""
    completion_errors: list[CompletionError]
    """IB completion errors, also those quoted inside PyTorch errors (the first ``MAX_RECORDS``;
    :meth:`completion_places` counts every one)."""
    async_events: list[AsyncEvent]
    """Every IB async event."""
    warnings: list[str]
    """What the parser skipped, and why."""

    _places: dict[str, int] = PrivateAttr(default_factory=dict)
    _completions_dropped: int = PrivateAttr(0)
    _records_dropped: int = PrivateAttr(0)

    def model_post_init(self, __context: object) -> None:
        for ce in self.completion_errors:
            self._count_place(ce)

    def _count_place(self, ce: CompletionError) -> None:
        where = f"{ce.host}/{ce.hca}" if ce.host and ce.hca else ce.host
        if where:
            self._places[where] = self._places.get(where, 0) + 1

    def _add_completion(self, ce: CompletionError) -> None:
        self._count_place(ce)
        if len(self.completion_errors) < MAX_RECORDS:
            self.completion_errors.append(ce)
        else:
            self._completions_dropped += 1

    def dropped_records(self) -> int:
        """Records past the per-log cap that were not kept (completion errors still counted per place)."""
        return self._records_dropped + self._completions_dropped

    def completion_places(self) -> dict[str, int]:
        """``host/hca`` (or ``host``) -> completion errors seen there, every one in the log counted."""
        return dict(self._places)

    def warns(self) -> list[NcclEntry]:
        """Entries at WARN level."""
        return [e for e in self.entries if e.level == "WARN"]

    def env_values(self) -> dict[str, set[str]]:
        """Distinct values seen per variable; more than one means ranks ran with different settings."""
        values: dict[str, set[str]] = {}
        for setting in self.env:
            values.setdefault(setting.name, set()).add(setting.value)
        return values

    def rank_placement(self, comm_id: str | None = None) -> dict[int, RankPlacement]:
        """rank -> where it ran, for one communicator.

        ``comm_id`` picks the communicator; by default the largest one (the world), grouped by
        ``commId`` where NCCL prints it and by size otherwise. ``init_complete`` lines win over
        ``init_start`` and info lines; the first line for a rank wins among equals.
        """
        groups: dict[str, list[CommInit]] = {}
        for comm in self.comms:
            groups.setdefault(comm.comm_id or f"nranks={comm.nranks}", []).append(comm)
        if comm_id is None:
            if not groups:
                return {}
            comm_id = max(groups, key=lambda k: (groups[k][0].nranks, len({c.rank for c in groups[k]})))
        order = {"init_complete": 0, "init_start": 1, "info": 2, "destroy": 3, "abort": 3}
        best: dict[int, CommInit] = {}
        for comm in groups.get(comm_id, []):
            held = best.get(comm.rank)
            if held is None or order[comm.event] < order[held.event]:
                best[comm.rank] = comm
        return {
            rank: RankPlacement(
                host=c.host,
                pid=c.pid,
                cuda_device=c.cuda_device if c.cuda_device is not None else c.cuda_dev,
                bus_id=c.bus_id,
                line_no=c.line_no,
            )
            for rank, c in sorted(best.items())
        }


def nccl_bus_id_to_pci(bus_id: str) -> str | None:
    """NCCL's ``busId`` (hex digits of domain, bus, device, function run together) as ``0000:9b:00.0``."""
    digits = bus_id.strip().lower()
    if not digits or len(digits) > 16 or any(c not in "0123456789abcdef" for c in digits):
        return None
    digits = digits.zfill(9)
    return f"{int(digits[:-5], 16):04x}:{digits[-5:-3]}:{digits[-3:-1]}.{digits[-1]}"


def _int(text: str | None) -> int | None:
    if text is None or not text.isascii() or not text.isdigit() or len(text) > 18:
        return None
    return int(text)


def _prefix(line: str, number: int) -> tuple[NcclEntry, str] | None:
    """The NCCL entry of a line and its message, or None when the line has no NCCL prefix."""
    level = _LEVEL.search(line)
    if level is None:
        return None
    tokens = line[: level.start()].split()
    source = None
    # Right to left: optional "(func)" (2.30), optional file:line, optional TRACE time, then [dev].
    if tokens and tokens[-1].startswith("(") and tokens[-1].endswith(")"):
        tokens.pop()
    if tokens and _SOURCE.fullmatch(tokens[-1]):
        source = tokens.pop()
    if tokens and _FLOAT.fullmatch(tokens[-1]):
        tokens.pop()
    if not tokens:
        return None
    dev = _DEV.fullmatch(tokens.pop())
    if dev is None or not tokens:
        return None
    host_token = tokens.pop()
    parts = host_token.split(":")
    host = pid = tid = None
    if len(parts) >= 3 and _int(parts[-1]) is not None and _int(parts[-2]) is not None:
        host, pid, tid = parts[-3], _int(parts[-2]), _int(parts[-1])
    elif len(parts) >= 2:
        host, pid = parts[-2], _int(parts[-1])
    else:
        host = parts[0]
    if host is not None and not is_host_name(host):
        host = None
    timestamp = None
    head = " ".join(tokens)
    if head.startswith("[") and "]" in head and head[1:2].isdigit():
        timestamp = head[1 : head.index("]")]
    message = line[level.end() :][:_MAX_MESSAGE]
    entry = NcclEntry(
        line_no=number,
        host=host,
        pid=pid,
        tid=tid,
        cuda_dev=int(dev.group(1)),
        level=cast(NcclLevel, level.group(1)),
        source=source,
        timestamp=timestamp,
        message=message,
    )
    return entry, message


def _completion(text: str, where: dict) -> CompletionError | None:
    at = text.find("Got completion")
    if at < 0:
        return None
    body = text[at : at + 2048]
    values: dict = dict(where)
    peer = None
    if body.startswith("Got completion from peer "):
        token = body[len("Got completion from peer ") :].split(" ", 1)[0]
        peer = token if token and token != "with" else None
    if peer is not None:
        values["peer"] = peer
        address, _, port = peer.partition("<")
        values["peer_ip"] = address.strip("[]") or None
        values["peer_port"] = _int(port.rstrip(">"))
    named = _STATUS_NAMED.search(body)
    if named is not None:
        values["status_name"], values["status"] = named.group(1).strip(), int(named.group(2))
        fmt: CompletionFormat = "peer_status_named"
    else:
        numbered = _STATUS_NUM.search(body) or _WITH_ERROR.search(body)
        if numbered is not None:
            values["status"] = int(numbered.group(1))
        if "from peer" not in body:
            fmt = "error_no_peer"
        elif "status=" not in body:
            fmt = "peer_with_error"
        else:
            fmt = "peer_status_hca" if _HCA.search(body) else "peer_status"
    status = values.get("status")
    if status == 0:
        # TRACE builds log every completion; IBV_WC_SUCCESS is not an error.
        return None
    if values.get("status_name") is None and status is not None and status < len(_WC_STATUS):
        values["status_name"] = _WC_STATUS[status]
    opcode = _OPCODE_NAMED.search(body)
    if opcode is not None:
        values["opcode_name"], values["opcode"] = opcode.group(1), int(opcode.group(2))
    else:
        opcode = _OPCODE_NUM.search(body)
        if opcode is not None:
            values["opcode"] = int(opcode.group(1))
            values["opcode_name"] = _WC_OPCODE.get(values["opcode"])
    for key, pattern in (("length", _LENGTH), ("vendor_err", _VENDOR)):
        match = pattern.search(body)
        if match is not None:
            values[key] = int(match.group(1))
    for key, pattern in (
        ("direction", _DIRECTION),
        ("local_gid", _LOCAL_GID),
        ("remote_gid", _REMOTE_GID),
        ("hca", _HCA),
    ):
        match = pattern.search(body)
        if match is not None:
            values[key] = match.group(1)
    return CompletionError(format=fmt, **values)


def _net_selection(message: str, where: dict) -> NetSelection | None:
    match = _NET_USING.search(message)
    if match is None:
        return None
    rest = message[match.end() :]
    devices_part, _, oob = rest.partition(";")
    devices = []
    for dev in _NET_DEVICE.finditer(devices_part):
        devices.append(_net_device(int(dev.group(1)), dev.group(2), match.group(1)))
    oob_interface = oob_address = None
    oob = oob.strip()
    if oob.startswith("OOB "):
        name, _, address = oob[4:].strip().partition(":")
        oob_interface, oob_address = name or None, address.split("<", 1)[0] or None
    return NetSelection(
        transport=cast(NetTransport, match.group(1)),
        devices=devices,
        relaxed_ordering="[RO]" in devices_part,
        oob_interface=oob_interface,
        oob_address=oob_address,
        **where,
    )


def _net_device(index: int, text: str, transport: str) -> NetDevice:
    if transport == "Socket":
        name, _, address = text.partition(":")
        return NetDevice(index=index, name=name, address=address.split("<", 1)[0] or None)
    head, *flags = text.split("/")
    name, _, port = head.rpartition(":")
    if not name:
        name, port = head, ""
    return NetDevice(
        index=index,
        name=name,
        port=_int(port),
        link=flags[0] if flags else None,
        sharp="SHARP" in flags,
    )


def _channel(message: str, where: dict) -> ChannelConnection | None:
    if not message.startswith("Channel ") or " via " not in message:
        return None
    match = _CHANNEL.match(message)
    if match is None:
        return None
    via = match.group(8).strip()
    return ChannelConnection(
        channel=int(match.group(1)),
        src_rank=int(match.group(3)),
        src_bus_id=match.group(4),
        dst_rank=int(match.group(5)),
        dst_bus_id=match.group(6),
        direction=cast(ChannelDirection | None, match.group(7)),
        via=via,
        kind=_CHANNEL_KINDS.get(via.split("/", 1)[0], "other"),
        **where,
    )


_COMM_KEYS = {
    "rank": "rank",
    "nranks": "nranks",
    "nRanks": "nranks",
    "cudaDev": "cuda_device",
    "nvmlDev": "nvml_device",
    "busId": "bus_id",
    "commId": "comm_id",
}


def _comm(message: str, where: dict) -> CommInit | None:
    at = message.find("comm 0x")
    if at < 0:
        return None
    tokens = message[at:].split()
    values: dict = {"comm": tokens[1]}
    for key, value in pairwise(tokens[2:]):
        field = _COMM_KEYS.get(key)
        if field is None or field in values:
            continue
        values[field] = value if field in ("bus_id", "comm_id") else _int(value)
    if values.get("rank") is None or values.get("nranks") is None:
        return None
    if "Init COMPLETE" in message:
        event: CommEvent = "init_complete"
    elif "Init START" in message:
        event = "init_start"
    elif "Destroy COMPLETE" in message:
        event = "destroy"
    elif "Abort COMPLETE" in message:
        event = "abort"
    else:
        event = "info"
    return CommInit(event=event, **values, **where)


def _async_event(message: str, where: dict) -> AsyncEvent | None:
    if "event" not in message or ("async" not in message and "port event" not in message):
        return None
    match = _ASYNC.search(message)
    if match is None:
        return None
    event = match.group(3).strip()
    wording = match.group(2)
    fatal = ("fatal event" in wording and "non-fatal" not in wording) or "catastrophic" in event
    return AsyncEvent(device=match.group(1), event=event, fatal=fatal, **where)


def parse_nccl_log(text: str | Iterable[str]) -> NcclLog:
    """NCCL lines and the facts they carry, from any job log (other lines are ignored).

    A log without NCCL lines gives an empty :class:`NcclLog`; only non-text input raises
    :class:`ParseError`.
    """
    lines = as_lines(text)
    log = NcclLog(
        entries=[],
        versions=[],
        env=[],
        nets=[],
        networks=[],
        channels=[],
        comms=[],
        completion_errors=[],
        async_events=[],
        warnings=[],
    )
    warnings = BoundedWarnings(_MAX_WARNINGS)
    for number, line in numbered_lines(lines, _MAX_LINE, warnings):
        if line is None:
            continue
        if "NCCL" not in line and "Got completion" not in line:
            continue
        _parse_line(log, number, line)
    if log._records_dropped:
        warnings.add(
            f"{log._records_dropped} records past the first {MAX_RECORDS} of a kind dropped (per-log cap)"
        )
    if log._completions_dropped:
        warnings.add(
            f"{log._completions_dropped} completion errors past the first {MAX_RECORDS} not kept "
            "(per-log cap); completion_places() counts them all"
        )
    log.warnings = list(warnings)
    return log


def _parse_line(log: NcclLog, number: int, line: str) -> None:
    prefixed = _prefix(line, number) if "NCCL" in line else None
    if prefixed is not None:
        entry, message = prefixed
        _keep(log, log.entries, entry)
        where = {"line_no": number, "host": entry.host, "pid": entry.pid, "cuda_dev": entry.cuda_dev}
    else:
        message = line[:_MAX_MESSAGE]
        where = {"line_no": number}
    version = _VERSION.search(message)
    if version is not None:
        _keep(log, log.versions, NcclVersion(version=version.group(1), cuda=version.group(2), **where))
    completion = _completion(message, where)
    if completion is not None:
        log._add_completion(completion)  # kept up to the cap, every one counted per host
    if prefixed is None:
        return
    env = _ENV.fullmatch(message.strip())
    if env is not None:
        _keep(
            log, log.env, EnvSetting(name=env.group(1), value=env.group(2).strip().removesuffix("."), **where)
        )
        return
    network = _NETWORK.search(message.strip())
    if network is not None:
        _keep(log, log.networks, NetworkUse(name=network.group(1).strip(), **where))
    for extract, target in (
        (_net_selection, log.nets),
        (_channel, log.channels),
        (_comm, log.comms),
        (_async_event, log.async_events),
    ):
        found = extract(message, where)
        if found is not None:
            _keep(log, target, found)


def _keep(log: NcclLog, target: list, item: object) -> None:
    """Append while the list holds fewer than MAX_RECORDS (a bounded buffer: a 250 MB log keeps
    the first ones, which say what the rest repeat); count what is dropped, so the log says so."""
    if len(target) < MAX_RECORDS:
        target.append(item)
    else:
        log._records_dropped += 1
