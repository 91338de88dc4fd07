"""snapshot refresh debounce: when a queued re-read of a table's snapshot is due

A schema statement seen in ingest queues a re-read of the tables it names; ``refresh_due_at``
keeps that to one per table per QUANTA_SNAPSHOT_REFRESH_MIN_SECONDS.

Revision ID: e3a7c9b1d5f4
Revises: e7a3c5b1d9f4
Create Date: 2026-11-28 14:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import quanta.core.db

revision: str = "e3a7c9b1d5f4"
down_revision: str | None = "e7a3c5b1d9f4"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("table_snapshots", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("refresh_due_at", quanta.core.db.UTCDateTime(), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("table_snapshots", schema=None) as batch_op:
        batch_op.drop_column("refresh_due_at")
