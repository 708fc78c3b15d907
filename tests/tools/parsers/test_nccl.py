"""NCCL debug lines inside job logs."""

from __future__ import annotations

import pytest
from forensic.sandbox.errors import ParseError
from forensic.tools.parsers.nccl import nccl_bus_id_to_pci, parse_nccl_log
from hypothesis import given, settings
from hypothesis import strategies as st

# Reference §6.2, verbatim (nccl#1814, nccl#1291, nccl-tests#227, nccl#707, nccl#1412).
INIT_REAL = """\
hostname-test:984:1257 [4] NCCL INFO comm 0x557fe785f7a0 rank 36 nranks 64 cudaDev 4 nvmlDev 4 busId 9b000 commId 0x5ae77eb5ea4ec1ee - Init COMPLETE
hostname-test:983:1261 [3] NCCL INFO 16 coll channels, 0 collnet channels, 16 nvls channels, 16 p2p channels, 1 p2p channels per peer
hostname-test:986:1338 [6] NCCL INFO NCCL_IB_TIMEOUT set by environment to 18.
hostname-test:986:1338 [6] NCCL INFO NCCL_IB_RETRY_CNT set by environment to 15.
hostname-test:980:1348 [0] NCCL INFO NCCL_IB_TC set by environment to 128.
gh1:185972:186354 [0] NCCL INFO NET/IB : Using [0]mlx5_2:1/IB/SHARP [RO]; OOB bond0:X.X.X.X<0>
ai-worker01:5771:5783 [0] NCCL INFO NET/IB : Using [0]irdma0:1/RoCE [1]irdma3:1/RoCE [RO]; OOB eth0:172.16.121.86<0>
ai-worker01:5771:5771 [0] NCCL INFO Bootstrap : Using eth0:172.16.121.86<0>
NCCL version 2.21.5+cuda12.4
gh1:185972:186354 [0] NCCL INFO Channel 00/04 :    0   1
10-90-43-152:120890:121560 [0] NCCL INFO Channel 01 : 2[c7000] -> 0[87000] [receive] via NET/IB/5/GDRDMA
swat1-04:2017630:2017671 [2] NCCL INFO Init timings: rank 2 nranks 16 total 1.08 (kernels 0.51, bootstrap 0.22, allgathers 0.01, topo 0.28, graphs 0.04, connections 0.02, rest 0.01)
"""

# Reference §6.3 real completion errors (nccl#1814, nccl#1405) and the PyTorch-quoted old format.
COMPLETION_REAL = """\
hostname-test:984:1357 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer 172.36.143.59<44206> with status=12 opcode=129 len=65536 vendor err 129 (Recv) localGid ::ffff:29.87.88.182 remoteGids::ffff:29.87.4.221
hostname-test:984:1357 [4] NCCL INFO transport/net.cc:1298 -> 6
hostname-test:984:1357 [4] NCCL INFO proxy.cc:694 -> 6
hostname-test:984:1357 [4] NCCL INFO proxy.cc:874 -> 6 [Progress Thread]
kp-ddp-worker-0:3468:3905 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer 10.216.210.236<54862> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid fd00:1148:9000:5000:4:200:3:ff22 remoteGidsfd00:1148:9000:5000:4:200:3:ff1f
[E ProcessGroupNCCL.cpp:455] … NCCL error: remote process exited or there was a network error, NCCL version 2.14.3 ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely. Last error: NET/IB : Got completion from peer 11.214.147.122<39138> with error 12, opcode 0, len 0, vendor err 129
"""

