"""top -b -n 1 and /proc/pressure/cpu."""

from __future__ import annotations

import pytest
from forensic.sandbox.errors import ParseError
from forensic.tools.parsers.hostload import parse_pressure, parse_top
from hypothesis import given, settings
from hypothesis import strategies as st

# procps-ng `top -b -n 1` layout (summary area, blank line, process table), a host whose CPUs are
# taken by a stray compression job next to the training ranks.
TOP = """\
top - 02:18:11 up 12 days,  3:04,  2 users,  load average: 52.31, 48.02, 40.11
Tasks: 812 total,   3 running, 809 sleeping,   0 stopped,   0 zombie
%Cpu(s): 45.2 us,  3.1 sy,  0.0 ni, 50.9 id,  0.4 wa,  0.0 hi,  0.4 si,  0.0 st
MiB Mem : 2063749.+total, 1517272.+free, 285362.4 used, 261114.3 buff/cache
MiB Swap:      0.0 total,      0.0 free,      0.0 used. 1765290.+avail Mem

    PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND
 981234 root      20   0   12.3g   1.1g  12345 R  3187   0.1  81234:56 pigz -p 32 -9 checkpoint.tar
 123456 train     20   0  100.2g  12.3g   1.2g R 798.0   0.6  12345:01 python
 123457 train     20   0  100.1g  12.2g   1.2g S  99.7   0.6  12001:17 python
      1 root      20   0  171944  12960   8420 S   0.0   0.0   2:51.75 systemd
"""

# procps 3.2 (EL6-era) summary lines.
TOP_OLD = """\
top - 14:05:45 up 34 min,  1 user,  load average: 0.00, 0.01, 0.05
Tasks: 112 total,   1 running, 111 sleeping,   0 stopped,   0 zombie
Cpu(s):  0.3%us,  0.2%sy,  0.0%ni, 99.5%id,  0.0%wa,  0.0%hi,  0.0%si,  0.0%st
Mem:   8061040k total,  1046312k used,  7014728k free,    33688k buffers

  PID USER      PR  NI  VIRT  RES  SHR S %CPU %MEM    TIME+  COMMAND
    1 root      20   0 19232 1520 1228 S  0.0  0.0   0:01.23 init
"""

# Kernel Documentation/accounting/psi.rst format.
PRESSURE = """\
some avg10=12.50 avg60=8.03 avg300=2.61 total=1844674407
full avg10=0.00 avg60=0.00 avg300=0.00 total=0
"""


def test_top_summary_and_processes():
    snap = parse_top(TOP)
    assert snap.time == "02:18:11"
    assert snap.uptime == "12 days,  3:04" and snap.uptime_s == 12 * 86400 + 3 * 3600 + 4 * 60
    assert snap.users == 2
    assert (snap.load1, snap.load5, snap.load15) == (52.31, 48.02, 40.11)
    assert snap.tasks is not None
    assert (snap.tasks.total, snap.tasks.running, snap.tasks.sleeping, snap.tasks.zombie) == (812, 3, 809, 0)
    assert snap.cpu is not None
    assert (snap.cpu.us, snap.cpu.sy, snap.cpu.id, snap.cpu.wa, snap.cpu.si, snap.cpu.st) == (
        45.2,
        3.1,
        50.9,
        0.4,
        0.4,
        0.0,
    )
    top = snap.processes[0]
    assert (top.pid, top.user, top.state, top.cpu_pct, top.mem_pct) == (981234, "root", "R", 3187.0, 0.1)
    assert top.time == "81234:56" and top.command == "pigz -p 32 -9 checkpoint.tar"
    assert snap.processes[1].cpu_pct == 798.0 and snap.processes[1].command == "python"
    assert snap.processes[3].time == "2:51.75"
    assert snap.process_count == 4
    assert snap.warnings == []


def test_top_old_procps_and_minutes_uptime():
    snap = parse_top(TOP_OLD)
    assert snap.uptime_s == 34 * 60 and snap.users == 1
    assert snap.cpu is not None and (snap.cpu.us, snap.cpu.id) == (0.3, 99.5)
    assert snap.processes[0].command == "init"


def test_top_decimal_comma_locale():
    text = (
        "top - 10:00:00 up 1 day, 10 min,  0 users,  load average: 0,52, 0,58, 0,59\n"
        "%Cpu(s): 12,5 us,  1,0 sy,  0,0 ni, 86,5 id,  0,0 wa,  0,0 hi,  0,0 si,  0,0 st\n"
    )
    snap = parse_top(text)
    assert (snap.load1, snap.load15) == (0.52, 0.59)
    assert snap.cpu is not None and (snap.cpu.us, snap.cpu.id) == (12.5, 86.5)
    assert snap.uptime_s == 86400 + 600


