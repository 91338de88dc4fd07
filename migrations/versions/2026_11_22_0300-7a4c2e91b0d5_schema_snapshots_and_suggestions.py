"""schema snapshots per table and index suggestions

Revision ID: 7a4c2e91b0d5
Revises: 3c1f0a9e7b21
Create Date: 2026-11-22 03:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import quanta.core.db

revision: str = "7a4c2e91b0d5"
down_revision: str | None = "3c1f0a9e7b21"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "table_snapshots",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("table_name", sa.String(length=129), nullable=False),
        sa.Column("taken_at", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("changed_at", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("server_flavor", sa.String(length=20), nullable=False),
        sa.Column("server_version", sa.String(length=100), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("document", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["instance_id"], ["instances.id"], name=op.f("fk_table_snapshots_instance_id_instances")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_table_snapshots")),
        sa.UniqueConstraint(
            "instance_id", "table_name", name=op.f("uq_table_snapshots_instance_id_table_name")
        ),
    )
    op.create_table(
        "suggestions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("query_id", sa.String(length=16), nullable=False),
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("table_name", sa.String(length=129), nullable=False),
        sa.Column("action", sa.String(length=10), nullable=False),
        sa.Column("columns", sa.JSON(), nullable=False),
        sa.Column("ddl", sa.Text(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("notes", sa.JSON(), nullable=False),
        sa.Column("redundant", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=10), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("validation", sa.JSON(), nullable=True),
        sa.Column("created_at", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("updated_at", quanta.core.db.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["instance_id"], ["instances.id"], name=op.f("fk_suggestions_instance_id_instances")
        ),
        sa.ForeignKeyConstraint(
            ["query_id"],
            ["query_classes.query_id"],
            name=op.f("fk_suggestions_query_id_query_classes"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_suggestions")),
        sa.UniqueConstraint(
            "query_id",
            "instance_id",
            "table_name",
            "ddl",
            name=op.f("uq_suggestions_query_id_instance_id_table_name_ddl"),
        ),
    )
    op.create_index(
        "ix_suggestions_query_id_instance_id", "suggestions", ["query_id", "instance_id"]
    )
    op.create_index(
        "ix_suggestions_instance_id_table_name", "suggestions", ["instance_id", "table_name"]
    )


def downgrade() -> None:
    op.drop_index("ix_suggestions_instance_id_table_name", table_name="suggestions")
    op.drop_index("ix_suggestions_query_id_instance_id", table_name="suggestions")
    op.drop_table("suggestions")
    op.drop_table("table_snapshots")
