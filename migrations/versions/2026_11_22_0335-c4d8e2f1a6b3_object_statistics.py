"""object statistics: table, index and account counters from the agents' stats batches

Revision ID: c4d8e2f1a6b3
Revises: c4d8e2a61f07
Create Date: 2026-11-22 03:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import quanta.core.db

revision: str = "c4d8e2f1a6b3"
down_revision: str | None = "c4d8e2a61f07"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "object_statistics",
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("schema_name", sa.String(length=64), nullable=False),
        sa.Column("object_name", sa.String(length=128), nullable=False),
        sa.Column("index_name", sa.String(length=64), nullable=False),
        sa.Column("since", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("until", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("resets", sa.Integer(), nullable=False),
        sa.Column("counters", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["instance_id"],
            ["instances.id"],
            name=op.f("fk_object_statistics_instance_id_instances"),
        ),
        sa.PrimaryKeyConstraint(
            "instance_id", "kind", "schema_name", "object_name", "index_name",
            name=op.f("pk_object_statistics"),
        ),
    )  # fmt: skip


def downgrade() -> None:
    op.drop_table("object_statistics")
