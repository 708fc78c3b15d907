"""``forensic collect``: record live machines into a bundle (a folder or one ``.tar.gz``)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ._common import _fail, app, err

if TYPE_CHECKING:
    from forensic.harness.collect import CollectCaps


@app.command("collect")
def collect(
    out: Annotated[Path, typer.Option("--out", help="Bundle to write: NAME.tar.gz, or a new folder.")],
    local: Annotated[bool, typer.Option("--local", help="Collect this machine.")] = False,
    agent: Annotated[
        list[str] | None, typer.Option("--agent", help="NAME=URL of a forensic agent (repeatable).")
    ] = None,
    token_file: Annotated[Path | None, typer.Option("--token-file", help="Bearer token for --agent.")] = None,
    fleet: Annotated[
        Path | None, typer.Option(help="fleet.toml (agents, Prometheus): collect the job's hosts.")
    ] = None,
    job: Annotated[str | None, typer.Option(help="Job name, recorded in incident.json.")] = None,
    since: Annotated[str, typer.Option(help="Window length ending now: 30m, 2h, 1d.")] = "2h",
    title: Annotated[str | None, typer.Option(help="One-line description of the symptom.")] = None,
    job_dir: Annotated[
        Path | None, typer.Option("--job-dir", help="Folder with the job's steps*.csv and *.log files.")
    ] = None,
    host: Annotated[
        str | None, typer.Option(help="With --local: this machine's name (default: hostname).")
    ] = None,
    topology: Annotated[
        Path | None, typer.Option(help="topology.json of the fleet: written into the bundle, names the NICs.")
    ] = None,
    timeout_s: Annotated[float, typer.Option(help="Per-call timeout for agents, seconds.", min=0.1)] = 15.0,
    until: Annotated[
        str | None, typer.Option(help="With --fleet: window end (ISO 8601 or unix seconds; default now).")
    ] = None,
    ranks: Annotated[
        int | None, typer.Option(help="With --fleet: number of ranks of the job.", min=1)
    ] = None,
    max_host_mb: Annotated[
        float,
        typer.Option(
            help="Cap on what one host's files may take, MiB: a host past it is cut there and the summary says so.",
            min=0.001,
            max=1_048_576,
        ),
    ] = 64.0,
    max_total_mb: Annotated[
        float,
        typer.Option(
            help="Cap on what all hosts' files may take together, MiB (job files and metrics not counted).",
            min=0.001,
            max=1_048_576,
        ),
    ] = 4096.0,
) -> None:
    """Record hosts (sysfs, allowlisted commands, NVML) and the job's steps and logs into a bundle."""
    from forensic.harness.collect import CollectError, collect_bundle, parse_since
    from forensic.sandbox import ForensicError

    caps: CollectCaps = {
        "max_host_bytes": int(max_host_mb * 2**20),
        "max_collection_bytes": int(max_total_mb * 2**20),
    }
    chosen = [
        n for n, on in (("--local", local), ("--agent", bool(agent)), ("--fleet", fleet is not None)) if on
    ]
    if len(chosen) != 1:
        _fail(2, "choose one source: --local, --agent NAME=URL (with --token-file), or --fleet fleet.toml")
    try:
        if fleet is not None:
            result = _collect_fleet(fleet, job, since, until, title, ranks, out, caps)
            _summary(result)
            return
        window = parse_since(since)
        hosts, before = _hosts(local, agent or [], token_file, host, timeout_s)
        now = time.time()
        incident = {
            "id": f"collected-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime(now))}",
            "title": title or f"collected {len(hosts)} host(s) over the last {since}",
            "window": {"start": now - window, "end": now},
            "job": {"name": job} if job else {},
            "reported": "recorded by forensic collect",
        }
        topo = _load_topology(topology) if topology else None
        with _progress() as progress:
            result = collect_bundle(
                hosts,
                out,
                incident=incident,
                before=before,
                job_dir=job_dir,
                topology=topo,
                progress=progress,
                **caps,
            )
    except CollectError as exc:
        _fail(2, str(exc))
    except ForensicError as exc:
        _fail(2, str(exc))
    except OSError as exc:
        _fail(2, f"{out}: cannot write ({exc.strerror or exc})")
    _summary(result)


