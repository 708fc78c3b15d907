"""The execution ledger's table under the migrations, and the grouping window's index on SQLite too.

``executions`` was created by the ledger itself (``CREATE TABLE IF NOT EXISTS``) in whatever
database it opened, so a database at 0001 may have it already: it is created only where missing,
with the same columns, and its rows are left as they are. PostgreSQL had ``inv_window`` from 0001.

Revision ID: 0002
Revises: 0001
"""

from alembic import op
import sqlalchemy as sa

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

EXECUTIONS = """CREATE TABLE executions (
    thread TEXT NOT NULL, proposal_id TEXT NOT NULL, content_hash TEXT NOT NULL, action TEXT, target TEXT,
    executor TEXT, state TEXT NOT NULL, plan TEXT, detail TEXT, "by" TEXT, started DOUBLE PRECISION,
    finished DOUBLE PRECISION, PRIMARY KEY (thread, proposal_id, content_hash))"""


def upgrade() -> None:
    bind = op.get_bind()
    if not sa.inspect(bind).has_table("executions"):
        bind.exec_driver_sql(EXECUTIONS)
    if bind.dialect.name == "sqlite":
        bind.exec_driver_sql("CREATE INDEX inv_window ON investigations(last_at)")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.drop_index("inv_window", table_name="investigations")
