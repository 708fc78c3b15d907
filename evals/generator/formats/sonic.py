"""SONiC switch CLI output: `show pfcwd stats`, `show pfc counters`, `show interfaces counters`."""

from __future__ import annotations

from ..sim import SwitchSim


def _table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    out = [
        "  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True)),
        "  ".join("-" * w for w in widths),
    ]
    for r in rows:
        out.append("  ".join(v.rjust(w) for v, w in zip(r, widths, strict=True)))
    return "\n".join(out) + "\n"


def _port_key(p: str) -> int:
    d = "".join(ch for ch in p if ch.isdigit())
    return int(d or 0)


def pfcwd_stats(ss: SwitchSim) -> str:
    headers = [
        "QUEUE",
        "STATUS",
        "STORM DETECTED/RESTORED",
        "TX OK/DROP",
        "RX OK/DROP",
        "TX LAST OK/DROP",
        "RX LAST OK/DROP",
    ]
    rows = []
    for r in sorted(ss.pfcwd, key=lambda r: _port_key(r.port)):
        rows.append(
            [
                f"{r.port}:{r.queue}",
                r.status,
                f"{r.detected}/{r.restored}",
                f"{r.tx_ok}/{r.tx_drop}",
                f"{r.rx_ok}/{r.rx_drop}",
                f"{r.tx_last_ok}/{r.tx_last_drop}",
                f"{r.rx_last_ok}/{r.rx_last_drop}",
            ]
        )
    return _table(headers, rows)


def pfc_counters(ss: SwitchSim, t: float) -> str:
    ports = sorted(ss.ports, key=_port_key)
    out = []
    for direction, attr in (("Rx", "pfc_rx"), ("Tx", "pfc_tx")):
        headers = [f"Port {direction}"] + [f"PFC{i}" for i in range(8)]
        rows = []
        for p in ports:
            d = getattr(ss.ports[p], attr)
            rows.append([p] + [f"{d[i].int_at(t):,}" if i in d else "0" for i in range(8)])
        out.append(_table(headers, rows))
    return "\n".join(out)


def interfaces_counters(ss: SwitchSim, t: float, window: float) -> str:
    headers = [
        "IFACE",
        "STATE",
        "RX_OK",
        "RX_BPS",
        "RX_UTIL",
        "RX_ERR",
        "RX_DRP",
        "RX_OVR",
        "TX_OK",
        "TX_BPS",
        "TX_UTIL",
        "TX_ERR",
        "TX_DRP",
        "TX_OVR",
    ]
    rows = []
    for p in sorted(ss.ports, key=_port_key):
        ps = ss.ports[p]
        rx_b = ps.in_octets.at(t) - ps.in_octets.at(t - window)
        tx_b = ps.out_octets.at(t) - ps.out_octets.at(t - window)
        rx_bps, tx_bps = rx_b / window, tx_b / window
        speed = (
            100e9 if p.startswith("Ethernet2") and _port_key(p) >= 256 else 50e9
        )  # bytes/s: 800G up, 400G down
        rows.append(
            [
                p,
                "U",
                f"{int(ps.in_octets.at(t) / 4200):,}",
                f"{rx_bps / 1e6:,.2f} MB/s",
                f"{100 * rx_bps / speed:.2f}%",
                "0",
                "0",
                "N/A",
                f"{int(ps.out_octets.at(t) / 4200):,}",
                f"{tx_bps / 1e6:,.2f} MB/s",
                f"{100 * tx_bps / speed:.2f}%",
                "0",
                f"{ps.out_discards.int_at(t):,}",
                "N/A",
            ]
        )
    return _table(headers, rows)