# Reference §6.3 other real WARNs (nccl#230, nccl#1710, nccl#2013, nccl#969).
WARN_REAL = """\
…:815:864 [0] transport/net_ib.cu:80 NCCL WARN NET/IB : Got async event : local catastrophic error
node201:127799:127863 [0] transport/net_ib.cc:101 NCCL WARN NET/IB : mlx5_0:1 Got async event : local access violation work queue error
[2026-03-13 22:26:02] host-01.example.com:XXXXXX [5] ibvwrap.c:262 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx_x:1, curr state INIT, next state RTR, local GID index 3, local GID ::ffff:xxx.xx.xx.xx, remote GID ::ffff:xxx.xx.xxx.xx
so-ucloud-10-10-23-10:1307367:1307586 [0] transport/net_ib.cc:1038 NCCL WARN NET/IB : req 0/1 tag 0 peer 10.10.23.6<58683> collective mismatch error, local size 496640 remote size 65536
"""

# Lines built from the format strings of reference §6.3 (one per NCCL era) and §6.1.
COMPLETION_FORMATS = """\
gpu-a017:11:12 [0] net_ib.cc:790 NCCL WARN NET/IB : Got completion with error 12, opcode 1, len 32768, vendor err 129
gpu-a017:11:12 [1] net_ib.cc:1045 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<4711> with error 5, opcode 129, len 0, vendor err 249 (Recv) localGid ::ffff:10.0.0.1 remoteGids::ffff:10.0.0.2
gpu-a017:11:12 [2] net_ib.cc:1045 NCCL WARN NET/IB: Got completion from peer 10.0.0.3<4712> with status=12 opcode=0 len=0 vendor err 129 (Send) hca mlx5_3
gpu-a017:11:12 [3] net_ib.cc:1045 NCCL WARN NET/IB: Got completion from peer 10.0.0.4<4713> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:10.0.0.1 remoteGids::ffff:10.0.0.4 hca mlx5_1
gpu-a017:11:12 [4] net_ib.cc:1045 (ncclIbTest) NCCL WARN NET/IB: Got completion from peer 10.0.0.5<4714> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_RECV(128) vendor_err=129  localGid ::ffff:10.0.0.1 remoteGids::ffff:10.0.0.5 hca mlx5_2
gpu-a017:11:12 [5] 123.456789 net_ib.cc:1100 NCCL TRACE Got completion from peer 10.0.0.6<4715> with status=0 opcode=0 len=8 wr_id=0 r=0x1 type=1 events={0,0,0,0}, devIndex=0
"""

SOCKET_AND_P2P = """\
gpu-b002:200:200 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.
gpu-b002:200:200 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0
gpu-b002:200:200 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>
gpu-b002:200:200 [0] NCCL INFO Using network Socket
gpu-b002:200:250 [0] NCCL INFO Channel 00/0 : 3[3] -> 4[0] [send] via NET/Socket/0
gpu-b002:200:250 [0] NCCL INFO Channel 00/0 : 0[18000] -> 1[2a000] via P2P/IPC
gpu-b002:200:250 [0] NCCL INFO Channel 01/0 : 1[2a000] -> 0[18000] via SHM/direct/direct
gpu-b002:201:201 [1] NCCL INFO NCCL_SOCKET_IFNAME set by environment to ib0
"""

WORLD = """\
gpu-a017:100:100 [0] NCCL INFO comm 0x1 rank 0 nranks 16 cudaDev 0 nvmlDev 0 busId 18000 commId 0xabc - Init START
gpu-a017:100:100 [0] NCCL INFO comm 0x1 rank 0 nranks 16 cudaDev 0 nvmlDev 0 busId 18000 commId 0xabc - Init COMPLETE
gpu-a018:300:300 [7] NCCL INFO comm 0x2 rank 15 nranks 16 cudaDev 7 nvmlDev 7 busId db000 commId 0xabc - Init COMPLETE
gpu-a018:300:300 [7] NCCL INFO comm 0x3 rank 1 nranks 2 cudaDev 7 nvmlDev 7 busId db000 commId 0xdef - Init COMPLETE
[default0]:gpu-a017:100:100 [0] NCCL INFO comm 0x1 rank 0 nranks 16 cudaDev 0 busId 18000 - Destroy COMPLETE
"""


