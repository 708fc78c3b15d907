"""The kernel log of each host: XIDs, "fallen off the bus", AER, mlx5 link and module events.

Every line prefix of ``dmesg``, ``dmesg -T``, ``journalctl -k`` and ``/dev/kmsg`` is accepted
(the parser's job). This tool places events in time against the incident window (a line far
older than the window is history, not a symptom) and names the device by joining its PCI
address with the host's inventory.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import NamedTuple

from forensic.sandbox import ForensicError, NotFoundError, ParseError, TruncatedStreamError
from forensic.tools._inventory import inventory
from forensic.tools._sweep import hosts_for
from forensic.tools._xid import XID_SIGNALS, xid_signal
from forensic.tools.base import HostScope, Signal, Tool, ToolContext, ToolResult, by_signal, count, register
from forensic.tools.parsers.kernel_log import KernelLog, parse_kernel_log

#: The prefixes every kernel log format puts on its lines (dmesg, dmesg -T, journalctl -k, /dev/kmsg,
#: ISO-stamped syslog); a file with none of them and no recognised event is not a kernel log.
_KERNEL_LINE = re.compile(
    r"^\s{0,8}(?:\[\s{0,12}\d{1,10}\.\d{1,9}\]|\[[A-Z][a-z]{2} [A-Z][a-z]{2}\s{1,2}\d{1,2} |"
    r"[A-Z][a-z]{2}\s{1,2}\d{1,2} \d{2}:\d{2}:\d{2}|\d{1,3},\d{1,20},\d{1,20},|\d{4}-\d{2}-\d{2}[T ]\d{2}:)",
    re.MULTILINE,
)
_SNIFF = 1 << 20

#: Events this long before the window opens are history: a week-old XID explains nothing today.
HISTORY_BEFORE_S = 2 * 3600
#: Events after the window closes (plus slack for clock skew) are not part of it either.
AFTER_S = 3600


class KernelText(NamedTuple):
    """A host's recorded kernel log text, where it came from, and what of it was lost."""

    text: str
    source: str
    #: None when the whole file was read; else what was lost (a compressed stream cut short).
    lost: str | None = None


class KernelRead(NamedTuple):
    """A host's parsed kernel log, its source, and what of the file was lost (None: nothing)."""

    log: KernelLog
    source: str
    lost: str | None = None


def _readable_part(exc: TruncatedStreamError, source: str) -> KernelText:
    """The complete lines before a compressed kernel log broke off, or the error again when that
    part holds no kernel line (nothing of it is readable as a kernel log: unread, not partial)."""
    prefix = exc.readable.decode("utf-8", errors="replace")
    if not _KERNEL_LINE.search(prefix[:_SNIFF]):
        raise exc
    # The line the stream broke in is dropped: a cut line can misread (an XID number cut short).
    cut = prefix.rfind("\n") + 1
    text = prefix[:cut]
    lines = text.count("\n")
    why = str(exc).split(": ", 1)[-1]
    return KernelText(
        text,
        source,
        f"{why}: the first {len(exc.readable)} bytes were read ({lines} complete "
        f"line{'s' if lines != 1 else ''}); everything after them is lost",
    )


def kernel_text(ctx: ToolContext, host: str) -> KernelText | None:
    """The recorded kernel log text of ``host`` (dmesg, else journalctl -k) and its source path,
    memoised so that every tool reading it in one investigation opens the file once. A compressed
    log cut short gives its complete readable lines, with ``lost`` saying what was not read."""

    def build() -> KernelText | None:
        node = ctx.source.host(host)
        for argv in (["dmesg"], ["journalctl", "-k"]):
            if node.has_command(argv):
                try:
                    return KernelText(node.run(argv), node.command_source(argv))
                except TruncatedStreamError as exc:
                    return _readable_part(exc, node.command_source(argv))
        return None

    return ctx.memo(f"kernel_text:{host}", build)


