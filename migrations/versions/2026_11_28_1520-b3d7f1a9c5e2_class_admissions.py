"""class admissions: new query classes per instance and hour, added or folded past the caps

``class_admissions`` counts, per instance and wall-clock hour, the query classes the
instance added under QUANTA_MAX_CLASSES_PER_INSTANCE / QUANTA_MAX_NEW_CLASSES_PER_HOUR and
the statement shapes (and their executions) folded into "other queries" past them. No
foreign key, like the metric tables: deleting an instance finds its rows by instance_id.

Revision ID: b3d7f1a9c5e2
Revises: c6f0a4b8d2e5
Create Date: 2026-11-28 15:20:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import quanta.core.db

revision: str = "b3d7f1a9c5e2"
down_revision: str | None = "c6f0a4b8d2e5"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "class_admissions",
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("hour_start", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("admitted", sa.BigInteger(), nullable=False),
        sa.Column("folded", sa.BigInteger(), nullable=False),
        sa.Column("folded_events", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("instance_id", "hour_start", name=op.f("pk_class_admissions")),
    )


def downgrade() -> None:
    op.drop_table("class_admissions")
