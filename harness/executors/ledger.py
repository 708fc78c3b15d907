"""The execution ledger: which approved proposals ran, kept in the same database as their checkpoints.

The table is the service database's (its Alembic revisions, :mod:`forensic.harness.service.schema`),
brought to the current revision when a ledger opens a database. One ledger per checkpoint store,
whoever executes: ``forensic execute --checkpoint FILE`` and a
``forensic serve`` on that file share the SQLite table ``executions`` in FILE; every API replica and
``forensic execute --db URL`` share the PostgreSQL table ``executions`` of that database. So a
proposal that ran through the service is refused by the CLI and the other way round, and
``forensic execute --undo`` reverses what the service ran.

A run is claimed before its executor starts, in one statement of one transaction::

    INSERT ... ON CONFLICT (thread, proposal_id, content_hash) DO UPDATE ... WHERE state = 'failed'

Exactly one of two racing claims changes a row (``rowcount`` 1); the other changes none and is
refused. Only a failed run (nothing was changed: Slurm was down) may be claimed again. The result
is recorded after the executor returns.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from forensic.harness.models import Proposal

from .base import ExecutionError, Plan

_COLUMNS = (
    "thread",
    "proposal_id",
    "content_hash",
    "action",
    "target",
    "executor",
    "state",
    "plan",
    "detail",
    '"by"',
    "started",
    "finished",
)

_CLAIM = (
    f"INSERT INTO executions ({', '.join(_COLUMNS)}) VALUES ({', '.join(['{p}'] * len(_COLUMNS))}) "
    "ON CONFLICT (thread, proposal_id, content_hash) DO UPDATE SET state = excluded.state, "
    'executor = excluded.executor, plan = excluded.plan, detail = excluded.detail, "by" = excluded."by", '
    "started = excluded.started, finished = NULL WHERE executions.state = 'failed'"
)

# A proposal is one content per id (approval binds the hash), so a thread's row per proposal is its latest.
_LATEST = "SELECT * FROM executions WHERE thread = {p} AND proposal_id = {p} ORDER BY started DESC LIMIT 1"
_FINISH = (
    "UPDATE executions SET state = {p}, detail = {p}, finished = {p} "
    "WHERE thread = {p} AND proposal_id = {p} AND content_hash = {p}"
)


class ExecutionLedger(Protocol):
    """Claims and records executions; one per checkpoint store, shared by every surface on it."""

    def claim(self, thread: str, p: Proposal, executor: str, plan: Plan, by: str) -> None:
        """Claim ``p`` for a run, atomically; :class:`ExecutionError` if it ran or is running."""
        ...

    def finish(self, thread: str, proposal_id: str, content_hash: str, state: str, detail: str) -> None:
        """Record how the claimed run ended (or that it was undone)."""
        ...

    def get(self, thread: str, proposal_id: str) -> dict[str, Any] | None: ...

    def for_thread(self, thread: str) -> dict[str, dict[str, Any]]: ...


def _already(row: dict[str, Any] | None, pid: str) -> ExecutionError:
    state = row["state"] if row else "unknown"
    return ExecutionError(f"{pid} has already run (state: {state}); it does not run twice")


def _uri(path: Path, mode: str) -> str:
    from urllib.parse import quote

    return f"file:{quote(str(path))}?mode={mode}"


def _claim_args(thread: str, p: Proposal, executor: str, plan: Plan, by: str) -> tuple[Any, ...]:
    return (
        thread,
        p.id,
        p.content_hash,
        p.action,
        p.target,
        executor,
        "running",
        plan.model_dump_json(),
        "",
        by,
        time.time(),
        None,
    )


class SqliteLedger:
    """The ledger in a SQLite checkpoint file (``forensic investigate``'s, or ``forensic serve``'s database).

    Earlier releases kept executions in a file of their own beside it (``executions.sqlite`` for
    the CLI, ``<database>-executions.sqlite`` for the service); its rows are copied in on opening,
    so that what ran before the upgrade still does not run again.
    """

    def __init__(self, path: Path) -> None:
        from forensic.harness.service.schema import MigrationError, migrate

        self.path = path
        try:
            migrate(path)
        except MigrationError as exc:
            raise ExecutionError(f"the execution ledger in {path} cannot be used: {exc}") from None
        for legacy in (path.with_name("executions.sqlite"), path.with_name(f"{path.stem}-executions.sqlite")):
            if legacy.is_file() and legacy.resolve() != path.resolve():
                self._import(legacy)

    def _import(self, legacy: Path) -> None:
        with self._errors(legacy):
            con = self._connect("rw")
            try:
                con.execute("ATTACH DATABASE ? AS legacy", (_uri(legacy, "ro"),))
                con.execute("BEGIN IMMEDIATE")
                con.execute(
                    f"INSERT OR IGNORE INTO executions ({', '.join(_COLUMNS)}) "
                    f"SELECT {', '.join(_COLUMNS)} FROM legacy.executions"
                )
                con.execute("COMMIT")
            finally:
                con.close()

    @contextmanager
    def _errors(self, path: Path) -> Iterator[None]:
        """A corrupt, truncated or unreadable file is one line, not a traceback."""
        try:
            yield
        except sqlite3.Error as exc:
            raise ExecutionError(f"the execution ledger in {path} cannot be used: {exc}") from None

    def _connect(self, mode: str) -> sqlite3.Connection:
        con = sqlite3.connect(_uri(self.path, mode), uri=True, timeout=30, isolation_level=None)
        con.execute("PRAGMA busy_timeout=30000")
        return con

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction on a connection of its own (the API calls from several threads)."""
        with self._errors(self.path):
            con = self._connect("rw")
            try:
                con.execute("BEGIN IMMEDIATE")
                try:
                    yield con
                    con.execute("COMMIT")
                except BaseException:
                    con.execute("ROLLBACK")
                    raise
            finally:
                con.close()

    def _rows(self, sql: str, args: tuple[Any, ...]) -> list[dict[str, Any]]:
        with self._errors(self.path):
            con = self._connect("ro")
            try:
                con.row_factory = sqlite3.Row
                return [dict(r) for r in con.execute(sql, args).fetchall()]
            finally:
                con.close()

    def claim(self, thread: str, p: Proposal, executor: str, plan: Plan, by: str) -> None:
        with self._tx() as con:
            won = con.execute(_CLAIM.format(p="?"), _claim_args(thread, p, executor, plan, by)).rowcount == 1
        if not won:
            raise _already(self.get(thread, p.id), p.id)

    def finish(self, thread: str, proposal_id: str, content_hash: str, state: str, detail: str) -> None:
        with self._tx() as con:
            con.execute(
                _FINISH.format(p="?"), (state, detail[:1000], time.time(), thread, proposal_id, content_hash)
            )

    def get(self, thread: str, proposal_id: str) -> dict[str, Any] | None:
        rows = self._rows(_LATEST.format(p="?"), (thread, proposal_id))
        return rows[0] if rows else None

    def for_thread(self, thread: str) -> dict[str, dict[str, Any]]:
        rows = self._rows("SELECT * FROM executions WHERE thread = ? ORDER BY started", (thread,))
        return {r["proposal_id"]: r for r in rows}


