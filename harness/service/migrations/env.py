"""Alembic environment for the service database (SQLite or PostgreSQL).

Run through :func:`forensic.harness.service.schema.migrate` (``forensic db upgrade``, and every
store, worker and execution ledger when it opens a database), which hands over one connection that
already holds the schema's lock (an advisory lock, or SQLite's write lock) inside an open transaction: the migrations run in that
transaction, so concurrent starters apply each revision once.
"""

from alembic import context
from forensic.harness.service.schema import VERSION_TABLE

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - only reachable by running the alembic command by hand
    raise SystemExit("run the migrations with `forensic db upgrade --db postgresql://...`")

context.configure(connection=connection, version_table=VERSION_TABLE, transactional_ddl=True)
with context.begin_transaction():
    context.run_migrations()
