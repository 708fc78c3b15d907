#!/usr/bin/env python3
"""Write the rehearsal evaluation set: python3 write_incidents.py --out DIR"""
import argparse, os, sys, shutil
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fleetsim import write_case  # noqa: E402
from kit import boot_noise  # noqa: E402
from cases import CASES  # noqa: E402


def finalize(c):
    """Default node-data selection for larger fleets: the faulty host, one job peer, a spare, hosts named by alerts."""
    if c.node_hosts is None and len(c.hosts) > 4:
        keep = [h.name for h in c.job_hosts()[:2] if h.name not in (c.truth[1] or "")][:1] + [h.name for h in c.hosts if not h.in_job][:1]
        comp = c.truth[1] or ""
        keep += [h.name for h in c.hosts if comp == h.name or comp.startswith(h.name + "/")]
        for al in c.alerts:
            keep += [v for k, v in al["labels"].items() if k.lower() in ("hostname", "instance")]
        c.node_hosts = set(keep)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default=None)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for cid, fn in CASES:
        if a.only and cid not in a.only.split(","):
            continue
        d = os.path.join(a.out, cid)
        if os.path.exists(d):
            shutil.rmtree(d)
        c = fn()
        finalize(c)
        for h in c.hosts:
            boot_noise(c, h)
        write_case(c, a.out)


if __name__ == "__main__":
    main()
