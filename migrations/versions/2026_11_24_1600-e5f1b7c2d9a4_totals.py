"""totals: per-query totals (hour, day) and per-instance totals (minute, hour, day)

`query_totals_*`: each query's buckets summed over schema, user and host, what the top list
and a query's detail read when no dimension is filtered. `instance_totals_*`: every query of
an instance summed per period, the denominators of a query's "% of total". Existing buckets
are summed into both (histograms merged), so an upgraded store reads the same figures.

Revision ID: e5f1b7c2d9a4
Revises: c4d8e2f1a6b3
Create Date: 2026-11-24 16:00:00
"""

import operator
from collections.abc import Iterator, Mapping, Sequence
from itertools import groupby
from typing import Any

import sqlalchemy as sa
from alembic import op

import quanta.core.db
from quanta.analysis.histogram import LatencyHistogram

revision: str = "e5f1b7c2d9a4"
down_revision: str | None = "c4d8e2f1a6b3"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

QUERY_KEY = ("instance_id", "bucket_start", "query_id", "source")
INSTANCE_KEY = ("instance_id", "bucket_start", "source")
QUERY_RESOLUTIONS = ("hour", "day")
INSTANCE_RESOLUTIONS = ("minute", "hour", "day")
INTEGER_SUMS = (
    "rows_sent", "rows_examined", "rows_affected", "bytes_sent", "tmp_tables",
    "tmp_disk_tables", "filesort", "filesort_on_disk", "full_scan", "full_join",
    "merge_passes", "innodb_io_r_ops", "innodb_io_r_bytes",
)  # fmt: skip
FLOAT_SUMS = ("innodb_io_r_wait", "innodb_rec_lock_wait", "innodb_queue_wait")
LATE_INTEGER_SUMS = ("errors", "warnings", "no_index_used", "no_good_index_used")
EXTREMES = {"query_time_min": min, "query_time_max": max, "lock_time_max": max}
ROWS_PER_INSERT = 1000


def _key_columns(key: Sequence[str]) -> list[sa.Column]:  # type: ignore[type-arg]
    types = {
        "instance_id": sa.Integer(),
        "bucket_start": quanta.core.db.UTCDateTime(),
        "query_id": sa.String(length=16),
        "source": sa.String(length=20),
    }
    return [sa.Column(name, types[name], nullable=False) for name in key]


def _metric_columns() -> list[sa.Column]:  # type: ignore[type-arg]
    return [
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


def _create(name: str, key: Sequence[str], columns: list[sa.Column]) -> sa.Table:  # type: ignore[type-arg]
    foreign_keys = [
        sa.ForeignKeyConstraint(
            ["instance_id"], ["instances.id"], name=op.f(f"fk_{name}_instance_id_instances")
        )
    ]
    if "query_id" in key:
        foreign_keys.append(
            sa.ForeignKeyConstraint(
                ["query_id"],
                ["query_classes.query_id"],
                name=op.f(f"fk_{name}_query_id_query_classes"),
            )
        )
    return op.create_table(
        name, *columns, *foreign_keys, sa.PrimaryKeyConstraint(*key, name=op.f(f"pk_{name}"))
    )


def _merged(rows: Iterator[Mapping[str, Any]]) -> dict[str, Any]:
    """The buckets of one query, period and source as one row of query totals."""
    out: dict[str, Any] = {}
    histogram, with_histogram = LatencyHistogram(), False
    for row in rows:
        for name, value in row.items():
            known = out.get(name)
            if known is None or name in QUERY_KEY:
                out[name] = value  # the first row's, or what NULL so far turns into
            elif value is not None and name != "histogram":
                out[name] = EXTREMES.get(name, operator.add)(known, value)
        if row["histogram"] is not None:
            histogram.merge_bytes(row["histogram"])
            with_histogram = True
    out["histogram"] = histogram.to_bytes() if with_histogram else None
    return out


def _backfill_query_totals(table: sa.Table, resolution: str) -> None:
    """Histograms cannot be merged in SQL: stream the buckets in key order, merge here."""
    bind = op.get_bind()
    columns = [*_key_columns(QUERY_KEY), sa.Column("histogram", sa.LargeBinary())]
    columns += _metric_columns()
    stored = bind.execute(
        sa.text(
            f"SELECT {', '.join(c.name for c in columns)} FROM query_buckets_{resolution} "
            f"ORDER BY {', '.join(QUERY_KEY)}"
        )
        .columns(*(sa.column(c.name, c.type) for c in columns))  # typed: UTC datetimes
        .execution_options(stream_results=True)
    )
    batch: list[dict[str, Any]] = []
    for _, rows in groupby(stored.mappings(), key=lambda row: tuple(row[k] for k in QUERY_KEY)):
        batch.append(_merged(rows))
        if len(batch) >= ROWS_PER_INSERT:
            bind.execute(table.insert(), batch)
            batch = []
    if batch:
        bind.execute(table.insert(), batch)


def _backfill_instance_totals(name: str, resolution: str) -> None:
    metrics = [c.name for c in _metric_columns()]
    summed = ", ".join(f"{EXTREMES[n].__name__ if n in EXTREMES else 'sum'}({n})" for n in metrics)
    keys = ", ".join(INSTANCE_KEY)
    op.execute(
        f"INSERT INTO {name} ({keys}, {', '.join(metrics)}) "
        f"SELECT {keys}, {summed} FROM query_buckets_{resolution} GROUP BY {keys}"
    )


def upgrade() -> None:
    for resolution in QUERY_RESOLUTIONS:
        name = f"query_totals_{resolution}"
        columns = [
            *_key_columns(QUERY_KEY),
            sa.Column("histogram", sa.LargeBinary(), nullable=True),
            *_metric_columns(),
        ]
        table = _create(name, QUERY_KEY, columns)
        op.create_index(
            op.f(f"ix_{name}_query_id_bucket_start"), name, ["query_id", "bucket_start"]
        )
        _backfill_query_totals(table, resolution)
    for resolution in INSTANCE_RESOLUTIONS:
        name = f"instance_totals_{resolution}"
        _create(name, INSTANCE_KEY, [*_key_columns(INSTANCE_KEY), *_metric_columns()])
        _backfill_instance_totals(name, resolution)


def downgrade() -> None:
    for resolution in QUERY_RESOLUTIONS:
        op.drop_table(f"query_totals_{resolution}")
    for resolution in INSTANCE_RESOLUTIONS:
        op.drop_table(f"instance_totals_{resolution}")
