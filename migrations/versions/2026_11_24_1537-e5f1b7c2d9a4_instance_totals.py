"""instance totals: every query of an instance summed per period, at each resolution

The denominators of a query's "% of total", read from a few hundred rows instead of every
bucket of the range. Existing buckets are summed into them, so upgraded stores agree.

Revision ID: e5f1b7c2d9a4
Revises: c4d8e2f1a6b3
Create Date: 2026-11-24 15:37:04
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import quanta.core.db

revision: str = "e5f1b7c2d9a4"
down_revision: str | None = "c4d8e2f1a6b3"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

RESOLUTIONS = ("minute", "hour", "day")
KEY = ("instance_id", "bucket_start", "source")
INTEGER_SUMS = (
    "rows_sent", "rows_examined", "rows_affected", "bytes_sent", "tmp_tables",
    "tmp_disk_tables", "filesort", "filesort_on_disk", "full_scan", "full_join",
    "merge_passes", "innodb_io_r_ops", "innodb_io_r_bytes",
)  # fmt: skip
FLOAT_SUMS = ("innodb_io_r_wait", "innodb_rec_lock_wait", "innodb_queue_wait")
LATE_INTEGER_SUMS = ("errors", "warnings", "no_index_used", "no_good_index_used")


def _columns() -> list[sa.Column]:  # type: ignore[type-arg]
    return [
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("bucket_start", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("source", sa.String(length=20), nullable=False),
        sa.Column("count", sa.BigInteger(), nullable=False),
        sa.Column("query_time_sum", sa.Float(), nullable=False),
        sa.Column("query_time_min", sa.Float(), nullable=True),
        sa.Column("query_time_max", sa.Float(), nullable=True),
        sa.Column("lock_time_sum", sa.Float(), nullable=True),
        sa.Column("lock_time_max", sa.Float(), nullable=True),
        *(sa.Column(f"{n}_sum", sa.BigInteger(), nullable=True) for n in INTEGER_SUMS),
        *(sa.Column(f"{n}_sum", sa.Float(), nullable=True) for n in FLOAT_SUMS),
        *(sa.Column(f"{n}_sum", sa.BigInteger(), nullable=True) for n in LATE_INTEGER_SUMS),
    ]


def upgrade() -> None:
    for resolution in RESOLUTIONS:
        table = f"instance_totals_{resolution}"
        columns = _columns()
        op.create_table(
            table,
            *columns,
            sa.ForeignKeyConstraint(
                ["instance_id"], ["instances.id"], name=op.f(f"fk_{table}_instance_id_instances")
            ),
            sa.PrimaryKeyConstraint(*KEY, name=op.f(f"pk_{table}")),
        )
        names = [c.name for c in columns]
        metrics = [n for n in names if n not in KEY]
        aggregates = {"query_time_min": "min", "query_time_max": "max", "lock_time_max": "max"}
        summed = ", ".join(f"{aggregates.get(n, 'sum')}({n})" for n in metrics)
        op.execute(
            f"INSERT INTO {table} ({', '.join(names)}) "
            f"SELECT {', '.join(KEY)}, {summed} FROM query_buckets_{resolution} "
            f"GROUP BY {', '.join(KEY)}"
        )


def downgrade() -> None:
    for resolution in RESOLUTIONS:
        op.drop_table(f"instance_totals_{resolution}")