class PostgresLedger:
    """The ledger in the PostgreSQL database of ``forensic serve --db`` and its workers."""

    def __init__(self, conninfo: str) -> None:
        from forensic.harness.service.schema import MigrationError, migrate

        self.conninfo = conninfo
        try:
            migrate(conninfo)  # concurrent first starts: the schema lock makes one create it
        except MigrationError as exc:
            raise ExecutionError(f"the execution ledger in PostgreSQL: {exc}") from None

    @contextmanager
    def _tx(self) -> Iterator[Any]:
        import psycopg
        from psycopg.rows import dict_row

        try:
            with (
                psycopg.connect(self.conninfo, connect_timeout=10, row_factory=dict_row) as con,
                con.transaction(),
            ):
                yield con
        except psycopg.Error as exc:
            raise ExecutionError(
                f"the execution ledger in PostgreSQL: {' '.join(str(exc).split())[:300]}"
            ) from None

    def claim(self, thread: str, p: Proposal, executor: str, plan: Plan, by: str) -> None:
        with self._tx() as con:
            won = con.execute(_CLAIM.format(p="%s"), _claim_args(thread, p, executor, plan, by)).rowcount == 1
        if not won:
            raise _already(self.get(thread, p.id), p.id)

    def finish(self, thread: str, proposal_id: str, content_hash: str, state: str, detail: str) -> None:
        with self._tx() as con:
            con.execute(
                _FINISH.format(p="%s"), (state, detail[:1000], time.time(), thread, proposal_id, content_hash)
            )

    def get(self, thread: str, proposal_id: str) -> dict[str, Any] | None:
        with self._tx() as con:
            row = con.execute(_LATEST.format(p="%s"), (thread, proposal_id)).fetchone()
        return dict(row) if row else None

    def for_thread(self, thread: str) -> dict[str, dict[str, Any]]:
        with self._tx() as con:
            rows = con.execute(
                "SELECT * FROM executions WHERE thread = %s ORDER BY started", (thread,)
            ).fetchall()
        return {r["proposal_id"]: dict(r) for r in rows}