def read_kernel_log(ctx: ToolContext, host: str) -> KernelRead | None:
    """The parsed kernel log of ``host``, its source path and what was lost, memoised; None when
    not recorded."""

    def build() -> KernelRead | None:
        got = kernel_text(ctx, host)
        if got is None:
            return None
        text, source, lost = got
        collected = ctx.source.collected(host)
        log = parse_kernel_log(
            text,
            boot_unix=collected.get("boot"),
            year=log_year(ctx.source.window),
            not_after=log_read_at(ctx.source.window, collected),
        )
        if text.strip() and not log.events and not _KERNEL_LINE.search(text[:_SNIFF]):
            # Text with no kernel line in it is not a quiet kernel log: saying "no fault"
            # about it would count an unreadable file as health.
            raise ParseError(f"{source}: no line reads as a kernel log line")
        return KernelRead(log, source, lost)

    return ctx.memo(f"kernel_log:{host}", build)


def log_year(window: tuple[float | None, float | None]) -> int | None:
    """The year of the window's start: syslog-style prefixes print no year."""
    return datetime.fromtimestamp(window[0], UTC).year if window[0] else None


def log_read_at(window: tuple[float | None, float | None], collected: dict) -> float | None:
    """The latest a kernel line can be (the snapshot's ``now``, else the window's end): syslog
    stamps print no year, and the one that puts a line after this is last year's."""
    times = [t for t in (collected.get("now"), window[1]) if isinstance(t, (int, float))]
    return max(times) if times else None


def placed(window: tuple[float | None, float | None], t: float | None) -> str:
    """'window', 'history' or 'unknown' (no wall time: only the order of lines is known)."""
    if t is None:
        return "unknown"
    start, end = window
    if start is not None and t < start - HISTORY_BEFORE_S:
        return "history"
    if end is not None and t > end + AFTER_S:
        return "history"
    return "window"


