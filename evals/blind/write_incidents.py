#!/usr/bin/env python3
"""Write the blind evaluation set: ``python3 write_incidents.py --out DIR``.

Each case is written as ``DIR/<case>/bundle/...`` plus ``DIR/<case>/truth.json``. Output is a
deterministic function of this folder's code: one seeded RNG per case, gzip members with mtime 0
and no file name, no wall-clock reads. Stdlib only.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cases_hw import b01, b02, b03, b04, b05, b06, b07, b08, b09, b10, b11, b12, b13  # noqa: E402
from cases_more import (b14, b15, b16, b17, b18, b19, b20, b21, b22, b23, b24, b25, b26, b27, b28,  # noqa: E402
                        b29, b30, b31, b32, b33, b34)
from render import render  # noqa: E402

CASES = [
    ("b01-gpu-aer-retrain", b01), ("b02-slow-since-launch-x8", b02), ("b03-roce-pause-origin", b03),
    ("b04-sonic-pfcwd-storm", b04), ("b05-leaf-uplink-series", b05), ("b06-leaf-counters-snapshot", b06),
    ("b07-ib-symbol-errors", b07), ("b08-fec-only", b08), ("b09-one-hot-gpu", b09),
    ("b10-bmc-fan-failure", b10), ("b11-psu-power-brake", b11), ("b12-one-gpu-power-limit", b12),
    ("b13-row-remap-burst", b13), ("b14-dbe-restarts", b14), ("b15-xid79-kmsg", b15),
    ("b16-fallen-off-multiline", b16), ("b17-nvlink-xid74", b17), ("b18-nvlink-replays-only", b18),
    ("b19-checksum-one-rank", b19), ("b20-loss-spikes-one-rank", b20), ("b21-backup-cpu-hog", b21),
    ("b22-memory-pressure", b22), ("b23-s3-slowdown", b23), ("b24-lustre-recovery", b24),
    ("b25-nfs-not-responding", b25), ("b26-gcs-since-launch", b26), ("b27-sockets-beside-ib", b27),
    ("b28-p2p-gdr-off", b28), ("b29-two-of-eight-rails", b29), ("b30-relaunch-bigger-batch", b30),
    ("b31-longer-context", b31), ("b32-new-data-mix", b32), ("b33-new-parallel-layout", b33),
    ("b34-power-cap-everywhere", b34),
]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--only", nargs="*", help="case names (default: all)")
    a = p.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    for i, (name, fn) in enumerate(CASES, start=1):
        if a.only and name not in a.only:
            continue
        fleet = fn(name, 1000 + i)
        render(fleet)
        case = a.out / name
        if case.exists():
            shutil.rmtree(case)
        for rel, data in sorted(fleet.files.items()):
            path = case / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
