"""``forensic watch``: follow live jobs and open investigations for what no alert catches;
``forensic bench watch``: the watcher on a simulated week of a 16,384-rank job."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from ._common import _fail, app, bench_app


@app.command()
def watch(
    job: Annotated[
        list[str] | None,
        typer.Option(
            "--job",
            help="NAME=FOLDER: a job and the folder its step recorder writes (repeatable); "
            "with --prometheus, NAME alone: a job read from Prometheus.",
        ),
    ] = None,
    jobs_dir: Annotated[
        Path | None,
        typer.Option("--jobs-dir", help="Every subfolder holding step files is a job named after it."),
    ] = None,
    service: Annotated[
        str | None,
        typer.Option(
            "--service",
            help="URL of `forensic serve`: findings are posted to its alert intake. "
            "Without it they are printed (one JSON alert a line) and nothing is opened.",
        ),
    ] = None,
    token_file: Annotated[
        Path | None, typer.Option("--token-file", help="A webhook-role token for --service (first line).")
    ] = None,
    state: Annotated[
        Path, typer.Option("--state", help="Folder keeping each job's position, so a restart resumes.")
    ] = Path("forensic-watch-state"),
    poll_s: Annotated[float, typer.Option("--poll-s", help="Seconds between reads.", min=0.05)] = 5.0,
    once: Annotated[bool, typer.Option("--once", help="Read what is there, report, and exit.")] = False,
    min_effect: Annotated[
        float,
        typer.Option(help="Smallest sustained rank slowdown that opens (0.03 = 3%).", min=0.001, max=0.9),
    ] = 0.03,
    job_min_effect: Annotated[
        float, typer.Option(help="Smallest whole-job slowdown that opens.", min=0.001, max=0.9)
    ] = 0.05,
    job_label: Annotated[str, typer.Option(help="The label naming the job in the alerts.")] = "training_job",
    prometheus: Annotated[
        str | None,
        typer.Option(
            "--prometheus", help="URL of a Prometheus API: read each --job NAME's step times there."
        ),
    ] = None,
    query: Annotated[
        str,
        typer.Option(help="PromQL returning one series per rank of the job ($job is the job's name)."),
    ] = 'forensic_step_compute_seconds{exported_job="$job"}',
    rank_label: Annotated[
        str, typer.Option(help='The series\' label holding the rank ("" numbers each host/GPU pair).')
    ] = "rank",
    host_label: Annotated[str, typer.Option(help="The series' label naming the host.")] = "host",
    gpu_label: Annotated[str, typer.Option(help="The series' label naming the GPU.")] = "gpu",
    resolution_s: Annotated[
        float, typer.Option(help="Seconds between the Prometheus evaluations read.", min=1, max=3600)
    ] = 15.0,
    lookback_s: Annotated[
        float, typer.Option(help="How far back a job new to the state is read from Prometheus.", min=0)
    ] = 3600.0,
    prometheus_token_file: Annotated[
        Path | None, typer.Option("--prometheus-token-file", help="A bearer token for --prometheus.")
    ] = None,
) -> None:
    """Follow jobs' per-rank step times and open an investigation when a rank, host or the job degrades."""
    import logging

    from forensic.harness.watch import FileStateStore, WatchedJob, Watcher, jobs_in
    from forensic.harness.watch.prom import PrometheusQuery, job_query
    from forensic.tools.detectors.watch import WatchConfig

    prom_token = None
    if prometheus_token_file is not None:
        try:
            prom_token = prometheus_token_file.read_text().strip().splitlines()[0].strip()
        except (OSError, IndexError, UnicodeDecodeError):
            _fail(2, f"--prometheus-token-file {prometheus_token_file}: unreadable or empty")
    fixed: list[WatchedJob] = []
    for spec in job or []:
        name, sep, folder = spec.partition("=")
        if prometheus and name and not sep:
            q = PrometheusQuery(
                prometheus,
                job_query(query, name),
                rank_label=rank_label,
                host_label=host_label,
                gpu_label=gpu_label,
                resolution_s=resolution_s,
                lookback_s=lookback_s,
                token=prom_token,
            )
            fixed.append(WatchedJob(name, prometheus=q))
            continue
        if not sep or not name or not folder:
            _fail(2, f"--job {spec[:80]!r}: expected NAME=FOLDER")
        if not Path(folder).is_dir():
            _fail(2, f"--job {name}: {folder} is not a folder")
        fixed.append(WatchedJob(name, Path(folder).resolve()))
    if not fixed and jobs_dir is None:
        _fail(2, "name a job to follow: --job NAME=FOLDER, --jobs-dir FOLDER or --prometheus URL --job NAME")
    try:
        cfg = WatchConfig(min_effect=min_effect, job_min_effect=job_min_effect)
    except ValueError as exc:
        _fail(2, str(exc))

    def jobs() -> list[WatchedJob]:
        return fixed + (
            [j for j in jobs_in(jobs_dir) if j.name not in {f.name for f in fixed}] if jobs_dir else []
        )

    if service:
        if token_file is None:
            _fail(2, "--service needs --token-file (a webhook-role token of the service)")
        try:
            token = token_file.read_text().strip().splitlines()[0].strip()
        except (OSError, IndexError, UnicodeDecodeError):
            _fail(2, f"--token-file {token_file}: unreadable or empty")
        sink = _http_sink(service.rstrip("/") + "/api/v1/alerts", token)
    else:

        def sink(alerts: list[dict]) -> None:
            for a in alerts:
                sys.stdout.write(json.dumps(a) + "\n")
            sys.stdout.flush()

    logging.getLogger("forensic.watch").setLevel(logging.INFO)
    watcher = Watcher(jobs, sink, FileStateStore(state), cfg, job_label=job_label, poll_s=poll_s)
    if once:
        watcher.poll_once()
        # a Prometheus job far behind is read in parts of max_points evaluations: read them all
        while any(getattr(s.follower, "behind", False) for s in watcher.state.values()):
            watcher.poll_once()
        sys.stderr.write(json.dumps({"jobs": watcher.status()}) + "\n")
        return
    try:
        watcher.run()
    except KeyboardInterrupt:
        pass


def _http_sink(url: str, token: str):
    import httpx

    def sink(alerts: list[dict]) -> None:
        r = httpx.post(
            url,
            json={"version": "4", "status": "firing", "receiver": "forensic-watch", "alerts": alerts},
            headers={"Authorization": f"Bearer {token}"},
            timeout=30,
        )
        if r.status_code != 202:
            raise RuntimeError(f"{url} answered {r.status_code}: {r.text[:200]}")

    return sink


@bench_app.command("watch")
def bench_watch(
    ranks: Annotated[int, typer.Option(help="Ranks in the simulated job.", min=16)] = 16384,
    days: Annotated[float, typer.Option(help="Simulated healthy days before the faults.", min=0.05)] = 7.0,
    step_s: Annotated[float, typer.Option(help="The job's step time in seconds.", min=0.1)] = 10.0,
    seed: Annotated[int, typer.Option()] = 0,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Cost per step, false alarms over simulated healthy days, and how fast injected faults are found."""
    from forensic.harness.watch.bench import format_watch_bench, run_watch_bench

    r = run_watch_bench(ranks=ranks, healthy_days=days, step_s=step_s, seed=seed)
    if as_json:
        keys = ("ranks", "per_step_ms", "healthy_days", "false_alarms", "faults")
        sys.stdout.write(json.dumps({k: r[k] for k in keys}) + "\n")
    else:
        sys.stdout.write(format_watch_bench(r) + "\n")
