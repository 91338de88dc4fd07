"""notify: chat channels, their deliveries and every delivery attempt

Revision ID: 5b9d3f7e2c61
Revises: 8d2e5b7c4a19
Create Date: 2026-11-22 03:20:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import quanta.core.db

revision: str = "5b9d3f7e2c61"
down_revision: str | None = "8d2e5b7c4a19"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "notify_channels",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("type", sa.String(length=20), nullable=False),
        sa.Column("url_encrypted", sa.Text(), nullable=False),
        sa.Column("url_redacted", sa.String(length=300), nullable=False),
        sa.Column("instances", sa.JSON(), nullable=False),
        sa.Column("min_load_share", sa.Float(), nullable=False),
        sa.Column("events", sa.JSON(), nullable=False),
        sa.Column("quiet_start_hour", sa.Integer(), nullable=True),
        sa.Column("quiet_end_hour", sa.Integer(), nullable=True),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("created_at", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("updated_at", quanta.core.db.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_notify_channels")),
        sa.UniqueConstraint("name", name=op.f("uq_notify_channels_name")),
    )
    op.create_table(
        "notify_deliveries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("channel_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("event", sa.String(length=30), nullable=False),
        sa.Column("suggestion_id", sa.Integer(), nullable=True),
        sa.Column("annotation_id", sa.Integer(), nullable=True),
        sa.Column("content_hash", sa.String(length=64), nullable=True),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=10), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", quanta.core.db.UTCDateTime(), nullable=True),
        sa.Column("created_at", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("sent_at", quanta.core.db.UTCDateTime(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("digest_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["channel_id"],
            ["notify_channels.id"],
            name=op.f("fk_notify_deliveries_channel_id_notify_channels"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["digest_id"],
            ["notify_deliveries.id"],
            name=op.f("fk_notify_deliveries_digest_id_notify_deliveries"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_notify_deliveries")),
        sa.UniqueConstraint(
            "channel_id",
            "suggestion_id",
            "content_hash",
            name=op.f("uq_notify_deliveries_channel_id_suggestion_id_content_hash"),
        ),
        sa.UniqueConstraint(
            "channel_id",
            "annotation_id",
            "content_hash",
            name=op.f("uq_notify_deliveries_channel_id_annotation_id_content_hash"),
        ),
    )
    op.create_index(
        "ix_notify_deliveries_status_next_attempt_at",
        "notify_deliveries",
        ["status", "next_attempt_at"],
        unique=False,
    )
    op.create_index(
        "ix_notify_deliveries_channel_id_sent_at",
        "notify_deliveries",
        ["channel_id", "sent_at"],
        unique=False,
    )
    op.create_table(
        "notify_attempts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("delivery_id", sa.Integer(), nullable=False),
        sa.Column("attempted_at", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("duration_ms", sa.Integer(), nullable=False),
        sa.Column("next_retry_at", quanta.core.db.UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["delivery_id"],
            ["notify_deliveries.id"],
            name=op.f("fk_notify_attempts_delivery_id_notify_deliveries"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_notify_attempts")),
    )
    op.create_index(
        op.f("ix_notify_attempts_delivery_id"), "notify_attempts", ["delivery_id"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_notify_attempts_delivery_id"), table_name="notify_attempts")
    op.drop_table("notify_attempts")
    op.drop_index("ix_notify_deliveries_channel_id_sent_at", table_name="notify_deliveries")
    op.drop_index("ix_notify_deliveries_status_next_attempt_at", table_name="notify_deliveries")
    op.drop_table("notify_deliveries")
    op.drop_table("notify_channels")
