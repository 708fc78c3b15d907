"""PyTorch ProcessGroupNCCL watchdog lines (reference §6.4), across torch releases.

Every rank of a stuck collective logs the same ``SeqNum``; the rank that never arrived often shows
a lower "last completed" work, or is the one named in "Received a dump signal ... from  rank N"
(two spaces, verbatim). Ranks come from the ``[rankN]:`` prefix torch adds, or from ``[Rank N]`` /
``... Rank N]`` in the body. Sequence numbers count per process group, so events carry the group.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal, cast

from forensic.tools.parsers._text import BoundedWarnings, as_lines, numbered_lines
from pydantic import BaseModel, ConfigDict, PrivateAttr

__all__ = [
    "DumpSignal",
    "GlogSeverity",
    "GlogStamp",
    "TerminalKind",
    "TerminalLine",
    "TorchLog",
    "WatchdogTimeout",
    "WorkStatus",
    "WorkStatusKind",
    "parse_torch_log",
]

_MAX_LINE = 64 * 1024
_MAX_WARNINGS = 20
#: Events of one kind kept per log; later ones are dropped (a bounded buffer), but every event
#: still counts in ``timeout_count`` and in the per-rank facts the methods give, so a capped log still counts right.
MAX_RECORDS = 10_000
_WINDOW = 2048

TerminalKind = Literal[
    "ops_failed",
    "taking_down",
    "watchdog_terminated",
    "terminate_called",
    "heartbeat_timeout",
    "watchdog_stuck",
]
WorkStatusKind = Literal["failure_detected", "exception_detected", "timeout_at"]
GlogSeverity = Literal["I", "W", "E", "F"]

_RANK_PREFIX = re.compile(r"\[rank([0-9]{1,7})\]:")
_RANK_BODY = re.compile(r"\bRank ([0-9]{1,7})\]")
_PG = re.compile(r"\[PG (?:ID )?([0-9]{1,7})(?![0-9])")
_GLOG = re.compile(r"\[([IWEF])(?:([0-9]{3,4}) ([0-9][0-9:.]{7,17}))? ([A-Za-z0-9_.]{1,64}):([0-9]{1,6})\]")
_SEQ = re.compile(r"SeqNum=([0-9]{1,15})(?![0-9])")
_OPTYPE = re.compile(r"OpType=([A-Za-z0-9_]{1,40})")
_NUMEL_IN = re.compile(r"NumelIn=([0-9]{1,18})(?![0-9])")
_NUMEL_OUT = re.compile(r"NumelOut=([0-9]{1,18})(?![0-9])")
_TIMEOUT_MS = re.compile(r"Timeout\(ms\)=([0-9]{1,15})(?![0-9])")
_RAN_FOR = re.compile(r"ran for ([0-9]{1,15}) milliseconds")
_FAILURE_AT = re.compile(r"failure detected by watchdog at work sequence id: (-?[0-9]{1,15})(?![0-9])")
_EXCEPTION_AT = re.compile(r"detected by watchdog at work: (-?[0-9]{1,15})(?![0-9])")
_TIMEOUT_AT = re.compile(r"Timeout at NCCL work: (-?[0-9]{1,15})(?![0-9])")
_ENQUEUED = re.compile(r"last enqueued (?:NCCL )?work: (-?[0-9]{1,15})(?![0-9])", re.IGNORECASE)
_COMPLETED = re.compile(r"last completed (?:NCCL )?work: (-?[0-9]{1,15})(?![0-9])", re.IGNORECASE)
_FROM_RANK = re.compile(r"from\s{1,8}rank\s{1,8}([0-9]{1,7})(?![0-9])")
_EXCEPTION_TYPE = re.compile(r"instance of '([^']{1,128})'")

_WORK_PATTERNS: tuple[tuple[WorkStatusKind, re.Pattern[str]], ...] = (
    ("failure_detected", _FAILURE_AT),
    ("exception_detected", _EXCEPTION_AT),
    ("timeout_at", _TIMEOUT_AT),
)
_TERMINAL_MARKERS: tuple[tuple[str, TerminalKind], ...] = (
    ("Some NCCL operations have failed or timed out", "ops_failed"),
    ("we are taking the entire process down", "taking_down"),
    ("watchdog thread terminated with exception", "watchdog_terminated"),
    ("terminate called after throwing an instance of", "terminate_called"),
    ("Heartbeat monitor timed out", "heartbeat_timeout"),
    ("watchdog got stuck", "watchdog_stuck"),
)


class _Model(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)


class GlogStamp(_Model):
    """The glog header torch prints: ``[E901 05:20:03.123992144 ProcessGroupNCCL.cpp:632]``."""

    severity: GlogSeverity
    """Info, warning, error or fatal."""
    month: int | None = None
    """Month (glog prints no year); None in the old ``[E ProcessGroupNCCL.cpp:455]`` form."""
    day: int | None = None
    """Day of month."""
    time: str | None = None
    """Wall time of day as printed (``05:20:03.123992144``), host local time."""
    source: str
    """``file:line`` that logged it; line numbers differ between torch releases."""


class _TorchEvent(_Model):
    line_no: int
    """1-based line in the log."""
    rank: int | None = None
    """Global rank that logged the line, when the line says."""
    pg: str | None = None
    """Process group id (``PG ID 0`` / ``PG 1``); sequence numbers count per group."""
    stamp: GlogStamp | None = None
    """The glog header, when present."""


class WatchdogTimeout(_TorchEvent):
    """``Watchdog caught collective operation timeout: WorkNCCL(SeqNum=..., ...) ran for N milliseconds``."""

    seq: int | None
    """``SeqNum`` of the collective that timed out."""
    op_type: str | None = None
    """``OpType``: ``ALLREDUCE``, ``_ALLGATHER_BASE``, ``BROADCAST``, ..."""
    numel_in: int | None = None
    """``NumelIn`` (absent before torch ~2.0)."""
    numel_out: int | None = None
    """``NumelOut``."""
    timeout_ms: int | None = None
    """``Timeout(ms)`` configured for the group."""
    ran_for_ms: int | None = None
    """How long the collective ran before the watchdog fired."""
    terminal: bool = False
    """The line is the watchdog thread's terminating exception repeating the timeout."""


