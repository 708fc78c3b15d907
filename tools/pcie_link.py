"""PCIe link state of GPUs and NICs: sysfs link files, ``lspci -vv`` LnkCap/LnkSta, NVML link fields.

Two facts make this harder than comparing current with max:
- an idle GPU drops its link *speed* to save power, by design; a low generation on a device the
  job does not use (or one that reports GpuIdle) is not a fault. Width does not drop when idle,
  so a narrow link is a fault wherever it is seen on a device the job uses;
- a platform whose slots are one generation below the devices shows every device "downgraded":
  a speed is only low when it is below the speed its busy peers of the same capability run at.
A device that fell off the bus reads all ones (speed ``Unknown``, width 63/255, ``rev ff``):
those readings mean "lost", never a link value.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from forensic.sandbox import ForensicError, NotFoundError
from forensic.tools._inventory import Device, inventory
from forensic.tools._sweep import hosts_for
from forensic.tools.base import HostScope, Signal, Tool, ToolContext, ToolResult, count, register
from forensic.tools.parsers.lspci import LspciDevice, parse_lspci_vv
from forensic.tools.parsers.sysfs import parse_link_speed, parse_link_width

_GEN_SPEED = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0}


@dataclass
class Link:
    host: str
    device: Device
    cur_speed: float | None = None
    max_speed: float | None = None
    cur_width: int | None = None
    max_width: int | None = None
    lost: bool = False
    idle: bool = False
    sources: tuple[str, ...] = ()

    @property
    def component(self) -> str:
        return self.device.component(self.host)

    def text(self) -> str:
        def fmt(s: float | None, w: int | None) -> str:
            return (
                f"{s:g} GT/s x{w}"
                if s is not None and w is not None
                else (f"{s:g} GT/s" if s else f"x{w}" if w else "unknown")
            )

        return f"{fmt(self.cur_speed, self.cur_width)}, capable of {fmt(self.max_speed, self.max_width)}"


def _read(node, path: str) -> str | None:
    try:
        return node.read(path)
    except NotFoundError:
        return None


def _links(ctx: ToolContext, host: str) -> list[Link]:
    inv = inventory(ctx, host)
    node = ctx.source.host(host)
    lspci: list[LspciDevice] = []
    lspci_src = None
    if node.has_command(["lspci", "-vv"]):
        lspci = parse_lspci_vv(node.run(["lspci", "-vv"]))
        lspci_src = node.command_source(["lspci", "-vv"])
    nvml_by_index = {d.index: d for d in inv.nvml.devices} if inv.nvml else {}
    out: list[Link] = []
    for dev in inv.devices():
        link = Link(host=host, device=dev)
        sources: list[str] = []
        if dev.pci is not None:
            base = f"/sys/bus/pci/devices/{dev.pci.sysfs_form()}"
            cs, ms = _read(node, f"{base}/current_link_speed"), _read(node, f"{base}/max_link_speed")
            cw, mw = _read(node, f"{base}/current_link_width"), _read(node, f"{base}/max_link_width")
            if any(v is not None for v in (cs, ms, cw, mw)):
                sources.append(
                    node.source(base + "/current_link_speed")
                    if cs is not None
                    else f"nodes/{host}/sys{base[4:]}"
                )
                link.cur_speed = parse_link_speed(cs) if cs is not None else None
                link.max_speed = parse_link_speed(ms) if ms is not None else None
                link.cur_width = parse_link_width(cw) if cw is not None else None
                link.max_width = parse_link_width(mw) if mw is not None else None
                # A file that exists but does not parse is the all-ones read of a lost device.
                if (cs is not None and link.cur_speed is None) or (
                    cw is not None and cw.strip() and link.cur_width is None
                ):
                    link.lost = True
            for d in lspci:
                if d.address.matches(dev.pci):
                    sources.append(lspci_src or "")
                    if d.lost:
                        link.lost = True
                    link.cur_speed = link.cur_speed or d.lnksta_speed_gts
                    link.max_speed = link.max_speed or d.lnkcap_speed_gts
                    link.cur_width = link.cur_width or d.lnksta_width
                    link.max_width = link.max_width or d.lnkcap_width
        if dev.kind == "gpu":
            nv = nvml_by_index.get(int(dev.name[3:]))
            if nv is not None and not nv.lost:
                if inv.nvml_source:
                    sources.append(inv.nvml_source)
                link.cur_speed = link.cur_speed or _GEN_SPEED.get(nv.pcie_gen_current or 0)
                link.max_speed = link.max_speed or _GEN_SPEED.get(nv.pcie_gen_max or 0)
                link.cur_width = link.cur_width or nv.pcie_width_current
                link.max_width = link.max_width or nv.pcie_width_max
                if nv.clocks_event_reasons is not None and nv.clocks_event_reasons & 0x1:
                    link.idle = True
        if not dev.in_job:
            link.idle = True
        link.sources = tuple(s for s in dict.fromkeys(sources) if s)
        if link.sources:
            out.append(link)
    return out


@register
class PcieLink(Tool):
    name = "pcie_link"
    emits = frozenset({"device_lost", "pcie_degraded"})
    description = (
        "PCIe link speed and width of each GPU and NIC (sysfs, lspci -vv, NVML), judged against the device's "
        "capability and its busy peers; tells a narrow or slow link on a device the job uses from the power-saving "
        "low generation of an idle device, and flags lost devices. Scope: one host or all."
    )
    cost = 1.0

    def run(self, ctx: ToolContext, args: HostScope) -> ToolResult:
        links: list[Link] = []
        errors: list[str] = []
        hosts, sweep = hosts_for(ctx, args.host, ("gpu", "nic"))
        for host in hosts:
            try:
                links.extend(_links(ctx, host))
            except NotFoundError:  # not recorded: absence, not something unread
                pass
            except ForensicError as exc:
                errors.append(f"{host}: {exc}")
        if not links:
            return ToolResult(
                status="error" if errors else "no_data",
                summary="no PCIe link readings" + (f": {errors[0]}" if errors else ""),
                data={"errors": errors},
                unread=errors,
            )
        # The speed busy devices of each (kind, capability) actually run at: the platform's norm.
        norm: dict[tuple[str, float | None], float] = {}
        groups: dict[tuple[str, float | None], Counter] = {}
        for link in links:
            if not link.idle and not link.lost and link.cur_speed:
                groups.setdefault((link.device.kind, link.max_speed), Counter())[link.cur_speed] += 1
        for key, counts in groups.items():
            norm[key] = counts.most_common(1)[0][0]

        signals: list[Signal] = []
        idle_low: list[str] = []
        spare_degraded: list[str] = []
        for link in links:
            kind = "gpu" if link.device.kind == "gpu" else "nic"
            values = {
                "cur_speed_gts": link.cur_speed,
                "max_speed_gts": link.max_speed,
                "cur_width": link.cur_width,
                "max_width": link.max_width,
                "in_job": link.device.in_job,
            }
            if link.lost:
                signals.append(
                    Signal(
                        name="device_lost",
                        component=link.component,
                        kind=kind,
                        detail=f"{link.component} PCIe config reads all ones (link Unknown / rev ff): the device is lost",
                        values=values,
                    )
                )
                continue
            narrow = (
                link.cur_width is not None and link.max_width is not None and link.cur_width < link.max_width
            )
            slow = (
                link.cur_speed is not None and link.max_speed is not None and link.cur_speed < link.max_speed
            )
            below_peers = (
                slow
                and link.cur_speed is not None
                and link.cur_speed < norm.get((link.device.kind, link.max_speed), link.max_speed or 0)
            )
            if not link.device.in_job:
                if narrow or slow:
                    (spare_degraded if narrow else idle_low).append(f"{link.component} ({link.text()})")
                continue
            if narrow or (below_peers and not link.idle):
                signals.append(
                    Signal(
                        name="pcie_degraded",
                        component=link.component,
                        kind=kind,
                        detail=f"{link.component} PCIe link at {link.text()}",
                        values=values,
                    )
                )
            elif slow and link.idle:
                idle_low.append(f"{link.component} ({link.text()})")
        bad = [s.component for s in signals]
        summary = (
            f"{count(len(links), 'PCIe link')} read on {count(len({lk.host for lk in links}), 'host')}; "
        )
        summary += (
            ("degraded or lost: " + ", ".join(f"{s.detail}" for s in signals[:4]))
            if bad
            else "every link in use runs at its capability"
        )
        if idle_low:
            summary += (
                f"; low generation on idle devices (power saving, not a fault): {', '.join(idle_low[:3])}"
            )
        if spare_degraded:
            summary += f"; narrow links on devices outside the job: {', '.join(spare_degraded[:3])}"
        if sweep is not None:
            summary += sweep.phrase()
        return ToolResult(
            status="ok",
            summary=summary,
            signals=signals,
            source=sorted({s for lk in links for s in lk.sources}),
            covered=[lk.component for lk in links],
            data={
                "links": {
                    lk.component: {
                        "link": lk.text(),
                        "idle": lk.idle,
                        "in_job": lk.device.in_job,
                        "lost": lk.lost,
                        "full_width": None
                        if lk.cur_width is None or lk.max_width is None or lk.lost
                        else lk.cur_width >= lk.max_width,
                    }
                    for lk in links
                },
                "idle_low_generation": idle_low,
                "outside_job_degraded": spare_degraded,
                "errors": errors,
                **({"sweep": sweep.data()} if sweep is not None and not sweep.whole else {}),
            },
            unread=errors,
        )
