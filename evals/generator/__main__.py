"""CLI: ``python -m evals.generator --out DIR --seed N --cause X --hosts N`` or ``--suite``."""

from __future__ import annotations

import argparse
import json
import sys

from .faults import CAUSES
from .incident import IncidentSpec, generate
from .suite import build_suite


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m evals.generator", description=__doc__)
    p.add_argument("--out", required=True, help="folder to write <case>/bundle and <case>/truth.json into")
    p.add_argument(
        "--suite",
        choices=["all", "examples", "incidents", "holdout"],
        help="regenerate a committed set (with --out evals) instead of one incident",
    )
    p.add_argument("--cause", choices=sorted(CAUSES), help="root cause to inject")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--hosts", type=int, default=8, help="hosts in the job (8 GPUs each)")
    p.add_argument("--case", help="case folder name (default case-<seed>)")
    p.add_argument("--variant", help="fault variant, e.g. x8, nic-width, brake, dbe, multiline, socket")
    p.add_argument("--decoys", help="comma-separated decoys (default: drawn from the seed)")
    p.add_argument("--severity", type=float, help="slowdown factor where the cause has one (e.g. 1.05)")
    p.add_argument(
        "--opt",
        action="append",
        default=[],
        metavar="KEY=JSON",
        help="pin a format/fleet option, e.g. --opt link_layer='\"Ethernet\"' --opt omit_ranks=true",
    )
    a = p.parse_args(argv)
    if a.suite:
        for s in build_suite(a.out, a.suite):
            print(json.dumps({k: s[k] for k in ("case", "cause", "truth", "title")}))
        return 0
    if not a.cause:
        p.error("--cause is required without --suite")
    opts = {}
    for kv in a.opt:
        k, _, v = kv.partition("=")
        opts[k] = json.loads(v)
    if a.severity is not None:
        opts["severity"] = a.severity
    spec = IncidentSpec(
        case=a.case or f"case-{a.seed}",
        cause=a.cause,
        seed=a.seed,
        hosts=a.hosts,
        variant=a.variant,
        decoys=a.decoys.split(",") if a.decoys else None,
        opts=opts,
    )
    s = generate(spec, a.out)
    print(json.dumps(s, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
