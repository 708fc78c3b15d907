"""Run an investigation and kill -9 this process at the Nth checkpoint write (a test helper).

usage: python -m tests.adversarial._killer BUNDLE CHECKPOINT THREAD N [put|put_writes] [before|after]

Every write LangGraph makes to the SQLite checkpointer is a point where a real crash can land:
a step's pending writes saved without its checkpoint, a checkpoint saved without the next
step's writes. The process dies with SIGKILL there, with no chance to clean up.
"""

from __future__ import annotations

import os
import signal
import sys


def main() -> None:
    bundle, cp, thread, n, which, when = (
        sys.argv[1],
        sys.argv[2],
        sys.argv[3],
        int(sys.argv[4]),
        sys.argv[5],
        sys.argv[6],
    )
    from forensic.harness.cli._common import _checkpointer
    from forensic.harness.graph import Investigator
    from langgraph.checkpoint.sqlite import SqliteSaver

    calls = {"n": 0}
    original = getattr(SqliteSaver, which)

    def wrapped(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == n and when == "before":
            os.kill(os.getpid(), signal.SIGKILL)
        out = original(self, *args, **kwargs)
        if calls["n"] == n and when == "after":
            os.kill(os.getpid(), signal.SIGKILL)
        return out

    setattr(SqliteSaver, which, wrapped)
    from pathlib import Path

    inv = Investigator(bundle, checkpointer=_checkpointer(Path(cp)))
    inv.run(thread_id=thread, await_approval=True)
    sys.stdout.write(f"finished after {calls['n']} {which} calls\n")


if __name__ == "__main__":
    main()
