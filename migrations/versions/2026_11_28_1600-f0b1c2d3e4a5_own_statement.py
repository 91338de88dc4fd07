"""own statement: whether a query class is one of Quanta's own statements, stored once

Reads left Quanta's own statements out by matching every class's fingerprint against two
dozen LIKE patterns (``analysis.own.OWN_FINGERPRINTS``) in every branch of every read: 2.3x
the overview's time (bench/api_latency.py). The match is now made once, when a class is
stored (``query_classes.own_statement``); this fills it for the classes stored before.
A change of the patterns needs such a backfill again.

Revision ID: f0b1c2d3e4a5
Revises: c4e8a2f6b0d3
Create Date: 2026-11-28 16:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from quanta.analysis.own import OWN_FINGERPRINTS

revision: str = "f0b1c2d3e4a5"
down_revision: str | None = "c4e8a2f6b0d3"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("query_classes") as batch_op:
        batch_op.add_column(
            sa.Column("own_statement", sa.Boolean(), nullable=False, server_default="0")
        )
    classes = sa.table("query_classes", sa.column("fingerprint"), sa.column("own_statement"))
    fingerprint = sa.func.lower(classes.c.fingerprint)
    op.execute(
        classes.update()
        .where(sa.or_(*(fingerprint.like(pattern) for pattern in OWN_FINGERPRINTS)))
        .values(own_statement=True)
    )


def downgrade() -> None:
    # Not batch mode: SQLite would rebuild the table, which other tables' foreign keys forbid.
    op.drop_column("query_classes", "own_statement")