def test_top_keeps_last_frame_and_caps_rows():
    snap = parse_top(TOP_OLD + TOP)
    assert snap.load1 == 52.31 and snap.process_count == 4
    assert any("frames" in w for w in snap.warnings)
    capped = parse_top(TOP, max_processes=2)
    assert len(capped.processes) == 2 and capped.process_count == 4


def test_top_truncated_empty_binary_and_unusable():
    cut = parse_top(TOP[: TOP.index("123457")])
    assert cut.cpu is not None and cut.processes[-1].pid == 123456
    head_only = parse_top(TOP[:50])
    assert head_only.time == "02:18:11" and head_only.load1 is None
    empty = parse_top("")
    assert empty.processes == [] and empty.warnings == ["empty input"]
    assert parse_top(TOP.encode() + b"\x00\xff").load1 == 52.31
    with pytest.raises(ParseError):
        parse_top("bash: top: command not found\n")
    with pytest.raises(ParseError):
        parse_top(None)  # type: ignore[arg-type]


def test_top_huge_and_hostile():
    huge = TOP + "".join(f" {pid} train 20 0 1g 1g 1g S 1.0 0.1 0:01.00 worker\n" for pid in range(200_000))
    snap = parse_top(huge)
    assert snap.process_count == 200_004 and len(snap.processes) == 100
    bait = "\n".join(
        [
            "top - " + "1" * 70_000,
            "top - 00:00:00 up " + "1 day, " * 8_000 + " load average: " + "1, " * 5_000,
            "%Cpu(s): " + "1.1 us, " * 7_000,
            "%Cpu(s): " + "9" * 60_000 + " us",
            "Tasks: " + "1 total, " * 6_000,
            "    PID USER COMMAND",
            "x" * 60_000,
            "12 " * 20_000,
        ]
    )
    snap = parse_top(bait)
    assert snap.cpu is not None and snap.cpu.us is None
    lying = (
        "top - 01:02:03 up 99999999 days, 99:99,  -1 users,  load average: lots, 1.0, 2.0\n"
        "%Cpu(s): 999.9 us, abc sy\n    PID USER COMMAND\n -5 root ls\n"
    )
    snap = parse_top(lying)
    assert snap.load1 is None and snap.cpu is not None and snap.cpu.sy is None
    assert snap.processes == [] and snap.warnings


def test_pressure():
    pressure = parse_pressure(PRESSURE)
    assert pressure.some is not None and pressure.full is not None
    assert (pressure.some.avg10, pressure.some.avg60, pressure.some.avg300) == (12.5, 8.03, 2.61)
    assert pressure.some.total_us == 1844674407
    assert pressure.full.total_us == 0
    assert pressure.warnings == []


def test_pressure_some_only_truncated_empty_unusable():
    older = parse_pressure(PRESSURE.splitlines()[0])
    assert older.full is None and older.some is not None
    cut = parse_pressure("some avg10=1.00 avg60=")
    assert (
        cut.some is not None
        and cut.some.avg10 == 1.0
        and cut.some.avg60 is None
        and cut.some.total_us is None
    )
    empty = parse_pressure("")
    assert empty.some is None and empty.warnings == ["empty input"]
    with pytest.raises(ParseError):
        parse_pressure("cat: /proc/pressure/cpu: Operation not supported\n")
    assert parse_pressure(PRESSURE.encode() + b"\x00").some is not None


def test_pressure_huge_and_hostile():
    assert parse_pressure(PRESSURE * (10_000_000 // len(PRESSURE))).some is not None
    hostile = "some " + "avg10=" * 10_000 + "\nfull avg10=nan avg60=-1 avg300=1e9 total=" + "9" * 40 + "\n"
    pressure = parse_pressure(hostile)
    assert pressure.full is not None
    assert (pressure.full.avg10, pressure.full.avg60, pressure.full.avg300, pressure.full.total_us) == (
        None,
        None,
        None,
        None,
    )
    with pytest.raises(ParseError):
        parse_pressure("x" * 1_000_000 + "\n")


REAL_LINES = (TOP + TOP_OLD + PRESSURE).splitlines()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(REAL_LINES), st.text(max_size=80)), max_size=30))
def test_fuzz_only_parse_errors(lines):
    text = "\n".join(lines)
    for parse in (parse_top, parse_pressure):
        try:
            parse(text)
        except ParseError:
            pass
