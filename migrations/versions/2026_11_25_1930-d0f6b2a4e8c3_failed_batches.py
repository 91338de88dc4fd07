"""failed batches: attempts and the reason of the last failure

A batch the worker cannot process is marked 'failed' with its reason instead of staying
queued (and re-queued by beat) for ever; `attempts` bounds the retries of a batch whose
worker dies on it.

Revision ID: d0f6b2a4e8c3
Revises: c9e5a1f3d7b2
Create Date: 2026-11-25 19:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "d0f6b2a4e8c3"
down_revision: str | None = "c9e5a1f3d7b2"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("ingest_batches") as batch_op:
        batch_op.add_column(sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"))
        batch_op.add_column(sa.Column("error", sa.String(length=500), nullable=True))


def downgrade() -> None:
    # A failed batch goes back to the queue it came from: the older schema knows no failure.
    op.execute("UPDATE ingest_batches SET status = 'queued' WHERE status = 'failed'")
    with op.batch_alter_table("ingest_batches") as batch_op:
        batch_op.drop_column("error")
        batch_op.drop_column("attempts")
