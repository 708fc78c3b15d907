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
                        b29, b30, b31, b32, b33, b34, b35)
from render import render  # noqa: E402

CASES = [  # (case id, writer); the README maps each id to what it presents
    ("bl-01", b01),  # gpu-aer-retrain
    ("bl-02", b02),  # slow-since-launch-x8
    ("bl-03", b03),  # roce-pause-origin
    ("bl-04", b04),  # sonic-pfcwd-storm
    ("bl-05", b05),  # leaf-uplink-series
    ("bl-06", b06),  # leaf-counters-snapshot
    ("bl-07", b07),  # ib-symbol-errors
    ("bl-08", b08),  # fec-only
    ("bl-09", b09),  # one-hot-gpu
    ("bl-10", b10),  # bmc-fan-failure
    ("bl-11", b11),  # psu-power-brake
    ("bl-12", b12),  # one-gpu-power-limit
    ("bl-13", b13),  # row-remap-burst
    ("bl-14", b14),  # dbe-restarts
    ("bl-15", b15),  # xid79-kmsg
    ("bl-16", b16),  # fallen-off-multiline
    ("bl-17", b17),  # nvlink-xid74
    ("bl-18", b18),  # nvlink-replays-only
    ("bl-19", b19),  # checksum-one-rank
    ("bl-20", b20),  # loss-spikes-one-rank
    ("bl-21", b21),  # backup-cpu-hog
    ("bl-22", b22),  # memory-pressure
    ("bl-23", b23),  # s3-slowdown
    ("bl-24", b24),  # lustre-recovery
    ("bl-25", b25),  # nfs-not-responding
    ("bl-26", b26),  # gcs-since-launch
    ("bl-27", b27),  # sockets-beside-ib
    ("bl-28", b28),  # p2p-gdr-off
    ("bl-29", b29),  # two-of-eight-rails
    ("bl-30", b30),  # relaunch-bigger-batch
    ("bl-31", b31),  # longer-context
    ("bl-32", b32),  # new-data-mix
    ("bl-33", b33),  # new-parallel-layout
    ("bl-34", b34),  # power-cap-everywhere
    ("bl-35", b35),  # ray-data-gpfs-waiters
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