class WorkStatus(_TorchEvent):
    """A watchdog line giving the failed work and the group's progress counters."""

    kind: WorkStatusKind
    """``failure_detected`` (torch >= 2.6: "failure detected by watchdog at work sequence id"),
    ``exception_detected`` (older: "Exception ... detected by watchdog at work"), ``timeout_at``
    ("Timeout at NCCL work")."""
    seq: int | None
    """The work that failed."""
    last_enqueued: int | None = None
    """Last work the rank enqueued."""
    last_completed: int | None = None
    """Last work the rank completed."""


class DumpSignal(_TorchEvent):
    """``Received a dump signal due to a collective timeout from  rank N`` (or ``from this local rank``)."""

    source_rank: int | None
    """Rank whose timeout triggered the dump; for ``from this local rank``, the logging rank."""
    from_local_rank: bool
    """The logging rank itself timed out and asked for the dump."""
    last_enqueued: int | None = None
    """Last work the logging rank enqueued."""
    last_completed: int | None = None
    """Last work the logging rank completed."""


class TerminalLine(_TorchEvent):
    """A line that says the process is going down."""

    kind: TerminalKind
    """Which terminal message it is."""
    detail: str | None = None
    """The exception type for ``terminate_called`` (``c10::DistBackendError``)."""


class TorchLog(_Model):
    """ProcessGroupNCCL watchdog evidence from one or many ranks' logs.

    The event lists keep the first ``MAX_RECORDS`` events of each kind; the counts and the
    methods below cover every event the log held (they are folded in as lines are read).
    """

    timeouts: list[WatchdogTimeout]
    """Watchdog timeout lines (the first ``MAX_RECORDS``)."""
    work_status: list[WorkStatus]
    """Failed-work / progress lines (the first ``MAX_RECORDS``)."""
    dump_signals: list[DumpSignal]
    """Dump-signal lines (the first ``MAX_RECORDS``)."""
    terminal: list[TerminalLine]
    """Terminal lines (the first ``MAX_RECORDS``)."""
    warnings: list[str]
    """What the parser skipped, and why."""
    timeout_count: int = 0
    """Every watchdog timeout line, kept or not."""
    _stuck: dict[tuple[str | None, int], set[int]] = PrivateAttr(default_factory=dict)
    _done: dict[tuple[str | None, int], int] = PrivateAttr(default_factory=dict)
    _sources: set[int] = PrivateAttr(default_factory=set)
    _groups: set[str] = PrivateAttr(default_factory=set)
    _dropped: int = PrivateAttr(0)

    def model_post_init(self, __context: object) -> None:
        given = [*self.timeouts, *self.work_status, *self.dump_signals, *self.terminal]
        self.timeout_count = max(self.timeout_count, len(self.timeouts))
        for event in given:
            self._fold(event)

    def _fold(self, event: _TorchEvent) -> None:
        if event.pg is not None:
            self._groups.add(event.pg)
        if (
            isinstance(event, (WatchdogTimeout, WorkStatus))
            and event.seq is not None
            and event.rank is not None
        ):
            self._stuck.setdefault((event.pg, event.seq), set()).add(event.rank)
        if (
            isinstance(event, (WorkStatus, DumpSignal))
            and event.rank is not None
            and event.last_completed is not None
        ):
            key = (event.pg, event.rank)
            self._done[key] = max(self._done.get(key, event.last_completed), event.last_completed)
        if isinstance(event, DumpSignal) and event.source_rank is not None:
            self._sources.add(event.source_rank)

    def _add(self, target: list, event: _TorchEvent) -> None:
        """Fold ``event`` into the counts, and keep it while ``target`` is under the cap."""
        self._fold(event)
        if isinstance(event, WatchdogTimeout):
            self.timeout_count += 1
        if len(target) < MAX_RECORDS:
            target.append(event)
        else:
            self._dropped += 1

    def dropped_records(self) -> int:
        """Events past the per-log cap that were not kept (still counted in the facts below)."""
        return self._dropped

    def stuck_seqnums(self, pg: str | None = None) -> dict[int, set[int]]:
        """seq -> ranks that reported that work stuck or failed (timeouts and failed-work lines)."""
        stuck: dict[int, set[int]] = {}
        for (group, seq), ranks in self._stuck.items():
            if pg is None or group == pg:
                stuck.setdefault(seq, set()).update(ranks)
        return stuck

    def dump_signal_sources(self) -> set[int]:
        """Ranks named as the origin of a dump signal (the first rank to time out)."""
        return set(self._sources)

    def last_completed_by_rank(self, pg: str | None = None) -> dict[int, int]:
        """rank -> highest "last completed" work it reported; pass ``pg`` when groups mix."""
        done: dict[int, int] = {}
        for (group, rank), n in self._done.items():
            if pg is None or group == pg:
                done[rank] = max(done.get(rank, n), n)
        return done

    def process_groups(self) -> set[str]:
        """Process group ids the events mention."""
        return set(self._groups)


