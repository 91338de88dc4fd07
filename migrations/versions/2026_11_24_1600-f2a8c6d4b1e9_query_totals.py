"""query totals: each query's hour and day buckets summed over schema, user and host

What the top list and a query's detail read when no dimension is filtered. Existing buckets
are summed into them, histograms merged, so an upgraded store reads the same figures.

Revision ID: f2a8c6d4b1e9
Revises: e5f1b7c2d9a4
Create Date: 2026-11-24 16:00:00
"""

from collections.abc import Iterator, Mapping, Sequence
from itertools import groupby
from typing import Any

import sqlalchemy as sa
from alembic import op

import quanta.core.db
from quanta.analysis.histogram import LatencyHistogram

revision: str = "f2a8c6d4b1e9"
down_revision: str | None = "e5f1b7c2d9a4"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

RESOLUTIONS = ("hour", "day")
KEY = ("instance_id", "bucket_start", "query_id", "source")
INTEGER_SUMS = (
    "rows_sent", "rows_examined", "rows_affected", "bytes_sent", "tmp_tables",
    "tmp_disk_tables", "filesort", "filesort_on_disk", "full_scan", "full_join",
    "merge_passes", "innodb_io_r_ops", "innodb_io_r_bytes",
)  # fmt: skip
FLOAT_SUMS = ("innodb_io_r_wait", "innodb_rec_lock_wait", "innodb_queue_wait")
LATE_INTEGER_SUMS = ("errors", "warnings", "no_index_used", "no_good_index_used")
EXTREMES = {"query_time_min": min, "query_time_max": max, "lock_time_max": max}
ROWS_PER_INSERT = 1000


def _columns() -> list[sa.Column]:  # type: ignore[type-arg]
    return [
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("bucket_start", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("query_id", sa.String(length=16), nullable=False),
        sa.Column("source", sa.String(length=20), nullable=False),
        sa.Column("histogram", sa.LargeBinary(), nullable=True),
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


def _merged(rows: Iterator[Mapping[str, Any]]) -> dict[str, Any]:
    """The buckets of one query, period and source as one row of totals."""
    out: dict[str, Any] = {}
    histogram, with_histogram = LatencyHistogram(), False
    for row in rows:
        for name, value in row.items():
            known = out.get(name)
            if known is None or name in KEY:
                out[name] = value  # the first row's, or what NULL so far turns into
            elif value is not None and name != "histogram":
                out[name] = EXTREMES.get(name, _add)(known, value)
        if row["histogram"] is not None:
            histogram.merge_bytes(row["histogram"])
            with_histogram = True
    out["histogram"] = histogram.to_bytes() if with_histogram else None
    return out


def _add(a: Any, b: Any) -> Any:
    return a + b


def upgrade() -> None:
    bind = op.get_bind()
    for resolution in RESOLUTIONS:
        name = f"query_totals_{resolution}"
        columns = _columns()
        table = op.create_table(
            name,
            *columns,
            sa.ForeignKeyConstraint(
                ["instance_id"], ["instances.id"], name=op.f(f"fk_{name}_instance_id_instances")
            ),
            sa.ForeignKeyConstraint(
                ["query_id"], ["query_classes.query_id"],
                name=op.f(f"fk_{name}_query_id_query_classes"),
            ),
            sa.PrimaryKeyConstraint(*KEY, name=op.f(f"pk_{name}")),
        )  # fmt: skip
        op.create_index(
            op.f(f"ix_{name}_query_id_bucket_start"), name, ["query_id", "bucket_start"]
        )
        # Histograms cannot be merged in SQL: stream the buckets in key order, merge here.
        stored = bind.execute(
            sa.text(
                f"SELECT {', '.join(c.name for c in columns)} FROM query_buckets_{resolution} "
                f"ORDER BY {', '.join(KEY)}"
            )
            .columns(*(sa.column(c.name, c.type) for c in columns))  # typed: UTC datetimes
            .execution_options(stream_results=True)
        )
        batch: list[dict[str, Any]] = []
        for _, rows in groupby(stored.mappings(), key=lambda row: tuple(row[k] for k in KEY)):
            batch.append(_merged(rows))
            if len(batch) >= ROWS_PER_INSERT:
                bind.execute(table.insert(), batch)
                batch = []
        if batch:
            bind.execute(table.insert(), batch)


def downgrade() -> None:
    for resolution in RESOLUTIONS:
        op.drop_table(f"query_totals_{resolution}")