def _summary(result) -> None:
    for name, o in result.hosts.items():
        missed = f"; not available: {', '.join(o.missed)}" if o.missed else ""
        state = (
            f"FAILED ({o.error})" if o.error else f"{o.files} files ({_mib(o.bytes)}), NVML {o.nvml}{missed}"
        )
        if o.truncated:
            state = f"TRUNCATED ({o.truncated}); " + state
        sys.stderr.write(f"  {name}: {state}\n")
    cut = [n for n, o in result.hosts.items() if o.truncated]
    sys.stderr.write(
        f"  {len(result.hosts)} host(s), {_mib(result.bytes)} of host files"
        + (
            f"; {len(cut)} truncated at a byte or file cap: {', '.join(cut[:10])}"
            + (f" and {len(cut) - 10} more" if len(cut) > 10 else "")
            if cut
            else ""
        )
        + "\n"
    )
    sys.stdout.write(f"{result.out}\n")


def _mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB"


def _collect_fleet(
    fleet: Path,
    job: str | None,
    since: str,
    until: str | None,
    title: str | None,
    ranks: int | None,
    out: Path,
    caps: CollectCaps,
):
    """The job's hosts through their agents, its steps and logs, and Prometheus series of the window."""
    from forensic.harness.collect import CollectError, collect_source

    from ._fleet import open_live

    if out.exists():  # before any network work
        raise CollectError(f"{out}: already exists; choose a new name (nothing is overwritten)")
    src = open_live(fleet, job, since, until, title or "", ranks)
    src.incident.reported = "recorded by forensic collect --fleet"
    with _progress() as progress:
        result, problems = collect_source(src, out, progress=progress, caps=caps)
    for note in [*src.notes(), *problems[:5]]:
        sys.stderr.write(f"forensic: note: {note}\n")
    return result


def _load_topology(path: Path) -> dict:
    import json

    from forensic.harness.collect import CollectError
    from forensic.sandbox import Topology

    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        Topology.model_validate(raw)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise CollectError(
            f"--topology {path}: not a usable topology.json ({str(exc).splitlines()[0][:200]})"
        ) from None
    if not isinstance(raw, dict):
        raise CollectError(f"--topology {path}: expected a JSON object")
    return raw


def _hosts(local: bool, agents: list[str], token_file: Path | None, name: str | None, timeout_s: float):
    from forensic.harness.collect import CollectError
    from forensic.sandbox import ForensicError, LiveHost, RemoteHost

    if local:
        h = LiveHost(name)
        return [(h.name, h)], None
    if token_file is None:
        raise CollectError("--agent needs --token-file")
    from forensic.sandbox.agent import read_token_file

    token = read_token_file(token_file)
    hosts, before = [], {}
    for spec in agents:
        hname, sep, url = spec.partition("=")
        if not sep or not hname or not url.startswith(("http://", "https://")):
            raise CollectError(f"--agent {spec!r}: expected NAME=http(s)://HOST:PORT")
        # An unreachable agent must cost its own host, not the collection: probe lazily.
        remote = RemoteHost(url, token, name=hname, timeout_s=timeout_s)
        try:
            if remote.info().get("mode") == "replay":  # only a recording has a window-start snapshot
                before[hname] = RemoteHost(url, token, name=hname, snapshot="before", timeout_s=timeout_s)
        except ForensicError:
            pass
        hosts.append((hname, remote))
    return hosts, before


class _progress:
    """A rich progress bar per host on stderr (quiet when stderr is not a terminal)."""

    def __enter__(self):
        from rich.progress import BarColumn, Progress, TaskID, TextColumn

        self._p = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.completed} items"),
            console=err,
            transient=False,
            disable=not err.is_terminal,
        )
        self._p.__enter__()
        self._tasks: dict[str, TaskID] = {}
        return self.update

    def update(self, host: str, done: int, total: int | None) -> None:
        if host not in self._tasks:
            self._tasks[host] = self._p.add_task(host, total=None)
        self._p.update(self._tasks[host], completed=done, total=total)

    def __exit__(self, *exc) -> None:
        self._p.__exit__(*exc)
