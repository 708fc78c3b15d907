"""Several processes start at once on an empty PostgreSQL database, as replicas of a new deployment
do: each migrates the schema and sets up the checkpointer, and every one of them comes up.

Before the set-up lock was taken by polling, the second process waited inside
``pg_advisory_lock`` holding a snapshot that the first one's ``CREATE INDEX CONCURRENTLY`` waited
for, so both hung for good.
"""

from __future__ import annotations

import subprocess
import sys
import time

_START = """
import sys
from forensic.harness.service.store import open_store
from forensic.harness.service.workers import postgres_checkpointer
sys.stdin.readline()
open_store(sys.argv[1])
postgres_checkpointer(sys.argv[1])._forensic_pool.close()
print("up", flush=True)
"""


def test_concurrent_first_starts_all_come_up(pg_cluster) -> None:
    url = pg_cluster.fresh_db("first_start")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _START, url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    time.sleep(3)  # let every interpreter finish importing, so the starts overlap
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    results = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=90)
            results.append((p.returncode, out, err[-400:]))
    except subprocess.TimeoutExpired:
        pass
    finally:
        for p in procs:
            p.kill()
    assert len(results) == 4, "a first start hung"
    assert all(rc == 0 and out.strip() == "up" for rc, out, _ in results), results
