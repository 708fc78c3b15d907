"""Semantics-preserving rewrites of an incident bundle (docs/reliability.md, "Metamorphic tests").

Each transformation copies a bundle folder into a new folder and writes the same incident in
another presentation that ``/work/shared/spec/bundle.md`` allows: other host, device, switch
and port names; files gzip-compressed or not; rows and lists in another order; ``dmesg`` in
another of its four styles; the host in another metrics label; files a reader must ignore. The
source folder is never written. A transformation returns the renames it made, so a verdict's
component can be mapped into the new names.

A few transformations are *lossy*: they drop optional files. The same incident with less
evidence may get a weaker status, never a stronger one, and never a different fault.
"""

from __future__ import annotations

import gzip
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

Renames = dict[str, str]
TextFn = Callable[[tuple[str, ...], str], str]
PathFn = Callable[[tuple[str, ...]], tuple[str, ...] | None]


# --------------------------------------------------------------------------------------------
# Copying


def _read(p: Path) -> str:
    data = p.read_bytes()
    if p.name.endswith(".gz"):
        data = gzip.decompress(data)
    return data.decode("utf-8", errors="surrogateescape")


def _write(p: Path, text: str, *, gz: bool) -> None:
    p.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8", errors="surrogateescape")
    # mtime=0: the same text gives the same bytes, so two runs of a test see the same bundle.
    p.write_bytes(gzip.compress(data, mtime=0) if gz else data)


def logical(parts: tuple[str, ...]) -> tuple[str, ...]:
    """A file's path without its ``.gz`` suffix (what the spec calls the file)."""
    if parts and parts[-1].endswith(".gz"):
        return (*parts[:-1], parts[-1][:-3])
    return parts


def copy_bundle(src: Path, dst: Path, *, text: TextFn | None = None, path: PathFn | None = None) -> None:
    """Copy ``src`` to ``dst``; ``path`` maps a file's relative path (``None`` drops the file) and
    ``text`` rewrites a file's decompressed text (called with its logical path). A file keeps its
    compression; binary files are copied as they are."""
    for p in sorted(src.rglob("*")):
        if not p.is_file():
            continue
        rel = p.relative_to(src).parts
        new = path(rel) if path else rel
        if new is None:
            continue
        q = dst.joinpath(*new)
        q.parent.mkdir(parents=True, exist_ok=True)
        if text is None:
            q.write_bytes(p.read_bytes())
            continue
        _write(q, text(logical(rel), _read(p)), gz=p.name.endswith(".gz"))


def find(root: Path, *logical_parts: str) -> Path | None:
    """The file at a logical path, compressed or not."""
    p = root.joinpath(*logical_parts)
    if p.is_file():
        return p
    gz = p.with_name(p.name + ".gz")
    return gz if gz.is_file() else None


def load_json(root: Path, *parts: str) -> dict:
    p = find(root, *parts)
    return json.loads(_read(p)) if p else {}


def hosts_of(root: Path) -> list[str]:
    names = [h["name"] for h in load_json(root, "topology.json").get("hosts", [])]
    nodes = root / "nodes"
    if nodes.is_dir():
        names += [p.name for p in nodes.iterdir() if p.is_dir() and p.name not in names]
    return names


def switches_of(root: Path) -> list[str]:
    topo = load_json(root, "topology.json")
    names = [s["name"] for s in topo.get("switches", [])]
    for s in topo.get("switches", []):
        names += [lk["peer"] for lk in s.get("links", []) if lk.get("peer")]
    for h in topo.get("hosts", []):
        names += [n["switch"] for n in h.get("nics", []) if n.get("switch")]
    if (root / "switches").is_dir():
        names += [p.name for p in (root / "switches").iterdir()]
    return list(dict.fromkeys(names))


def _renamer(renames: Renames) -> Callable[[str], str]:
    """Replace every whole-name occurrence (not part of a longer name) at once."""
    if not renames:
        return lambda s: s
    # A name ends where no name character follows; a dot ends it only when no label follows
    # ("gpu1.log" is gpu1 then ".log"; "gpu1.dc2" is another, longer name).
    pattern = re.compile(
        r"(?<![A-Za-z0-9_.-])("
        + "|".join(re.escape(k) for k in sorted(renames, key=len, reverse=True))
        + r")(?![A-Za-z0-9_-]|\.(?!log\b|om\b|txt\b|json\b|csv\b|gz\b)[A-Za-z0-9])"
    )
    return lambda s: pattern.sub(lambda m: renames[m.group(1)], s)


