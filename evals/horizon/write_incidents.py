#!/usr/bin/env python3
"""Write the horizon evaluation set: DIR/<case-id>/bundle/... and DIR/<case-id>/truth.json.

Usage: write_incidents.py --out DIR [--only hz-01,hz-02]
Standard library only; deterministic (seeded per case, no wall clock, gzip mtime=0).
"""
import argparse
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import cases  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    only = set(x for x in a.only.split(",") if x)
    os.makedirs(a.out, exist_ok=True)
    for fn in cases.ALL:
        cid = "hz-%s" % fn.__name__[2:]
        if only and cid not in only:
            continue
        d = os.path.join(a.out, cid)
        if os.path.isdir(d):
            shutil.rmtree(d)
        c = fn()
        assert c.name == cid, (c.name, cid)
        c.write(a.out)
        print(cid, c.truth[0], c.truth[1])


if __name__ == "__main__":
    main()
