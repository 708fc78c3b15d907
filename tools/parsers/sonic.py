"""SONiC switch CLI tables: ``show pfcwd stats``, ``show pfc counters``, ``show interfaces counters``.

sonic-utilities prints all three with ``tabulate(..., tablefmt='simple')``: a header line, a line of
dashes, then rows whose columns are at least two spaces apart and right-aligned, so widths change
with the data. Cells are found by splitting on runs of two or more spaces and columns by header
name, which survives widths, added columns (``-a`` adds ``RX_PPS``/``TX_PPS``/``TRIM``) and
reordering. Counters print with thousands separators (``1,234``) or ``N/A``.

Direction on a switch port: ``Rx PFCn`` counts pause frames the port received from its neighbour
(the neighbour could not drain); ``Tx PFCn`` counts pause frames the switch sent (its own buffer for
that port's traffic filled).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Literal

from forensic.sandbox.errors import ParseError
from forensic.tools.parsers._text import BoundedWarnings, as_text, numbered_lines
from pydantic import BaseModel, ConfigDict

__all__ = [
    "InterfaceCounters",
    "InterfacesCounters",
    "PfcCounters",
    "PfcwdQueue",
    "PfcwdStatus",
    "PortState",
    "parse_interfaces_counters",
    "parse_pfc_counters",
    "parse_pfcwd_stats",
]

_MAX_LINE = 64 * 1024
_MAX_WARNINGS = 20
_CELL_SPLIT = re.compile(r"\s{2,}")
_RATE_UNITS = {"B/s": 1.0, "KB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9, "TB/s": 1e12}
_IGNORED_PREFIXES = ("Last cached time was", "Reminder:", "For namespace")

PfcwdStatus = Literal["operational", "stormed", "unknown"]
PortState = Literal["up", "down", "disabled", "unknown"]

# pfcwd stats columns, each "a/b", to the two fields they fill.
_PFCWD_COLUMNS: dict[str, tuple[str, str]] = {
    "STORM DETECTED/RESTORED": ("storm_detected", "storm_restored"),
    "TX OK/DROP": ("tx_ok", "tx_drop"),
    "RX OK/DROP": ("rx_ok", "rx_drop"),
    "TX LAST OK/DROP": ("tx_last_ok", "tx_last_drop"),
    "RX LAST OK/DROP": ("rx_last_ok", "rx_last_drop"),
}
_STATE_LETTERS: dict[str, PortState] = {"U": "up", "D": "down", "X": "disabled"}
_PFCWD_STATUSES: dict[str, PfcwdStatus] = {"operational": "operational", "stormed": "stormed"}
_IFACE_COUNTS = {"RX_OK", "RX_ERR", "RX_DRP", "RX_OVR", "TX_OK", "TX_ERR", "TX_DRP", "TX_OVR"}
_IFACE_RATES = {"RX_BPS", "TX_BPS"}
_IFACE_PPS = {"RX_PPS", "TX_PPS"}
_IFACE_UTILS = {"RX_UTIL", "TX_UTIL"}


class _Model(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)


class PfcwdQueue(_Model):
    """One queue row of ``show pfcwd stats``; counters are None where the cell was unreadable."""

    port: str
    """Switch port, e.g. ``Ethernet4``."""
    queue: int | None
    """Queue (= PFC priority) index after the colon in ``Ethernet4:3``."""
    status: PfcwdStatus
    """``stormed`` while the watchdog holds the queue in storm mitigation; ``unknown`` for ``N/A``."""
    storm_detected: int | None = None
    """Storms the watchdog detected on this queue."""
    storm_restored: int | None = None
    """Storms it restored from; fewer than detected means a storm is still on."""
    tx_ok: int | None = None
    """Packets transmitted while in storm mitigation."""
    tx_drop: int | None = None
    """Packets dropped on transmit by the mitigation action."""
    rx_ok: int | None = None
    """Packets received while in storm mitigation."""
    rx_drop: int | None = None
    """Packets dropped on receive by the mitigation action."""
    tx_last_ok: int | None = None
    """``tx_ok`` of the last storm only."""
    tx_last_drop: int | None = None
    """``tx_drop`` of the last storm only."""
    rx_last_ok: int | None = None
    """``rx_ok`` of the last storm only."""
    rx_last_drop: int | None = None
    """``rx_drop`` of the last storm only."""
    line_no: int
    """1-based line of the row in the command output."""


class PfcCounters(_Model):
    """``show pfc counters``: PFC frames per switch port and priority (index 0..7; None for ``N/A``)."""

    rx: dict[str, list[int | None]]
    """Pause frames each port received from its neighbour, by port, indexed by priority."""
    tx: dict[str, list[int | None]]
    """Pause frames the switch sent out of each port, by port, indexed by priority."""
    warnings: list[str]
    """Rows that could not be read, and why."""


class InterfaceCounters(_Model):
    """One row of ``show interfaces counters``; None where the cell was ``N/A`` or missing."""

    iface: str
    """Port name, e.g. ``Ethernet0``."""
    state: PortState
    """``U`` up, ``D`` oper down, ``X`` admin disabled; ``unknown`` for ``N/A``."""
    rx_ok: int | None = None
    """Packets received."""
    rx_bps: float | None = None
    """Receive rate in bytes per second (``12.34 MB/s`` is 12,340,000; SONiC uses powers of 1000)."""
    rx_pps: float | None = None
    """Receive rate in packets per second (``-a`` only)."""
    rx_util_pct: float | None = None
    """Receive utilisation of the port speed, percent."""
    rx_err: int | None = None
    """Receive errors."""
    rx_drp: int | None = None
    """Receive drops."""
    rx_ovr: int | None = None
    """Receive oversize packets."""
    tx_ok: int | None = None
    """Packets transmitted."""
    tx_bps: float | None = None
    """Transmit rate in bytes per second."""
    tx_pps: float | None = None
    """Transmit rate in packets per second (``-a`` only)."""
    tx_util_pct: float | None = None
    """Transmit utilisation of the port speed, percent."""
    tx_err: int | None = None
    """Transmit errors."""
    tx_drp: int | None = None
    """Transmit drops (egress discards: the congestion signal on a switch port)."""
    tx_ovr: int | None = None
    """Transmit oversize packets."""
    extra: dict[str, str]
    """Columns this parser does not know (``TRIM``, ...), raw, by header name."""
    line_no: int
    """1-based line of the row in the command output."""


class InterfacesCounters(_Model):
    """``show interfaces counters``."""

    interfaces: list[InterfaceCounters]
    """Rows in printed order."""
    warnings: list[str]
    """Rows that could not be read, and why."""


def _is_separator(stripped: str) -> bool:
    return "--" in stripped and not stripped.strip("- ")


def _table_events(
    text: str, warnings: BoundedWarnings
) -> Iterator[tuple[Literal["header", "row"], int, str]]:
    """Header and row lines of tabulate 'simple' tables.

    A header is only known once the dashes below it arrive, so each line is held back one step.
    """
    pending: tuple[int, str] | None = None
    for number, line in numbered_lines(text, _MAX_LINE, warnings):
        if line is None:
            line = ""
        stripped = line.strip()
        if _is_separator(stripped):
            if pending is not None:
                yield "header", pending[0], pending[1]
                pending = None
            continue
        if pending is not None:
            yield "row", pending[0], pending[1]
        pending = (number, line) if stripped else None
    if pending is not None:
        yield "row", pending[0], pending[1]


def _cells(line: str, width: int) -> list[str] | None:
    """Cells of a row, or None when they do not line up with a header of ``width`` columns."""
    cells = _CELL_SPLIT.split(line.strip())
    if len(cells) == width:
        return cells
    # Files re-spaced by hand or by a terminal may keep one space between columns; rates then
    # split from their unit ("6.07", "KB/s"), which is glued back.
    tokens: list[str] = []
    for token in line.split():
        if tokens and token in _RATE_UNITS:
            tokens[-1] = f"{tokens[-1]} {token}"
        else:
            tokens.append(token)
    return tokens if len(tokens) == width else None


def _count(cell: str) -> int | None:
    digits = cell.strip().replace(",", "")
    if digits.isascii() and digits.isdigit() and len(digits) <= 20:
        return int(digits)
    return None


def _float(cell: str) -> float | None:
    cell = cell.strip().replace(",", "")
    if not cell or len(cell) > 32 or not cell.isascii() or not cell.replace(".", "", 1).isdigit():
        return None
    return float(cell)


def _rate(cell: str) -> float | None:
    number, _, unit = cell.strip().partition(" ")
    scale = _RATE_UNITS.get(unit.strip())
    value = _float(number)
    return value * scale if scale is not None and value is not None else None


def _pct(cell: str) -> float | None:
    cell = cell.strip()
    return _float(cell[:-1]) if cell.endswith("%") else None


def _pps(cell: str) -> float | None:
    cell = cell.strip()
    return _float(cell[:-2]) if cell.endswith("/s") else None


def _ignored(line: str) -> bool:
    return line.strip().startswith(_IGNORED_PREFIXES)


def parse_pfcwd_stats(text: str) -> list[PfcwdQueue]:
    """Queues from ``show pfcwd stats`` (``Ethernet4:3   stormed   1/0   0/41507426 ...``).

    Columns are matched by header name; a row that does not line up with its header is skipped.
    Empty text gives ``[]``; text with no ``QUEUE ... STATUS`` table raises :class:`ParseError`.
    """
    text = as_text(text)
    queues: list[PfcwdQueue] = []
    header: list[str] | None = None
    seen_header = False
    # The result is a plain list (the shape callers asked for), so skipped rows go unreported.
    for kind, number, line in _table_events(text, BoundedWarnings(_MAX_WARNINGS)):
        if kind == "header":
            heads = _CELL_SPLIT.split(line.strip())
            header = heads if heads[:2] == ["QUEUE", "STATUS"] else None
            seen_header = seen_header or header is not None
            continue
        if header is None or _ignored(line):
            continue
        cells = _cells(line, len(header))
        if cells is None:
            continue
        row = _pfcwd_row(header, cells, number)
        if row is not None:
            queues.append(row)
    if not seen_header and text.strip():
        raise ParseError("no 'QUEUE  STATUS' table in show pfcwd stats output")
    return queues


def _pfcwd_row(header: list[str], cells: list[str], number: int) -> PfcwdQueue | None:
    port, sep, queue = cells[0].rpartition(":")
    if not sep or not port:
        return None
    status = _PFCWD_STATUSES.get(cells[1].strip().lower(), "unknown")
    values: dict[str, int | None] = {}
    for name, cell in zip(header[2:], cells[2:], strict=True):
        fields = _PFCWD_COLUMNS.get(name)
        if fields is None:
            continue
        first, _, second = cell.partition("/")
        values[fields[0]], values[fields[1]] = _count(first), _count(second)
    return PfcwdQueue(port=port, queue=_count(queue), status=status, line_no=number, **values)


def parse_pfc_counters(text: str) -> PfcCounters:
    """Both tables of ``show pfc counters`` (``Port Rx PFC0..PFC7`` and ``Port Tx PFC0..PFC7``).

    Empty text gives empty tables; text with neither table raises :class:`ParseError`.
    """
    text = as_text(text)
    rx: dict[str, list[int | None]] = {}
    tx: dict[str, list[int | None]] = {}
    warnings = BoundedWarnings(_MAX_WARNINGS)
    table: dict[str, list[int | None]] | None = None
    columns: list[int | None] = []
    seen_header = False
    for kind, number, line in _table_events(text, warnings):
        if kind == "header":
            heads = _CELL_SPLIT.split(line.strip())
            table = {"Port Rx": rx, "Port Tx": tx}.get(heads[0])
            # PFCn header cells give each column's priority, so a reordered table still lines up.
            columns = [_pfc_index(cell) for cell in heads[1:]]
            seen_header = seen_header or table is not None
            continue
        if table is None or _ignored(line):
            continue
        cells = _cells(line, len(columns) + 1)
        if cells is None:
            warnings.add(f"line {number}: row does not match its header")
            continue
        values: list[int | None] = [None] * 8
        for index, cell in zip(columns, cells[1:], strict=True):
            if index is not None:
                values[index] = _count(cell)
        table[cells[0]] = values
    if not seen_header and text.strip():
        raise ParseError("no 'Port Rx' or 'Port Tx' table in show pfc counters output")
    return PfcCounters(rx=rx, tx=tx, warnings=list(warnings))


def _pfc_index(cell: str) -> int | None:
    if len(cell) == 4 and cell.startswith("PFC") and cell[3] in "01234567":
        return int(cell[3])
    return None


def parse_interfaces_counters(text: str) -> InterfacesCounters:
    """Rows of ``show interfaces counters`` (with or without ``-a``), columns matched by name.

    Empty text gives no rows; text with no ``IFACE`` table raises :class:`ParseError`.
    """
    text = as_text(text)
    rows: list[InterfaceCounters] = []
    warnings = BoundedWarnings(_MAX_WARNINGS)
    header: list[str] | None = None
    seen_header = False
    for kind, number, line in _table_events(text, warnings):
        if kind == "header":
            heads = _CELL_SPLIT.split(line.strip())
            header = heads if heads[0] == "IFACE" else None
            seen_header = seen_header or header is not None
            continue
        if header is None or _ignored(line):
            continue
        cells = _cells(line, len(header))
        if cells is None:
            warnings.add(f"line {number}: row does not match its header")
            continue
        rows.append(_iface_row(header, cells, number))
    if not seen_header and text.strip():
        raise ParseError("no 'IFACE' table in show interfaces counters output")
    return InterfacesCounters(interfaces=rows, warnings=list(warnings))


def _iface_row(header: list[str], cells: list[str], number: int) -> InterfaceCounters:
    values: dict[str, object] = {}
    extra: dict[str, str] = {}
    state: PortState = "unknown"
    for name, cell in zip(header[1:], cells[1:], strict=True):
        if name == "STATE":
            state = _STATE_LETTERS.get(cell.strip(), "unknown")
        elif name in _IFACE_COUNTS:
            values[name.lower()] = _count(cell)
        elif name in _IFACE_RATES:
            values[name.lower()] = _rate(cell)
        elif name in _IFACE_PPS:
            values[name.lower()] = _pps(cell)
        elif name in _IFACE_UTILS:
            values[name.lower() + "_pct"] = _pct(cell)
        else:
            extra[name] = cell
    return InterfaceCounters(iface=cells[0], state=state, extra=extra, line_no=number, **values)