def test_real_init_lines():
    log = parse_nccl_log(INIT_REAL)
    first = log.entries[0]
    assert (first.host, first.pid, first.tid, first.cuda_dev, first.level) == (
        "hostname-test",
        984,
        1257,
        4,
        "INFO",
    )
    assert first.message.startswith("comm 0x557fe785f7a0")
    assert first.line_no == 1
    [comm] = log.comms
    assert (comm.rank, comm.nranks, comm.cuda_device, comm.nvml_device, comm.bus_id) == (
        36,
        64,
        4,
        4,
        "9b000",
    )
    assert comm.comm_id == "0x5ae77eb5ea4ec1ee" and comm.event == "init_complete"
    placement = log.rank_placement()
    assert placement[36].host == "hostname-test" and placement[36].pci_address == "0000:9b:00.0"
    assert [(e.name, e.value) for e in log.env] == [
        ("NCCL_IB_TIMEOUT", "18"),
        ("NCCL_IB_RETRY_CNT", "15"),
        ("NCCL_IB_TC", "128"),
    ]
    [version] = log.versions
    assert (version.version, version.cuda, version.host, version.line_no) == ("2.21.5", "12.4", None, 9)
    ib, roce = log.nets
    assert ib.transport == "IB" and ib.relaxed_ordering and ib.oob_interface == "bond0"
    [dev] = ib.devices
    assert (dev.index, dev.name, dev.port, dev.link, dev.sharp) == (0, "mlx5_2", 1, "IB", True)
    assert [(d.name, d.link, d.sharp) for d in roce.devices] == [
        ("irdma0", "RoCE", False),
        ("irdma3", "RoCE", False),
    ]
    assert roce.oob_address == "172.16.121.86"
    [channel] = log.channels
    assert (channel.channel, channel.src_rank, channel.dst_rank, channel.direction) == (1, 2, 0, "receive")
    assert (channel.via, channel.kind, channel.src_bus_id) == ("NET/IB/5/GDRDMA", "NET", "c7000")
    assert channel.host == "10-90-43-152"
    assert len(log.entries) == 11  # the bare version line has no prefix
    assert log.warnings == []


def test_real_completion_errors():
    log = parse_nccl_log(COMPLETION_REAL)
    first, second, quoted = log.completion_errors
    assert first.format == "peer_status"
    assert (first.peer, first.peer_ip, first.peer_port) == ("172.36.143.59<44206>", "172.36.143.59", 44206)
    assert (first.status, first.status_name, first.opcode, first.length, first.vendor_err) == (
        12,
        "IBV_WC_RETRY_EXC_ERR",
        129,
        65536,
        129,
    )
    assert first.direction == "Recv"
    assert (first.local_gid, first.remote_gid) == ("::ffff:29.87.88.182", "::ffff:29.87.4.221")
    assert (first.host, first.cuda_dev, first.line_no) == ("hostname-test", 4, 1)
    assert log.entries[0].source == "ib_plugin.c:1615" and log.entries[0].level == "WARN"
    assert second.remote_gid == "fd00:1148:9000:5000:4:200:3:ff1f"
    assert second.local_gid == "fd00:1148:9000:5000:4:200:3:ff22"
    assert quoted.format == "peer_with_error" and quoted.status == 12 and quoted.host is None
    assert quoted.peer_ip == "11.214.147.122" and quoted.opcode == 0 and quoted.vendor_err == 129
    assert [v.version for v in log.versions] == ["2.14.3"]
    assert len(log.warns()) == 2


