"""stage profiles

Revision ID: c4e8a2f6b0d3
Revises: e3a7c1d9b5f4
Create Date: 2026-11-28 15:50:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import quanta.core.db

revision: str = "c4e8a2f6b0d3"
down_revision: str | None = "e3a7c1d9b5f4"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "stage_collection",
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("stages", sa.Boolean(), nullable=False),
        sa.Column("waits", sa.Boolean(), nullable=False),
        sa.Column("reported_at", quanta.core.db.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("instance_id", name=op.f("pk_stage_collection")),
    )
    op.create_table(
        "stage_samples_day",
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("bucket_start", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("query_id", sa.String(length=16), nullable=False),
        sa.Column("executions_sampled", sa.BigInteger(), nullable=False),
        sa.Column("executions_total", sa.BigInteger(), nullable=False),
        sa.Column("response_sum", sa.Float(), nullable=False),
        sa.Column("waits_sampled", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint(
            "instance_id", "bucket_start", "query_id", name=op.f("pk_stage_samples_day")
        ),
    )
    with op.batch_alter_table("stage_samples_day", schema=None) as batch_op:
        batch_op.create_index(
            "ix_stage_samples_day_query_id_bucket_start", ["query_id", "bucket_start"], unique=False
        )

    op.create_table(
        "stage_samples_hour",
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("bucket_start", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("query_id", sa.String(length=16), nullable=False),
        sa.Column("executions_sampled", sa.BigInteger(), nullable=False),
        sa.Column("executions_total", sa.BigInteger(), nullable=False),
        sa.Column("response_sum", sa.Float(), nullable=False),
        sa.Column("waits_sampled", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint(
            "instance_id", "bucket_start", "query_id", name=op.f("pk_stage_samples_hour")
        ),
    )
    with op.batch_alter_table("stage_samples_hour", schema=None) as batch_op:
        batch_op.create_index(
            "ix_stage_samples_hour_query_id_bucket_start",
            ["query_id", "bucket_start"],
            unique=False,
        )

    op.create_table(
        "stage_samples_minute",
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("bucket_start", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("query_id", sa.String(length=16), nullable=False),
        sa.Column("executions_sampled", sa.BigInteger(), nullable=False),
        sa.Column("executions_total", sa.BigInteger(), nullable=False),
        sa.Column("response_sum", sa.Float(), nullable=False),
        sa.Column("waits_sampled", sa.BigInteger(), nullable=False),
    )
    with op.batch_alter_table("stage_samples_minute", schema=None) as batch_op:
        batch_op.create_index(
            "ix_stage_samples_minute_instance_id_bucket_start",
            ["instance_id", "bucket_start"],
            unique=False,
        )
        batch_op.create_index(
            "ix_stage_samples_minute_query_id_bucket_start",
            ["query_id", "bucket_start"],
            unique=False,
        )

    op.create_table(
        "stage_times_day",
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("bucket_start", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("query_id", sa.String(length=16), nullable=False),
        sa.Column("stage", sa.String(length=128), nullable=False),
        sa.Column("wait_event", sa.String(length=128), nullable=False),
        sa.Column("time_sum", sa.Float(), nullable=False),
        sa.Column("count", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint(
            "instance_id",
            "bucket_start",
            "query_id",
            "stage",
            "wait_event",
            name=op.f("pk_stage_times_day"),
        ),
    )
    with op.batch_alter_table("stage_times_day", schema=None) as batch_op:
        batch_op.create_index(
            "ix_stage_times_day_query_id_bucket_start", ["query_id", "bucket_start"], unique=False
        )

    op.create_table(
        "stage_times_hour",
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("bucket_start", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("query_id", sa.String(length=16), nullable=False),
        sa.Column("stage", sa.String(length=128), nullable=False),
        sa.Column("wait_event", sa.String(length=128), nullable=False),
        sa.Column("time_sum", sa.Float(), nullable=False),
        sa.Column("count", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint(
            "instance_id",
            "bucket_start",
            "query_id",
            "stage",
            "wait_event",
            name=op.f("pk_stage_times_hour"),
        ),
    )
    with op.batch_alter_table("stage_times_hour", schema=None) as batch_op:
        batch_op.create_index(
            "ix_stage_times_hour_query_id_bucket_start", ["query_id", "bucket_start"], unique=False
        )

    op.create_table(
        "stage_times_minute",
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("bucket_start", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("query_id", sa.String(length=16), nullable=False),
        sa.Column("stage", sa.String(length=128), nullable=False),
        sa.Column("wait_event", sa.String(length=128), nullable=False),
        sa.Column("time_sum", sa.Float(), nullable=False),
        sa.Column("count", sa.BigInteger(), nullable=False),
    )
    with op.batch_alter_table("stage_times_minute", schema=None) as batch_op:
        batch_op.create_index(
            "ix_stage_times_minute_instance_id_bucket_start",
            ["instance_id", "bucket_start"],
            unique=False,
        )
        batch_op.create_index(
            "ix_stage_times_minute_query_id_bucket_start",
            ["query_id", "bucket_start"],
            unique=False,
        )


def downgrade() -> None:
    with op.batch_alter_table("stage_times_minute", schema=None) as batch_op:
        batch_op.drop_index("ix_stage_times_minute_query_id_bucket_start")
        batch_op.drop_index("ix_stage_times_minute_instance_id_bucket_start")

    op.drop_table("stage_times_minute")
    with op.batch_alter_table("stage_times_hour", schema=None) as batch_op:
        batch_op.drop_index("ix_stage_times_hour_query_id_bucket_start")

    op.drop_table("stage_times_hour")
    with op.batch_alter_table("stage_times_day", schema=None) as batch_op:
        batch_op.drop_index("ix_stage_times_day_query_id_bucket_start")

    op.drop_table("stage_times_day")
    with op.batch_alter_table("stage_samples_minute", schema=None) as batch_op:
        batch_op.drop_index("ix_stage_samples_minute_query_id_bucket_start")
        batch_op.drop_index("ix_stage_samples_minute_instance_id_bucket_start")

    op.drop_table("stage_samples_minute")
    with op.batch_alter_table("stage_samples_hour", schema=None) as batch_op:
        batch_op.drop_index("ix_stage_samples_hour_query_id_bucket_start")

    op.drop_table("stage_samples_hour")
    with op.batch_alter_table("stage_samples_day", schema=None) as batch_op:
        batch_op.drop_index("ix_stage_samples_day_query_id_bucket_start")

    op.drop_table("stage_samples_day")
    op.drop_table("stage_collection")
