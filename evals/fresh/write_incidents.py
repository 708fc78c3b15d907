#!/usr/bin/env python3
"""Write the "fresh" evaluation incidents: DIR/<case>/bundle/... and DIR/<case>/truth.json.

Deterministic: every case uses its own seeded random.Random, floats are printed with fixed
formats, files are written in sorted order, gzip uses mtime=0 and no file name.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from cases import CASES  # noqa: E402
from fleet import write_bytes  # noqa: E402
from render import render_all  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default=None, help="comma-separated case ids")
    a = ap.parse_args()
    only = set(a.only.split(",")) if a.only else None
    t0 = time.time()
    for fn in CASES:
        c, comp = fn()
        if only and c.id not in only:
            continue
        c.prepare()
        if c.post:
            c.post()
        files = render_all(c)
        base = os.path.join(a.out, c.id)
        for rel in sorted(files):
            write_bytes(os.path.join(base, "bundle", rel), files[rel])
        truth = {"root_cause": c.rc, "component": comp}
        write_bytes(os.path.join(base, "truth.json"), (json.dumps(truth, sort_keys=True) + "\n").encode())
        print("%s %-24s %-40s %6d files" % (c.id, c.rc, comp, len(files)), file=sys.stderr)
    print("done in %.1fs" % (time.time() - t0), file=sys.stderr)


if __name__ == "__main__":
    main()