@register
class KernelLogTool(Tool):
    name = "kernel_log"
    emits = frozenset({"nic_link_flap", "pcie_aer"}) | XID_SIGNALS
    description = (
        "Kernel log of each host (dmesg, dmesg -T, journalctl -k, /dev/kmsg): NVIDIA XIDs by class (fell off "
        "the bus, memory, NVLink, application), GPUs that fell off the bus, PCIe AER errors, mlx5 link flaps; "
        "events are placed against the incident window and mapped to GPU/NIC names. Scope: one host or all."
    )
    cost = 1.0

    def run(self, ctx: ToolContext, args: HostScope) -> ToolResult:
        signals: list[Signal] = []
        sources: list[str] = []
        covered: list[str] = []
        history: list[str] = []
        other: list[str] = []
        errors: list[str] = []
        partial: list[str] = []
        capped: list[str] = []
        # Correctable AER per part: the link layer retried and recovered; a few are noise on any
        # busy link. No shipped playbook blames them alone; the report says so for a healthy run
        # when the part's link kept its width (harness.health.noise).
        corrected: dict[str, int] = {}
        read_any = False
        hosts, sweep = hosts_for(ctx, args.host, ("gpu", "nic"))
        for host in hosts:
            try:
                got = read_kernel_log(ctx, host)
            except NotFoundError:  # not recorded: absence, not something unread
                continue
            except ForensicError as exc:
                errors.append(f"{host}: {exc}")
                continue
            if got is None:
                continue
            log, source, lost = got
            read_any = True
            sources.append(source)
            if lost:
                partial.append(f"{host}: {source}: partly read: {lost}")
            # A log past the parser's per-kind event cap says so in the record: what was dropped is not absent.
            capped.extend(f"{source}: {w}" for w in log.warnings if "per-log cap" in w)
            inv = inventory(ctx, host)
            covered.append(host)
            covered.extend(d.component(host) for d in inv.devices())
            for ev in log.events:
                dev = inv.by_pci(ev.pci)
                comp = dev.component(host) if dev else (f"{host}/{ev.pci}" if ev.pci else host)
                when = placed(ctx.source.window, ev.time_unix)
                stamp = f"line {ev.line_no}" + (
                    f", {datetime.fromtimestamp(ev.time_unix, UTC):%Y-%m-%d %H:%M:%S}Z"
                    if ev.time_unix is not None
                    else ""
                )
                if when == "history":
                    if ev.kind in ("xid", "fell_off_bus"):
                        history.append(f"{comp} {'XID ' + str(ev.xid) if ev.xid else ev.kind} ({stamp})")
                    continue
                values = {"line": ev.line_no, "time_unix": ev.time_unix, "when": when}
                if ev.kind == "xid":
                    sig = xid_signal(
                        ev.xid,
                        comp,
                        f"{comp} XID {ev.xid} ({ev.mnemonic}) in the kernel log, {stamp}",
                        **values,
                    )
                    if sig is not None and (dev is None or dev.kind == "gpu"):
                        signals.append(sig)
                    else:
                        other.append(f"{comp} XID {ev.xid} ({ev.category}, {stamp})")
                elif ev.kind == "fell_off_bus":
                    signals.append(
                        Signal(
                            name="xid_fell_off_bus",
                            component=comp,
                            kind="gpu",
                            detail=f"{comp} fell off the bus (kernel log, {stamp})",
                            values={**values, "xid": 79},
                        )
                    )
                elif (
                    ev.kind == "aer" and ev.form == "bus_error" and dev is not None
                ):  # one error logs a "received" line too
                    if (ev.severity or "").lower().startswith("correct"):
                        corrected[comp] = corrected.get(comp, 0) + 1
                    signals.append(
                        Signal(
                            name="pcie_aer",
                            component=comp,
                            kind=dev.kind,
                            detail=f"{comp} PCIe AER {ev.severity or ''} error {ev.error_type or ''} ({stamp})".replace(
                                "  ", " "
                            ),
                            values={**values, "severity": ev.severity},
                        )
                    )
                elif ev.kind == "mlx5_link" and ev.link_state.upper() == "DOWN":
                    nic = ev.ibdev or (dev.name if dev else None) or ev.netdev
                    if nic:
                        ncomp = f"{host}/{nic}" if not dev else comp
                        signals.append(
                            Signal(
                                name="nic_link_flap",
                                component=ncomp,
                                kind="nic",
                                detail=f"{ncomp} link went DOWN ({stamp})",
                                values=values,
                            )
                        )
        if not read_any:
            return ToolResult(
                status="error" if errors else "no_data",
                summary="no kernel log recorded" + (f": {errors[0]}" if errors else ""),
                data={"errors": errors},
                unread=errors,
            )
        signals = _dedupe(signals)
        summary = f"kernel logs of {count(len(sources), 'host')} read; "
        summary += (
            ("in the window: " + by_signal(signals)) if signals else "no GPU or link fault in the window"
        )
        if other:
            summary += f"; other XIDs (no root cause on their own): {', '.join(other[:3])}"
        if corrected:
            summary += "; correctable AER (corrected by the link layer, no fault alone): " + ", ".join(
                f"{c} ({n})" for c, n in sorted(corrected.items())[:3]
            )
        if history:
            summary += f"; history, long before the window: {', '.join(history[:3])}"
        if capped:
            summary += f"; capped (not every event kept): {capped[0]}" + (
                f" and {len(capped) - 1} more" if len(capped) > 1 else ""
            )
        if partial:
            summary += f"; partly read: {partial[0]}" + (
                f" and {len(partial) - 1} more" if len(partial) > 1 else ""
            )
        if sweep is not None:
            summary += sweep.phrase()
        return ToolResult(
            status="ok",
            summary=summary,
            source=sources,
            signals=signals,
            covered=covered,
            data={
                "history": history,
                "other_xids": other,
                **({"correctable_aer": corrected} if corrected else {}),
                "errors": errors,
                **({"capped": capped} if capped else {}),
                **({"sweep": sweep.data()} if sweep is not None and not sweep.whole else {}),
            },
            unread=errors,
            partial=partial,
        )


def _dedupe(signals: list[Signal]) -> list[Signal]:
    """One signal per (name, component): the first occurrence, with the count of repeats."""
    first: dict[tuple[str, str], Signal] = {}
    count: dict[tuple[str, str], int] = {}
    for s in signals:
        key = (s.name, s.component)
        count[key] = count.get(key, 0) + 1
        first.setdefault(key, s)
    return [s.model_copy(update={"values": {**s.values, "count": count[k]}}) for k, s in first.items()]
