"""Wake-ups for the live event streams: "investigation X changed", within a process and across them.

The store calls :meth:`Signals.changed` after a transaction that added events or changed a
status commits; every stream of this process that follows one of those investigations wakes and
reads what is new. On PostgreSQL the same transaction also sends ``NOTIFY`` (channel
:data:`CHANNEL`, payload the investigation id), and :class:`PgListener`, one connection per API
process, turns what other processes (workers, other replicas) commit into the same wake-ups. So
a stream reads the database when there is something to read, not on a timer per client.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

log = logging.getLogger("forensic.service.signals")

#: The PostgreSQL NOTIFY channel of investigation changes.
CHANNEL = "forensic_changed"


class Signals:
    """Per-investigation wake-ups for the asyncio streams of one process."""

    def __init__(self) -> None:
        self._subs: dict[str, set[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = {}
        self._lock = threading.Lock()

    @contextmanager
    def subscribe(self, inv_id: str) -> Iterator[asyncio.Event]:
        """An event set whenever ``inv_id`` changes, for as long as the block runs (call from a coroutine)."""
        entry = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            self._subs.setdefault(inv_id, set()).add(entry)
        try:
            yield entry[1]
        finally:
            with self._lock:
                subs = self._subs.get(inv_id)
                if subs is not None:
                    subs.discard(entry)
                    if not subs:
                        del self._subs[inv_id]

    def changed(self, inv_ids: Iterable[str]) -> None:
        """Wake the streams of ``inv_ids`` (from any thread)."""
        ids = set(inv_ids)  # before the lock: a generator may block
        with self._lock:
            entries = [e for i in ids for e in self._subs.get(i, ())]
        for loop, event in entries:
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:  # that stream's loop has closed; its subscription goes with it
                pass

    def following(self) -> int:
        with self._lock:
            return sum(len(s) for s in self._subs.values())


class PgListener:
    """``LISTEN`` on :data:`CHANNEL` in a thread of its own, feeding :class:`Signals`; reconnects when the database comes back."""

    def __init__(self, conninfo: str, signals: Signals) -> None:
        self.conninfo = conninfo
        self.signals = signals
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="forensic-listen", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        import psycopg

        while not self._stop.is_set():
            try:
                with psycopg.connect(self.conninfo, autocommit=True, connect_timeout=10) as con:
                    con.execute(f"LISTEN {CHANNEL}")
                    while not self._stop.is_set():
                        # Collected first: the wait must not hold the signals' lock.
                        payloads = [n.payload for n in con.notifies(timeout=1.0)]
                        if payloads:
                            self.signals.changed(payloads)
            except psycopg.Error as exc:
                log.warning(
                    "listening for investigation changes: %s; retrying",
                    str(exc).splitlines()[0] if str(exc) else exc,
                )
                self._stop.wait(2.0)  # meanwhile streams still look every few seconds
