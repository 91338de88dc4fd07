"""statistics windows: the agents' table, index and account deltas per bucket of time,
how long an instance's statistics cover without a break, and the index review findings
already announced to chat

``statistics_buckets`` holds one row per (instance, resolution, bucket, object) with a
column per counter, so a time range sums in SQL; ``statistics_coverage`` the unbroken window
an unused-index finding needs; ``object_statistics`` learns when each object's counters last
reset, when it was last read and when its table's snapshot was asked for.

Revision ID: e7a3c5b1d9f4
Revises: a1c5e7b9d3f2
Create Date: 2026-11-28 13:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import quanta.core.db

revision: str = "e7a3c5b1d9f4"
down_revision: str | None = "a1c5e7b9d3f2"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "index_review_announced",
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("table_name", sa.String(length=129), nullable=False),
        sa.Column("index_name", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("announced_at", quanta.core.db.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["instance_id"],
            ["instances.id"],
            name=op.f("fk_index_review_announced_instance_id_instances"),
        ),
        sa.PrimaryKeyConstraint(
            "instance_id",
            "table_name",
            "index_name",
            "kind",
            name=op.f("pk_index_review_announced"),
        ),
    )
    op.create_table(
        "statistics_buckets",
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("resolution", sa.String(length=6), nullable=False),
        sa.Column("bucket_start", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("schema_name", sa.String(length=64), nullable=False),
        sa.Column("object_name", sa.String(length=128), nullable=False),
        sa.Column("index_name", sa.String(length=64), nullable=False),
        sa.Column("rows_read", sa.BigInteger(), nullable=True),
        sa.Column("rows_changed", sa.BigInteger(), nullable=True),
        sa.Column("rows_changed_x_indexes", sa.BigInteger(), nullable=True),
        sa.Column("count_star", sa.BigInteger(), nullable=True),
        sa.Column("count_read", sa.BigInteger(), nullable=True),
        sa.Column("count_write", sa.BigInteger(), nullable=True),
        sa.Column("count_fetch", sa.BigInteger(), nullable=True),
        sa.Column("count_insert", sa.BigInteger(), nullable=True),
        sa.Column("count_update", sa.BigInteger(), nullable=True),
        sa.Column("count_delete", sa.BigInteger(), nullable=True),
        sa.Column("total_connections", sa.BigInteger(), nullable=True),
        sa.Column("total_ssl_connections", sa.BigInteger(), nullable=True),
        sa.Column("bytes_received", sa.BigInteger(), nullable=True),
        sa.Column("bytes_sent", sa.BigInteger(), nullable=True),
        sa.Column("binlog_bytes_written", sa.BigInteger(), nullable=True),
        sa.Column("rows_sent", sa.BigInteger(), nullable=True),
        sa.Column("rows_fetched", sa.BigInteger(), nullable=True),
        sa.Column("table_rows_read", sa.BigInteger(), nullable=True),
        sa.Column("rows_deleted", sa.BigInteger(), nullable=True),
        sa.Column("rows_inserted", sa.BigInteger(), nullable=True),
        sa.Column("rows_updated", sa.BigInteger(), nullable=True),
        sa.Column("select_commands", sa.BigInteger(), nullable=True),
        sa.Column("update_commands", sa.BigInteger(), nullable=True),
        sa.Column("other_commands", sa.BigInteger(), nullable=True),
        sa.Column("commit_transactions", sa.BigInteger(), nullable=True),
        sa.Column("rollback_transactions", sa.BigInteger(), nullable=True),
        sa.Column("denied_connections", sa.BigInteger(), nullable=True),
        sa.Column("lost_connections", sa.BigInteger(), nullable=True),
        sa.Column("access_denied", sa.BigInteger(), nullable=True),
        sa.Column("empty_queries", sa.BigInteger(), nullable=True),
        sa.Column("max_statement_time_exceeded", sa.BigInteger(), nullable=True),
        sa.Column("statement_errors", sa.BigInteger(), nullable=True),
        sa.Column("sum_timer_wait", sa.Float(), nullable=True),
        sa.Column("sum_timer_read", sa.Float(), nullable=True),
        sa.Column("sum_timer_write", sa.Float(), nullable=True),
        sa.Column("sum_timer_fetch", sa.Float(), nullable=True),
        sa.Column("sum_timer_insert", sa.Float(), nullable=True),
        sa.Column("sum_timer_update", sa.Float(), nullable=True),
        sa.Column("sum_timer_delete", sa.Float(), nullable=True),
        sa.Column("connected_time", sa.Float(), nullable=True),
        sa.Column("busy_time", sa.Float(), nullable=True),
        sa.Column("cpu_time", sa.Float(), nullable=True),
        sa.Column("concurrent_connections_max", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["instance_id"],
            ["instances.id"],
            name=op.f("fk_statistics_buckets_instance_id_instances"),
        ),
        sa.PrimaryKeyConstraint(
            "instance_id",
            "resolution",
            "bucket_start",
            "kind",
            "schema_name",
            "object_name",
            "index_name",
            name=op.f("pk_statistics_buckets"),
        ),
    )
    op.create_table(
        "statistics_coverage",
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("origin", sa.String(length=10), nullable=False),
        sa.Column("first_seen", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("since", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("until", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("broken_at", quanta.core.db.UTCDateTime(), nullable=True),
        sa.Column("break_reason", sa.String(length=20), nullable=True),
        sa.ForeignKeyConstraint(
            ["instance_id"],
            ["instances.id"],
            name=op.f("fk_statistics_coverage_instance_id_instances"),
        ),
        sa.PrimaryKeyConstraint("instance_id", name=op.f("pk_statistics_coverage")),
    )
    with op.batch_alter_table("object_statistics", schema=None) as batch_op:
        batch_op.add_column(sa.Column("reset_at", quanta.core.db.UTCDateTime(), nullable=True))
        batch_op.add_column(sa.Column("last_read_at", quanta.core.db.UTCDateTime(), nullable=True))
        batch_op.add_column(
            sa.Column("snapshot_requested_at", quanta.core.db.UTCDateTime(), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("object_statistics", schema=None) as batch_op:
        batch_op.drop_column("snapshot_requested_at")
        batch_op.drop_column("last_read_at")
        batch_op.drop_column("reset_at")

    op.drop_table("statistics_coverage")
    op.drop_table("statistics_buckets")
    op.drop_table("index_review_announced")