def _group_int(pattern: re.Pattern[str], text: str) -> int | None:
    match = pattern.search(text)
    return int(match.group(1)) if match is not None else None


def _stamp(line: str) -> GlogStamp | None:
    match = _GLOG.search(line)
    if match is None:
        return None
    month = day = None
    if match.group(2) is not None:
        mmdd = match.group(2)
        month, day = int(mmdd[:-2]), int(mmdd[-2:])
        if not (1 <= month <= 12 and 1 <= day <= 31):
            month = day = None
    return GlogStamp(
        severity=cast(GlogSeverity, match.group(1)),
        month=month,
        day=day,
        time=match.group(3),
        source=f"{match.group(4)}:{match.group(5)}",
    )


def _context(line: str, number: int) -> dict:
    rank = _group_int(_RANK_PREFIX, line)
    if rank is None:
        rank = _group_int(_RANK_BODY, line)
    pg = _PG.search(line)
    return {"line_no": number, "rank": rank, "pg": pg.group(1) if pg else None, "stamp": _stamp(line)}


def _timeout(line: str, where: dict) -> WatchdogTimeout | None:
    at = line.find("Watchdog caught collective operation timeout")
    if at < 0:
        return None
    body = line[at : at + _WINDOW]
    return WatchdogTimeout(
        seq=_group_int(_SEQ, body),
        op_type=(m.group(1) if (m := _OPTYPE.search(body)) else None),
        numel_in=_group_int(_NUMEL_IN, body),
        numel_out=_group_int(_NUMEL_OUT, body),
        timeout_ms=_group_int(_TIMEOUT_MS, body),
        ran_for_ms=_group_int(_RAN_FOR, body),
        terminal="thread terminated with exception" in line[:at],
        **where,
    )


