"""The audit table becomes a hash chain: ``prev_hash`` and ``hash`` on every row written from now on.

Each new row carries the hash of the row before it (64 zeros for the first chained row) and its own
``hash`` = SHA-256 of ``prev_hash`` followed by the canonical JSON of its fields (see
:func:`forensic.harness.service.store.audit_hash`). Rows written before this revision keep NULL in
both columns: nothing can vouch for them after the fact, and ``forensic audit verify --db`` counts
them as before the chain rather than as broken.

``ADD COLUMN`` leaves the append-only triggers of 0001 in place on both databases (SQLite does not
rebuild the table for it). PostgreSQL also gets a statement trigger refusing ``TRUNCATE``, which the
row trigger of 0001 does not see and which would empty the chain without breaking a link. A
unique index on ``prev_hash`` makes a fork (two rows following one) impossible in the database
itself, whatever the writers' serialisation.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("audit", sa.Column("prev_hash", sa.Text(), nullable=True))
    op.add_column("audit", sa.Column("hash", sa.Text(), nullable=True))
    # No two rows may follow one row: a fork is refused by the database even if the writers' lock
    # failed. NULLs (the rows from before the chain) are distinct on both databases.
    op.create_index("audit_prev_hash", "audit", ["prev_hash"], unique=True)
    if op.get_bind().dialect.name == "postgresql":
        op.get_bind().exec_driver_sql(
            """CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON audit
  FOR EACH STATEMENT EXECUTE FUNCTION forensic_audit_append_only()"""
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.get_bind().exec_driver_sql("DROP TRIGGER audit_no_truncate ON audit")
    op.drop_index("audit_prev_hash", table_name="audit")
    # SQLite (3.35+) drops a column in place: the append-only triggers name no column and stay.
    op.drop_column("audit", "hash")
    op.drop_column("audit", "prev_hash")
