"""annotations: deploys and schema changes on the timeline, with tags and instances

Revision ID: a7e3c5d91b42
Revises: 7a4c2e91b0d5
Create Date: 2026-11-22 03:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import quanta.core.db

revision: str = "a7e3c5d91b42"
down_revision: str | None = "7a4c2e91b0d5"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "annotations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("text", sa.String(length=1000), nullable=False),
        sa.Column("time", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("end_time", quanta.core.db.UTCDateTime(), nullable=True),
        sa.Column("created_by", sa.String(length=100), nullable=False),
        sa.Column("created_by_token_id", sa.Integer(), nullable=True),
        sa.Column("created_by_user_id", sa.Integer(), nullable=True),
        sa.Column("created_at", quanta.core.db.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["created_by_token_id"],
            ["api_tokens.id"],
            name=op.f("fk_annotations_created_by_token_id_api_tokens"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_annotations")),
    )
    op.create_index("ix_annotations_time", "annotations", ["time"], unique=False)
    op.create_table(
        "annotation_tags",
        sa.Column("annotation_id", sa.Integer(), nullable=False),
        sa.Column("tag", sa.String(length=100), nullable=False),
        sa.ForeignKeyConstraint(
            ["annotation_id"],
            ["annotations.id"],
            name=op.f("fk_annotation_tags_annotation_id_annotations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("annotation_id", "tag", name=op.f("pk_annotation_tags")),
    )
    op.create_index("ix_annotation_tags_tag", "annotation_tags", ["tag"], unique=False)
    op.create_table(
        "annotation_instances",
        sa.Column("annotation_id", sa.Integer(), nullable=False),
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["annotation_id"],
            ["annotations.id"],
            name=op.f("fk_annotation_instances_annotation_id_annotations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["instance_id"],
            ["instances.id"],
            name=op.f("fk_annotation_instances_instance_id_instances"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "annotation_id", "instance_id", name=op.f("pk_annotation_instances")
        ),
    )
    op.create_index(
        "ix_annotation_instances_instance_id",
        "annotation_instances",
        ["instance_id"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index("ix_annotation_instances_instance_id", table_name="annotation_instances")
    op.drop_table("annotation_instances")
    op.drop_index("ix_annotation_tags_tag", table_name="annotation_tags")
    op.drop_table("annotation_tags")
    op.drop_index("ix_annotations_time", table_name="annotations")
    op.drop_table("annotations")
