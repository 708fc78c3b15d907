"""The schema of forensic 0.2: on PostgreSQL the versioned SQL it applied as ``forensic_schema``
version 1, on SQLite the tables its store created itself (``CREATE TABLE IF NOT EXISTS``).

A database made by that release is adopted at this revision (stamped, not re-run): see
:func:`forensic.harness.service.schema.migrate`.

Revision ID: 0001
Revises:
"""

from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

POSTGRESQL = [
    """CREATE TABLE webhooks (
  id BIGSERIAL PRIMARY KEY, received_at DOUBLE PRECISION NOT NULL, "user" TEXT NOT NULL, body TEXT NOT NULL)""",
    """CREATE TABLE alerts (
  fingerprint TEXT PRIMARY KEY, status TEXT NOT NULL, alertname TEXT, labels TEXT NOT NULL,
  annotations TEXT NOT NULL, starts_at DOUBLE PRECISION, ends_at DOUBLE PRECISION, generator_url TEXT,
  investigation_id TEXT, received_at DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL,
  receipts INTEGER NOT NULL)""",
    "CREATE INDEX alerts_inv ON alerts(investigation_id)",
    """CREATE TABLE dead_letters (
  id BIGSERIAL PRIMARY KEY, received_at DOUBLE PRECISION NOT NULL, "user" TEXT, status INTEGER NOT NULL,
  reason TEXT NOT NULL, body BYTEA)""",
    """CREATE TABLE investigations (
  id TEXT PRIMARY KEY, job TEXT, hosts TEXT NOT NULL, gpus TEXT NOT NULL, first_at DOUBLE PRECISION,
  last_at DOUBLE PRECISION, status TEXT NOT NULL, bundle TEXT, thread_id TEXT NOT NULL,
  created_at DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL, started_at DOUBLE PRECISION,
  finished_at DOUBLE PRECISION, report TEXT, verdict TEXT, component TEXT, confidence DOUBLE PRECISION,
  report_status TEXT, alert_count INTEGER NOT NULL DEFAULT 0, resolved_count INTEGER NOT NULL DEFAULT 0,
  owner TEXT, lease_until DOUBLE PRECISION, runs INTEGER NOT NULL DEFAULT 0, error TEXT,
  seq BIGSERIAL NOT NULL)""",
    "CREATE INDEX inv_status ON investigations(status, created_at, seq)",
    "CREATE INDEX inv_window ON investigations(last_at)",
    """CREATE TABLE events (
  id BIGSERIAL PRIMARY KEY, investigation TEXT NOT NULL, key TEXT NOT NULL, time DOUBLE PRECISION NOT NULL,
  kind TEXT NOT NULL, data TEXT NOT NULL, UNIQUE(investigation, key))""",
    """CREATE TABLE audit (
  id BIGSERIAL PRIMARY KEY, time DOUBLE PRECISION NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL,
  investigation TEXT, proposal TEXT, content_hash TEXT, outcome TEXT NOT NULL, reason TEXT NOT NULL,
  detail TEXT NOT NULL)""",
    """CREATE FUNCTION forensic_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN RAISE EXCEPTION 'audit log is append-only'; END $$""",
    """CREATE TRIGGER audit_no_update BEFORE UPDATE OR DELETE ON audit
  FOR EACH ROW EXECUTE FUNCTION forensic_audit_append_only()""",
    """CREATE TABLE notifications (
  id BIGSERIAL PRIMARY KEY, investigation TEXT NOT NULL, url TEXT NOT NULL, payload TEXT NOT NULL,
  state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, next_at DOUBLE PRECISION NOT NULL, last_error TEXT,
  UNIQUE(investigation, url))""",
]

SQLITE = [
    """CREATE TABLE webhooks (
  id INTEGER PRIMARY KEY, received_at REAL NOT NULL, user TEXT NOT NULL, body TEXT NOT NULL)""",
    """CREATE TABLE alerts (
  fingerprint TEXT PRIMARY KEY, status TEXT NOT NULL, alertname TEXT, labels TEXT NOT NULL,
  annotations TEXT NOT NULL, starts_at REAL, ends_at REAL, generator_url TEXT,
  investigation_id TEXT, received_at REAL NOT NULL, updated_at REAL NOT NULL, receipts INTEGER NOT NULL)""",
    "CREATE INDEX alerts_inv ON alerts(investigation_id)",
    """CREATE TABLE dead_letters (
  id INTEGER PRIMARY KEY, received_at REAL NOT NULL, user TEXT, status INTEGER NOT NULL,
  reason TEXT NOT NULL, body BLOB)""",
    """CREATE TABLE investigations (
  id TEXT PRIMARY KEY, job TEXT, hosts TEXT NOT NULL, gpus TEXT NOT NULL, first_at REAL, last_at REAL,
  status TEXT NOT NULL, bundle TEXT, thread_id TEXT NOT NULL, created_at REAL NOT NULL,
  updated_at REAL NOT NULL, started_at REAL, finished_at REAL, report TEXT, verdict TEXT,
  component TEXT, confidence REAL, report_status TEXT, alert_count INTEGER NOT NULL DEFAULT 0,
  resolved_count INTEGER NOT NULL DEFAULT 0, owner TEXT, lease_until REAL, runs INTEGER NOT NULL DEFAULT 0,
  error TEXT)""",
    "CREATE INDEX inv_status ON investigations(status)",
    """CREATE TABLE events (
  id INTEGER PRIMARY KEY, investigation TEXT NOT NULL, key TEXT NOT NULL, time REAL NOT NULL,
  kind TEXT NOT NULL, data TEXT NOT NULL, UNIQUE(investigation, key))""",
    """CREATE TABLE audit (
  id INTEGER PRIMARY KEY, time REAL NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL,
  investigation TEXT, proposal TEXT, content_hash TEXT, outcome TEXT NOT NULL, reason TEXT NOT NULL,
  detail TEXT NOT NULL)""",
    """CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
  BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END""",
    """CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
  BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END""",
    """CREATE TABLE notifications (
  id INTEGER PRIMARY KEY, investigation TEXT NOT NULL, url TEXT NOT NULL, payload TEXT NOT NULL,
  state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, next_at REAL NOT NULL, last_error TEXT,
  UNIQUE(investigation, url))""",
]

TABLES = ["notifications", "audit", "events", "investigations", "dead_letters", "alerts", "webhooks"]


def upgrade() -> None:
    bind = op.get_bind()
    for statement in POSTGRESQL if bind.dialect.name == "postgresql" else SQLITE:
        bind.exec_driver_sql(statement)


def downgrade() -> None:
    for table in TABLES:
        op.drop_table(table)
    if op.get_bind().dialect.name == "postgresql":
        op.get_bind().exec_driver_sql("DROP FUNCTION forensic_audit_append_only()")