def _rename_everywhere(src: Path, dst: Path, renames: Renames) -> Renames:
    sub = _renamer(renames)

    def path(rel: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(sub(part) for part in rel)

    copy_bundle(src, dst, text=lambda _rel, t: sub(t), path=path)
    return renames


def map_component(component: str | None, renames: Renames) -> str | None:
    if component is None:
        return None
    return "/".join(renames.get(part, part) for part in component.split("/"))


# --------------------------------------------------------------------------------------------
# Names


def rename_hosts_fqdn(src: Path, dst: Path, rng: random.Random) -> Renames:
    """Long dotted names, given in shuffled order (sorting by name no longer sorts as before)."""
    hosts = hosts_of(src)
    order = list(range(len(hosts)))
    rng.shuffle(order)
    renames = {
        h: f"n{o:04d}.rack{o % 7}.row-b.fra2.compute.example-corp.internal"
        for h, o in zip(hosts, order, strict=True)
    }
    return _rename_everywhere(src, dst, renames)


def rename_hosts_ip(src: Path, dst: Path, rng: random.Random) -> Renames:
    """IP-like dashed names (``10-90-43-147``), in shuffled order."""
    hosts = hosts_of(src)
    order = rng.sample(range(1, 250), len(hosts))
    return _rename_everywhere(
        src, dst, {h: f"10-90-{40 + o % 3}-{o}" for h, o in zip(hosts, order, strict=True)}
    )


_MLX = re.compile(r"\bmlx5_\d{1,3}\b")


def rename_rdma_devices(src: Path, dst: Path, rng: random.Random) -> Renames:
    """Every RDMA device ``mlx5_<n>`` gets another name of the ``ibp<bus>s0`` style, in another
    order than the PCI one, everywhere (topology, sysfs folders, NCCL logs, metric labels)."""
    names: set[str] = set()
    for p in src.rglob("*"):
        if p.is_file() and (p.suffix in {".json", ".log", ".om", ".gz"} or "infiniband" in p.parts):
            names.update(_MLX.findall(_read(p)))
        names.update(m for part in p.parts for m in _MLX.findall(part))
    old = sorted(names)
    new = rng.sample(range(100, 999), len(old))
    return _rename_everywhere(src, dst, {o: f"rdma-p{n}s0" for o, n in zip(old, new, strict=True)})


def rename_switches(src: Path, dst: Path, rng: random.Random) -> Renames:
    switches = switches_of(src)
    order = list(range(len(switches)))
    rng.shuffle(order)
    return _rename_everywhere(
        src, dst, {s: f"sw{o:03d}.fabric.dc.example" for s, o in zip(switches, order, strict=True)}
    )


_ETH_PORT = re.compile(r"\bEthernet(\d{1,4})\b")


def rename_switch_ports(src: Path, dst: Path, rng: random.Random) -> Renames:
    """SONiC ``Ethernet<n>`` ports as Cumulus-style ``swp<n+1>`` (topology, SONiC tables, SNMP
    ``ifName``). Bundles whose ports are bare numbers are copied unchanged."""
    renames: Renames = {}

    def sub(_rel: tuple[str, ...], t: str) -> str:
        def one(m: re.Match[str]) -> str:
            renames[m.group(0)] = f"swp{int(m.group(1)) + 1}"
            return renames[m.group(0)]

        return _ETH_PORT.sub(one, t)

    copy_bundle(src, dst, text=sub)
    return renames


# --------------------------------------------------------------------------------------------
# Compression, order, extra and missing files


def gzip_all(src: Path, dst: Path, rng: random.Random) -> Renames:
    """Every file but ``incident.json`` compressed (the spec: every text file may be)."""

    def path(rel: tuple[str, ...]) -> tuple[str, ...]:
        if rel == ("incident.json",) or rel[-1].endswith(".gz"):
            return rel
        return (*rel[:-1], rel[-1] + ".gz")

    for p in sorted(src.rglob("*")):
        if p.is_file():
            rel = p.relative_to(src).parts
            new = path(rel)
            _write(dst.joinpath(*new), _read(p), gz=new[-1].endswith(".gz"))
    return {}


def gunzip_all(src: Path, dst: Path, rng: random.Random) -> Renames:
    for p in sorted(src.rglob("*")):
        if p.is_file():
            _write(dst.joinpath(*logical(p.relative_to(src).parts)), _read(p), gz=False)
    return {}


def shuffle_steps(src: Path, dst: Path, rng: random.Random) -> Renames:
    """``steps.csv`` rows in any order, with an unknown column appended."""

    def text(rel: tuple[str, ...], t: str) -> str:
        if rel != ("job", "steps.csv"):
            return t
        lines = t.splitlines()
        rows = [ln + f",{rng.randint(0, 9)}" for ln in lines[1:] if ln]
        rng.shuffle(rows)
        return "\n".join([lines[0] + ",collector_shard", *rows]) + "\n"

    copy_bundle(src, dst, text=text)
    return {}


def shuffle_topology(src: Path, dst: Path, rng: random.Random) -> Renames:
    """``hosts``, ``ranks`` and switch lists in another order (rank placement is explicit)."""

    def text(rel: tuple[str, ...], t: str) -> str:
        if rel != ("topology.json",):
            return t
        topo = json.loads(t)
        if "ranks" not in topo:  # without ranks, host order places ranks: keep it
            return t
        for key in ("hosts", "ranks", "switches"):
            if isinstance(topo.get(key), list):
                rng.shuffle(topo[key])
        return json.dumps(topo, indent=1)

    copy_bundle(src, dst, text=text)
    return {}


def add_unknown_files(src: Path, dst: Path, rng: random.Random) -> Renames:
    """Files and metric families no reader knows, which every reader must ignore."""
    copy_bundle(src, dst)
    (dst / "README.txt").write_text("collected by fleet-snap 3.2\n")
    (dst / "job" / "config.yaml").parent.mkdir(parents=True, exist_ok=True)
    (dst / "job" / "config.yaml").write_text("lr: 1.5e-4\nbatch: 2048\n")
    (dst / "job" / "logs").mkdir(parents=True, exist_ok=True)
    (dst / "job" / "logs" / "README").write_text("logs are rotated hourly\n")
    start = load_json(src, "incident.json")["window"]["start"]
    t0 = int(datetime.fromisoformat(start.replace("Z", "+00:00")).timestamp())
    families = [
        "# TYPE fleet_snap_scrape_seconds gauge",
        "# HELP fleet_snap_scrape_seconds Time one scrape took.",
    ]
    for host in (src / "nodes").iterdir() if (src / "nodes").is_dir() else []:
        node = dst / "nodes" / host.name
        (node / "cmd").mkdir(parents=True, exist_ok=True)
        (node / "cmd" / "uname-a.txt").write_text(
            f"Linux {host.name} 5.15.0-105-generic #115-Ubuntu SMP x86_64\n"
        )
        (node / "cmd" / "free-m.txt").write_text(
            "               total        used        free\nMem:         2063772      412345     1651427\n"
        )
        hw = node / "sys" / "class" / "hwmon" / "hwmon0"
        hw.mkdir(parents=True, exist_ok=True)
        (hw / "temp1_input").write_text("41000\n")
        (node / "extra" / "notes").mkdir(parents=True, exist_ok=True)
        (node / "extra" / "notes" / "ticket.md").write_text("see the incident\n")
        families += [
            f'fleet_snap_scrape_seconds{{instance="{host.name}:9100"}} 0.{i + 1} {t0 + 60 * i}'
            for i in range(3)
        ]
    (dst / "metrics").mkdir(exist_ok=True)
    (dst / "metrics" / "fleet-snap.om").write_text("\n".join([*families, "# EOF"]) + "\n")
    for sw in (src / "switches").iterdir() if (src / "switches").is_dir() else []:
        (dst / "switches" / sw.name / "cmd" / "show-version.txt").write_text(
            "SONiC Software Version: SONiC.202305\n"
        )
    return {}


_OPTIONAL_NOT_GPU = re.compile(r"^(switches/.*|metrics/snmp\.om|nodes/[^/]+/cmd/(top|pressure-[a-z]+)\.txt)$")


def drop_optional(src: Path, dst: Path, rng: random.Random) -> Renames:
    """Lossy: drop the switch CLI outputs, SNMP port series and host-load files (optional)."""
    copy_bundle(src, dst, path=lambda rel: None if _OPTIONAL_NOT_GPU.match("/".join(logical(rel))) else rel)
    return {}


def drop_collected(src: Path, dst: Path, rng: random.Random) -> Renames:
    """Lossy: drop every ``collected.json``: boot-relative kernel lines lose their wall time."""
    copy_bundle(src, dst, path=lambda rel: None if logical(rel)[-1] == "collected.json" else rel)
    return {}


# --------------------------------------------------------------------------------------------
# Presentations of the same facts

_HOST_LABEL = re.compile(r"\b(Hostname|hostname)=\"([^\"]*)\"")


def host_label_case(src: Path, dst: Path, rng: random.Random) -> Renames:
    """``Hostname`` (older dcgm-exporter) and ``hostname`` (newer) swapped."""

    def text(rel: tuple[str, ...], t: str) -> str:
        if rel[0] != "metrics":
            return t
        return _HOST_LABEL.sub(
            lambda m: f'{"hostname" if m.group(1) == "Hostname" else "Hostname"}="{m.group(2)}"', t
        )

    copy_bundle(src, dst, text=text)
    return {}


def host_label_instance(src: Path, dst: Path, rng: random.Random) -> Renames:
    """The host only in ``instance``, with the exporter's port (``gpu-a017:9400``)."""

    def text(rel: tuple[str, ...], t: str) -> str:
        if rel[0] != "metrics":
            return t
        return _HOST_LABEL.sub(lambda m: f'instance="{m.group(2)}:9400"', t)

    copy_bundle(src, dst, text=text)
    return {}


_SPEED = re.compile(r"^(\d+(?:\.\d+)?) GT/s PCIe\s*$")


def sysfs_old_kernel(src: Path, dst: Path, rng: random.Random) -> Renames:
    """PCIe link speeds as kernels up to 5.6 print them (``32 GT/s``, no ``PCIe``)."""

    def text(rel: tuple[str, ...], t: str) -> str:
        if rel[-1] not in {"current_link_speed", "max_link_speed"}:
            return t
        m = _SPEED.match(t)
        return f"{float(m.group(1)):g} GT/s\n" if m else t

    copy_bundle(src, dst, text=text)
    return {}


def clocks_vocabulary(src: Path, dst: Path, rng: random.Random) -> Renames:
    """ "Clocks Event Reasons" (newer drivers) and "Clocks Throttle Reasons" (older) swapped, in
    ``nvidia-smi -q`` and in the dcgm-exporter family name."""
    pairs = {
        "Clocks Event Reasons": "Clocks Throttle Reasons",
        "Clocks Throttle Reasons": "Clocks Event Reasons",
        "DCGM_FI_DEV_CLOCKS_EVENT_REASONS": "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
        "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS": "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
    }
    pattern = re.compile("|".join(re.escape(k) for k in pairs))
    copy_bundle(src, dst, text=lambda _rel, t: pattern.sub(lambda m: pairs[m.group(0)], t))
    return {}


# --------------------------------------------------------------------------------------------
# dmesg styles

_MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()
_PLAIN = re.compile(r"^\[\s*(\d+\.\d+)\] ?(.*)$")
_CTIME = re.compile(r"^\[[A-Z][a-z]{2} ([A-Z][a-z]{2})\s+(\d+) (\d\d):(\d\d):(\d\d) (\d{4})\] ?(.*)$")
_JOURNAL = re.compile(r"^([A-Z][a-z]{2})\s+(\d+) (\d\d):(\d\d):(\d\d)(\.\d+)? \S+ kernel: ?(.*)$")
_KMSG = re.compile(r"^(\d+),(\d+),(\d+),[^;]*;(.*)$")


@dataclass(frozen=True)
class KLine:
    """One kernel log line: its text and, as far as its prefix says, its time."""

    text: str
    uptime: float | None = None
    wall: float | None = None


def _wall(year: int, month: str, day: str, h: str, m: str, s: str) -> float:
    return datetime(year, _MONTHS.index(month) + 1, int(day), int(h), int(m), int(s), tzinfo=UTC).timestamp()


def read_dmesg(text: str, *, window_end: float) -> list[KLine]:
    """Lines of any of the four styles. A journalctl line has no year: the year that puts it at
    or before the window's end (a line from last December in a February incident is last year's)."""
    out: list[KLine] = []
    end_year = datetime.fromtimestamp(window_end, UTC).year
    for line in text.splitlines():
        if m := _PLAIN.match(line):
            out.append(KLine(m.group(2), uptime=float(m.group(1))))
        elif m := _CTIME.match(line):
            month, day, h, mi, s, year, body = m.groups()
            out.append(KLine(body, wall=_wall(int(year), month, day, h, mi, s)))
        elif m := _JOURNAL.match(line):
            month, day, h, mi, s, frac, body = m.groups()
            t = _wall(end_year, month, day, h, mi, s)
            if t > window_end + 86400:
                t = _wall(end_year - 1, month, day, h, mi, s)
            out.append(KLine(body, wall=t + (float(frac) if frac else 0.0)))
        elif m := _KMSG.match(line):
            out.append(KLine(m.group(4), uptime=int(m.group(3)) / 1e6))
        else:
            out.append(KLine(line))
    return out


def write_dmesg(lines: list[KLine], style: str, *, boot: float, host: str) -> str:
    out = []
    for seq, kl in enumerate(lines):
        uptime = kl.uptime if kl.uptime is not None else (kl.wall - boot if kl.wall is not None else None)
        if uptime is None:  # a continuation line: its own text, as every style prints it
            out.append(kl.text)
            continue
        wall = datetime.fromtimestamp(boot + uptime, UTC)
        if style == "plain":
            out.append(f"[{uptime:12.6f}] {kl.text}")
        elif style == "kmsg":
            out.append(
                f"{4 if 'Xid' in kl.text or 'rror' in kl.text else 6},{seq},{round(uptime * 1e6)},-;{kl.text}"
            )
        elif style == "ctime":
            out.append(f"[{wall.strftime('%a %b')} {wall.day:2d} {wall.strftime('%H:%M:%S %Y')}] {kl.text}")
        elif style == "journalctl":
            out.append(f"{wall.strftime('%b %d %H:%M:%S')} {host} kernel: {kl.text}")
        else:
            raise ValueError(style)
    return "\n".join(out) + "\n"


def _dmesg_as(style: str) -> Callable[[Path, Path, random.Random], Renames]:
    def transform(src: Path, dst: Path, rng: random.Random) -> Renames:
        end = load_json(src, "incident.json")["window"]["end"]
        window_end = datetime.fromisoformat(end.replace("Z", "+00:00")).timestamp()
        copy_bundle(src, dst)
        for node in sorted((dst / "nodes").iterdir()) if (dst / "nodes").is_dir() else []:
            for sub in (("cmd",), ("before", "cmd")):
                p = find(node, *sub, "dmesg.txt")
                if p is None:
                    continue
                collected = find(node, "collected.json")
                meta = json.loads(_read(collected)) if collected else {}
                lines = read_dmesg(_read(p), window_end=window_end)
                boot = meta.get("boot")
                if boot is None:
                    walls = [kl.wall for kl in lines if kl.wall is not None]
                    if any(kl.uptime is not None for kl in lines) or not walls:
                        continue  # boot-relative lines and no boot: no wall time to print
                    # Wall-clock lines: the first is the kernel's banner, printed at boot.
                    boot = min(walls)
                    if style in {"plain", "kmsg"}:  # their uptimes need the boot time beside them
                        meta["boot"] = boot
                        target = collected or node / "collected.json"
                        _write(target, json.dumps(meta), gz=target.name.endswith(".gz"))
                _write(p, write_dmesg(lines, style, boot=boot, host=node.name), gz=p.name.endswith(".gz"))
        return {}

    transform.__name__ = f"dmesg_{style}"
    transform.__doc__ = f"Every node's dmesg.txt printed in the {style} style, same lines, same times."
    return transform


dmesg_plain = _dmesg_as("plain")
dmesg_kmsg = _dmesg_as("kmsg")
dmesg_ctime = _dmesg_as("ctime")
dmesg_journalctl = _dmesg_as("journalctl")


# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Transform:
    name: str
    apply: Callable[[Path, Path, random.Random], Renames]
    lossy: bool = False


TRANSFORMS = [
    Transform("hosts-fqdn", rename_hosts_fqdn),
    Transform("hosts-ip", rename_hosts_ip),
    Transform("rdma-devices", rename_rdma_devices),
    Transform("switches", rename_switches),
    Transform("switch-ports", rename_switch_ports),
    Transform("gzip-all", gzip_all),
    Transform("gunzip-all", gunzip_all),
    Transform("shuffle-steps", shuffle_steps),
    Transform("shuffle-topology", shuffle_topology),
    Transform("dmesg-plain", dmesg_plain),
    Transform("dmesg-kmsg", dmesg_kmsg),
    Transform("dmesg-ctime", dmesg_ctime),
    Transform("dmesg-journalctl", dmesg_journalctl),
    Transform("host-label-case", host_label_case),
    Transform("host-label-instance", host_label_instance),
    Transform("sysfs-old-kernel", sysfs_old_kernel),
    Transform("clocks-vocabulary", clocks_vocabulary),
    Transform("unknown-files", add_unknown_files),
    Transform("drop-optional", drop_optional, lossy=True),
    Transform("drop-collected", drop_collected, lossy=True),
]


def transformed(t: Transform, src: Path, dst: Path, seed: int = 0) -> Renames:
    """Apply ``t`` to the bundle ``src`` into the new folder ``dst``."""
    if dst.exists():
        raise FileExistsError(dst)
    dst.mkdir(parents=True)
    return t.apply(src, dst, random.Random(seed))