def _work_status(line: str, where: dict) -> WorkStatus | None:
    for kind, pattern in _WORK_PATTERNS:
        match = pattern.search(line)
        if match is not None:
            body = line[match.start() : match.start() + _WINDOW]
            return WorkStatus(
                kind=kind,
                seq=int(match.group(1)),
                last_enqueued=_group_int(_ENQUEUED, body),
                last_completed=_group_int(_COMPLETED, body),
                **where,
            )
    return None


def _dump_signal(line: str, where: dict) -> DumpSignal | None:
    at = line.find("Received a dump signal")
    if at < 0:
        return None
    body = line[at : at + _WINDOW]
    # Only the words before "and we will try" / "and will start" name the source.
    head = body[:200]
    local = "from this local rank" in head
    source = where["rank"] if local else _group_int(_FROM_RANK, head)
    return DumpSignal(
        source_rank=source,
        from_local_rank=local,
        last_enqueued=_group_int(_ENQUEUED, body),
        last_completed=_group_int(_COMPLETED, body),
        **where,
    )


def _terminal(line: str, where: dict) -> TerminalLine | None:
    for marker, kind in _TERMINAL_MARKERS:
        if marker in line:
            detail = None
            if kind == "terminate_called":
                match = _EXCEPTION_TYPE.search(line)
                detail = match.group(1) if match else None
            return TerminalLine(kind=kind, detail=detail, **where)
    return None


_INTERESTING = (
    "Watchdog",
    "watchdog",
    "dump signal",
    "Timeout at NCCL work",
    "NCCL operations",
    "process down",
    "terminate called",
    "Heartbeat",
)


def parse_torch_log(text: str | Iterable[str]) -> TorchLog:
    """ProcessGroupNCCL watchdog events from any log; other lines are ignored.

    A log without such lines gives an empty :class:`TorchLog`; only non-text input raises
    :class:`ParseError`.
    """
    lines = as_lines(text)
    log = TorchLog(timeouts=[], work_status=[], dump_signals=[], terminal=[], warnings=[])
    warnings = BoundedWarnings(_MAX_WARNINGS)
    for number, line in numbered_lines(lines, _MAX_LINE, warnings):
        if line is None:
            continue
        if not any(word in line for word in _INTERESTING):
            continue
        where = _context(line, number)
        timeout = _timeout(line, where)
        if timeout is not None:
            log._add(log.timeouts, timeout)
        status = _work_status(line, where)
        if status is not None:
            log._add(log.work_status, status)
        dump = _dump_signal(line, where)
        if dump is not None:
            log._add(log.dump_signals, dump)
        terminal = _terminal(line, where)
        if terminal is not None:
            log._add(log.terminal, terminal)
    if log._dropped:
        warnings.add(
            f"{log._dropped} events past the first {MAX_RECORDS} of a kind dropped (per-log cap); "
            "counts and per-rank facts cover every line"
        )
    log.warnings = list(warnings)
    return log