def test_every_completion_format():
    errors = parse_nccl_log(COMPLETION_FORMATS).completion_errors
    assert [e.format for e in errors] == [
        "error_no_peer",
        "peer_with_error",
        "peer_status_hca",
        "peer_status_hca",
        "peer_status_named",
    ]
    old, with_error, hca, hca_gid, named = errors
    assert old.peer is None and old.status == 12 and old.opcode == 1 and old.length == 32768
    assert (
        with_error.status == 5
        and with_error.status_name == "IBV_WC_WR_FLUSH_ERR"
        and with_error.vendor_err == 249
    )
    assert hca.hca == "mlx5_3" and hca.direction == "Send" and hca.opcode_name == "IBV_WC_SEND"
    assert hca_gid.hca == "mlx5_1" and hca_gid.remote_gid == "::ffff:10.0.0.4"
    assert (named.status, named.status_name, named.opcode, named.opcode_name) == (
        12,
        "IBV_WC_RETRY_EXC_ERR",
        128,
        "IBV_WC_RECV",
    )
    assert named.vendor_err == 129 and named.hca == "mlx5_2" and named.remote_gid == "::ffff:10.0.0.5"
    assert named.peer_port == 4714


def test_trace_and_func_prefix_forms():
    log = parse_nccl_log(COMPLETION_FORMATS)
    named = log.entries[4]
    assert named.source == "net_ib.cc:1045" and named.level == "WARN" and named.cuda_dev == 4
    trace = log.entries[5]
    assert trace.level == "TRACE" and trace.source == "net_ib.cc:1100"


def test_async_events_and_other_warns():
    log = parse_nccl_log(WARN_REAL)
    first, second = log.async_events
    assert (first.device, first.event, first.fatal, first.pid) == (
        None,
        "local catastrophic error",
        True,
        815,
    )
    assert first.host is None  # the paste elided the host name
    assert (second.device, second.event, second.fatal) == (
        "mlx5_0:1",
        "local access violation work queue error",
        False,
    )
    timestamped = log.entries[2]
    assert timestamped.timestamp == "2026-03-13 22:26:02"
    assert (timestamped.host, timestamped.pid, timestamped.cuda_dev) == ("host-01.example.com", None, 5)
    assert timestamped.source == "ibvwrap.c:262"
    assert log.completion_errors == []


def test_newer_async_fatal_event_wording():
    text = (
        "gpu-a017:1:2 [0] net_ib.cc:150 NCCL WARN NET/IB : mlx5_3:1 async fatal event: local catastrophic error\n"
        "gpu-a017:1:2 [0] net_ib.cc:160 NCCL WARN NET/IB : mlx5_3:1 async fatal event on QP (0x5555): local work queue catastrophic error\n"
        "gpu-a017:1:2 [0] net_ib.cc:170 NCCL WARN NET/IB : mlx5_3:1 async non-fatal event: port error\n"
    )
    events = parse_nccl_log(text).async_events
    assert [(e.device, e.fatal) for e in events] == [
        ("mlx5_3:1", True),
        ("mlx5_3:1", True),
        ("mlx5_3:1", False),
    ]
    assert events[2].event == "port error"


def test_socket_transport_env_and_channels():
    log = parse_nccl_log(SOCKET_AND_P2P)
    assert log.env_values() == {"NCCL_IB_DISABLE": {"1"}, "NCCL_SOCKET_IFNAME": {"eth0", "ib0"}}
    [net] = log.nets
    assert (
        net.transport == "Socket" and net.devices[0].name == "eth0" and net.devices[0].address == "10.0.0.1"
    )
    assert [n.name for n in log.networks] == ["Socket"]
    assert [(c.kind, c.via, c.direction) for c in log.channels] == [
        ("NET", "NET/Socket/0", "send"),
        ("P2P", "P2P/IPC", None),
        ("SHM", "SHM/direct/direct", None),
    ]


def test_rank_placement_picks_world_comm_and_prefers_init_complete():
    log = parse_nccl_log(WORLD)
    assert log.entries[-1].host == "gpu-a017"  # launcher prefix "[default0]:" is ignored
    world = log.rank_placement()
    assert set(world) == {0, 15}
    assert world[0].line_no == 2 and world[0].bus_id == "18000"
    assert world[15].host == "gpu-a018" and world[15].pci_address == "0000:db:00.0"
    pair = log.rank_placement("0xdef")
    assert set(pair) == {1}
    assert log.rank_placement("nope") == {}
    assert parse_nccl_log("").rank_placement() == {}


