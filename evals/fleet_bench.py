"""``forensic bench fleet``: the same incident investigated from its bundle and through a live
fleet of replay agents on loopback (plus a backfilled Prometheus), timed and compared."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

#: The live run may take at most this many times the replay run: reading over HTTP may cost more than a file, not another order of magnitude.
TARGET_RATIO = 3.0


def fleet_benchmark(
    *, hosts: int = 64, cause: str = "healthy", seed: int = 1, prometheus: bool = True
) -> dict[str, Any]:
    from forensic.evals.fleet_rig import FleetRig, RigError, prometheus_binaries
    from forensic.evals.generator.incident import IncidentSpec, generate
    from forensic.harness.graph import Investigator
    from forensic.sandbox import Bundle
    from forensic.sandbox.fleet import open_fleet

    if prometheus and prometheus_binaries() is None:
        raise RigError(
            "prometheus and promtool are not installed (apt-get install prometheus), or pass --no-prometheus"
        )
    with tempfile.TemporaryDirectory(prefix="forensic-bench-fleet-") as tmp:
        generate(IncidentSpec(case="bench-fleet", cause=cause, seed=seed, hosts=hosts), tmp)
        t0 = time.perf_counter()
        bundle = Bundle(Path(tmp) / "bench-fleet" / "bundle")  # opening the bundle is part of a replay run
        replay = Investigator(bundle).run(thread_id="bench-replay")
        replay_s = time.perf_counter() - t0
        with FleetRig(bundle.root, Path(tmp) / "rig", prometheus=prometheus) as rig:
            start, end = bundle.window
            assert start is not None and end is not None, "the generated incident has a window"
            t0 = time.perf_counter()
            source = open_fleet(
                rig.fleet_file,
                job=bundle.incident.job.name or "job",
                since=end - start,
                until=end,
                title=bundle.incident.title,
                ranks=bundle.incident.job.ranks,
            )
            open_s = time.perf_counter() - t0
            live = Investigator(source).run(thread_id="bench-live")
            live_s = time.perf_counter() - t0
    verdict = lambda r: (r["verdict"]["root_cause"], r["verdict"]["component"])  # noqa: E731
    return {
        "hosts": hosts,
        "cause": cause,
        "seed": seed,
        "metrics": "prometheus" if prometheus else "none",
        "replay_s": round(replay_s, 3),
        "live_s": round(live_s, 3),
        "live_open_s": round(open_s, 3),
        "live_over_replay": round(live_s / replay_s, 2) if replay_s > 0 else None,
        "target_ratio": TARGET_RATIO,
        "same_verdict": verdict(live) == verdict(replay),
        "replay_verdict": list(verdict(replay)),
        "live_verdict": list(verdict(live)),
        "live_tool_calls": len(live["evidence"]),
        "unreadable_hosts": [n for n in live["notes"] if "could not be read" in n],
    }


def format_fleet_benchmark(r: dict[str, Any]) -> str:
    ok = (
        "within"
        if r["live_over_replay"] is not None and r["live_over_replay"] <= r["target_ratio"]
        else "OVER"
    )
    return (
        f"{r['hosts']} replay agents on loopback, metrics: {r['metrics']}\n"
        f"  replay {r['replay_s']:.2f} s, live {r['live_s']:.2f} s: {r['live_over_replay']}x "
        f"({ok} the {r['target_ratio']:g}x target)\n"
        f"  verdict replay {r['replay_verdict']} live {r['live_verdict']}: "
        f"{'same' if r['same_verdict'] else 'DIFFERENT'}"
    )