def test_bus_id_conversion():
    assert nccl_bus_id_to_pci("9b000") == "0000:9b:00.0"
    assert nccl_bus_id_to_pci("1001b000") == "0100:1b:00.0"
    assert nccl_bus_id_to_pci("9001b100") == "0900:1b:10.0"
    assert nccl_bus_id_to_pci("xyz") is None and nccl_bus_id_to_pci("") is None


def test_empty_truncated_binary_and_unrelated():
    empty = parse_nccl_log("")
    assert empty.entries == [] and empty.warnings == []
    assert parse_nccl_log("epoch 1 loss 2.3\nNCCL is great\n").entries == []
    cut = parse_nccl_log(COMPLETION_REAL[:120])
    assert cut.completion_errors[0].peer_ip == "172.36.143.59"
    assert cut.completion_errors[0].status is None
    binary = parse_nccl_log(b"\x00\xff" + INIT_REAL.encode() + b"\x00NCCL\x00INFO\x00")
    assert len(binary.comms) == 1
    with pytest.raises(ParseError):
        parse_nccl_log(None)  # type: ignore[arg-type]


def test_huge_and_hostile():
    copies = 10_000_000 // len(COMPLETION_REAL)
    huge = parse_nccl_log(COMPLETION_REAL * copies)
    # A bounded buffer keeps the first MAX_RECORDS; every one is still counted per place.
    from forensic.tools.parsers.nccl import MAX_RECORDS

    assert len(huge.completion_errors) == min(3 * copies, MAX_RECORDS)
    per_copy = parse_nccl_log(COMPLETION_REAL).completion_places()
    assert huge.completion_places() == {k: v * copies for k, v in per_copy.items()} and per_copy
    long_line = "gpu:1:2 [0] NCCL WARN " + "x" * 1_000_000 + "\n" + INIT_REAL
    log = parse_nccl_log(long_line)
    assert log.warnings and log.comms[0].rank == 36
    bait = "\n".join(
        [
            "h:1:2 [0] NCCL INFO Channel " + "0" * 60_000,
            "h:1:2 [0] NCCL INFO " + "comm 0x1 rank " * 4000,
            "h:1:2 [0] NCCL WARN Got completion from peer " + "status=" * 8000,
            "h:1:2 [0] NCCL WARN " + "a" * 30_000 + " async event" + ":" * 20_000,
            "[" * 60_000 + " NCCL INFO x",
            " ".join(["[0]"] * 15_000) + " NCCL INFO y",
            "h:1:2 [0] NCCL INFO NET/IB : Using " + "[0]" * 20_000,
            "h:" * 30_000 + " [0] NCCL INFO z",
            "NCCL version " + "1." * 30_000,
        ]
    )
    log = parse_nccl_log(bait)
    assert log.comms == [] or all(c.nranks is not None for c in log.comms)
    lying = (
        "h:1:2 [99999] NCCL INFO comm 0x1 rank 5 nranks many cudaDev 0\n"
        "h:1:2 [0] NCCL INFO comm 0x1 rank -1 nranks 8\n"
        "h:1:2 [0] NCCL WARN NET/IB : Got completion from peer 1.2.3.4<x> with status=99999999 opcode=1\n"
    )
    log = parse_nccl_log(lying)
    assert log.comms == []
    [err] = log.completion_errors
    assert err.status is None and err.peer_port is None and err.opcode == 1


REAL_LINES = (
    INIT_REAL + COMPLETION_REAL + WARN_REAL + COMPLETION_FORMATS + SOCKET_AND_P2P + WORLD
).splitlines()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(REAL_LINES), st.text(max_size=80)), max_size=30))
def test_fuzz_only_parse_errors(lines):
    try:
        log = parse_nccl_log("\n".join(lines))
    except ParseError:
        return
    log.rank_placement()
    log.env_values()
