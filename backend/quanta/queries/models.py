"""The query catalog, the metric buckets and per-instance totals at three resolutions, and
examples."""

import re
from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Index,
    LargeBinary,
    String,
    Text,
)
from sqlalchemy.engine.default import DefaultExecutionContext
from sqlalchemy.orm import Mapped, mapped_column

from quanta.analysis.metrics import METRICS
from quanta.analysis.own import is_own
from quanta.analysis.resolution import Resolution
from quanta.core.db import Base, UTCDateTime

# What identifies a bucket (its primary key, in index order): instance and time first, the
# order of the usual read (one server, a time range).
BUCKET_KEY = (
    "instance_id",
    "bucket_start",
    "query_id",
    "schema_name",
    "user_name",
    "client_host",
    "source",
)
# The metric tables (buckets, totals, examples) carry no foreign keys: PostgreSQL checks one
# with a trigger and an index lookup per inserted row, which doubled its share of the ingest
# (bench/ingest_pipeline.py). Their only writer, the batch service, inserts a batch's
# catalog rows first in the same transaction; deleting an instance or purging a query finds
# them by their instance_id and query_id columns.
# Bucket tables are partitioned by time on PostgreSQL (see quanta.queries.partitions).
PARTITION_BY = "RANGE (bucket_start)"
# Names of those partitions: <table>_default and <table>_pYYYYMMDD (their first day).
PARTITION_NAME_RE = re.compile(r"query_buckets_(?:minute|hour|day)_(?:default|p\d{8})")


def _own_statement(context: DefaultExecutionContext) -> bool:
    parameters: dict[str, Any] = context.get_current_parameters()  # type: ignore[no-untyped-call]
    return is_own(parameters["fingerprint"])


class QueryClass(Base):
    """One fingerprint: the unit every report groups by."""

    __tablename__ = "query_classes"

    query_id: Mapped[str] = mapped_column(String(16), primary_key=True)
    fingerprint: Mapped[str] = mapped_column(Text)
    first_seen: Mapped[datetime] = mapped_column(UTCDateTime)
    last_seen: Mapped[datetime] = mapped_column(UTCDateTime)
    statement_type: Mapped[str | None] = mapped_column(String(20))
    tables: Mapped[list[str] | None] = mapped_column(JSON)
    # Who ran it (slow-log batches, which name the user): an instance's monitoring account
    # (the user of its DSN), anyone else. Only the former: one of Quanta's own statements.
    # Server defaults only, so an INSERT naming just the older columns still works.
    own_seen: Mapped[bool] = mapped_column(Boolean, server_default="0")
    app_seen: Mapped[bool] = mapped_column(Boolean, server_default="0")
    # The fingerprint is one of Quanta's own statement forms (analysis.own), decided once when
    # the class is stored: reads leave these classes out by a flag instead of matching two
    # dozen LIKE patterns against every class in every branch of every read (2.3x the
    # overview's time).
    own_statement: Mapped[bool] = mapped_column(Boolean, default=_own_statement, server_default="0")


class QueryInstance(Base):
    """Where a query class runs: first and last seen per instance."""

    __tablename__ = "query_instances"

    query_id: Mapped[str] = mapped_column(ForeignKey("query_classes.query_id"), primary_key=True)
    instance_id: Mapped[int] = mapped_column(ForeignKey("instances.id"), primary_key=True)
    first_seen: Mapped[datetime] = mapped_column(UTCDateTime)
    last_seen: Mapped[datetime] = mapped_column(UTCDateTime)


class _MetricColumns:
    """Summed metrics of many statements. Metrics a source does not give are NULL, never 0.

    Besides these, one ``<name>_sum`` column per metric of quanta.analysis.metrics.METRICS
    (added below).
    """

    count: Mapped[int] = mapped_column(BigInteger)
    query_time_sum: Mapped[float] = mapped_column(Float)
    query_time_min: Mapped[float | None] = mapped_column(Float)
    query_time_max: Mapped[float | None] = mapped_column(Float)
    lock_time_max: Mapped[float | None] = mapped_column(Float)


# One nullable <name>_sum column per metric of the registry, in its order: a double for
# seconds, a 64-bit integer for the counters.
for _metric in METRICS:
    setattr(
        _MetricColumns,
        _metric.column,
        mapped_column(BigInteger if _metric.counter else Float, nullable=True),
    )
del _metric


class _BucketColumns(_MetricColumns):
    """Metrics of one query for one bucket of time and one set of dimensions.

    Dimensions a source does not give are stored as '' so the key works on every database
    (NULLs never conflict).
    """

    instance_id: Mapped[int] = mapped_column(primary_key=True)
    bucket_start: Mapped[datetime] = mapped_column(UTCDateTime, primary_key=True)
    query_id: Mapped[str] = mapped_column(String(16), primary_key=True)
    schema_name: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_name: Mapped[str] = mapped_column(String(128), primary_key=True)
    client_host: Mapped[str] = mapped_column(String(255), primary_key=True)
    source: Mapped[str] = mapped_column(String(20), primary_key=True)
    # quanta.analysis.histogram.LatencyHistogram.to_bytes(); NULL: no distribution given.
    histogram: Mapped[bytes | None] = mapped_column(LargeBinary)


class QueryBucketMinute(_BucketColumns, Base):
    """Minute buckets (kept QUANTA_RETENTION_MINUTE_DAYS)."""

    __tablename__ = "query_buckets_minute"
    __table_args__ = (
        Index("ix_query_buckets_minute_query_id_bucket_start", "query_id", "bucket_start"),
        {"postgresql_partition_by": PARTITION_BY},
    )


class QueryBucketHour(_BucketColumns, Base):
    """Hour buckets (kept QUANTA_RETENTION_HOUR_DAYS)."""

    __tablename__ = "query_buckets_hour"
    __table_args__ = (
        Index("ix_query_buckets_hour_query_id_bucket_start", "query_id", "bucket_start"),
        {"postgresql_partition_by": PARTITION_BY},
    )


class QueryBucketDay(_BucketColumns, Base):
    """Day buckets (kept QUANTA_RETENTION_DAY_DAYS)."""

    __tablename__ = "query_buckets_day"
    __table_args__ = (
        Index("ix_query_buckets_day_query_id_bucket_start", "query_id", "bucket_start"),
        {"postgresql_partition_by": PARTITION_BY},
    )


BucketModel = type[QueryBucketMinute] | type[QueryBucketHour] | type[QueryBucketDay]

BUCKET_MODELS: dict[Resolution, BucketModel] = {
    Resolution.MINUTE: QueryBucketMinute,
    Resolution.HOUR: QueryBucketHour,
    Resolution.DAY: QueryBucketDay,
}


# What identifies a row of totals: one server, one period, one source.
TOTALS_KEY = ("instance_id", "bucket_start", "source")


class _TotalsColumns(_MetricColumns):
    """Every query of one instance and source summed over one period.

    The denominators of "% of total" in a query's detail: a month of them is a few hundred
    rows per server, where summing the buckets of every query reads hundreds of thousands.
    """

    instance_id: Mapped[int] = mapped_column(primary_key=True)
    bucket_start: Mapped[datetime] = mapped_column(UTCDateTime, primary_key=True)
    source: Mapped[str] = mapped_column(String(20), primary_key=True)


class InstanceTotalsMinute(_TotalsColumns, Base):
    """Per-minute totals (kept as long as minute buckets)."""

    __tablename__ = "instance_totals_minute"


class InstanceTotalsHour(_TotalsColumns, Base):
    """Per-hour totals (kept as long as hour buckets)."""

    __tablename__ = "instance_totals_hour"


class InstanceTotalsDay(_TotalsColumns, Base):
    """Per-day totals (kept as long as day buckets)."""

    __tablename__ = "instance_totals_day"


TotalsModel = type[InstanceTotalsMinute] | type[InstanceTotalsHour] | type[InstanceTotalsDay]
TOTALS_MODELS: dict[Resolution, TotalsModel] = {
    Resolution.MINUTE: InstanceTotalsMinute,
    Resolution.HOUR: InstanceTotalsHour,
    Resolution.DAY: InstanceTotalsDay,
}


# What identifies a query's totals: one server, one period, one query, one source.
QUERY_TOTALS_KEY = ("instance_id", "bucket_start", "query_id", "source")


class _QueryTotalsColumns(_MetricColumns):
    """One query's buckets of one instance and source summed over one period, whatever their
    schema, user and host.

    What the top list and a query's detail read when no dimension is filtered: the buckets
    have a row per schema, user and client host, often dozens per query and period.
    """

    instance_id: Mapped[int] = mapped_column(primary_key=True)
    bucket_start: Mapped[datetime] = mapped_column(UTCDateTime, primary_key=True)
    query_id: Mapped[str] = mapped_column(String(16), primary_key=True)
    source: Mapped[str] = mapped_column(String(20), primary_key=True)
    histogram: Mapped[bytes | None] = mapped_column(LargeBinary)


class QueryTotalsHour(_QueryTotalsColumns, Base):
    """Per-hour query totals (kept as long as hour buckets)."""

    __tablename__ = "query_totals_hour"
    __table_args__ = (
        Index("ix_query_totals_hour_query_id_bucket_start", "query_id", "bucket_start"),
    )


class QueryTotalsDay(_QueryTotalsColumns, Base):
    """Per-day query totals (kept as long as day buckets)."""

    __tablename__ = "query_totals_day"
    __table_args__ = (
        Index("ix_query_totals_day_query_id_bucket_start", "query_id", "bucket_start"),
    )


QueryTotalsModel = type[QueryTotalsHour] | type[QueryTotalsDay]
QUERY_TOTALS_MODELS: dict[Resolution, QueryTotalsModel] = {
    Resolution.HOUR: QueryTotalsHour,
    Resolution.DAY: QueryTotalsDay,
}
# What a read without dimensions uses: minutes are read from the buckets (a read spans at
# most a couple of hours of them, see analysis.resolution), hours and days from the totals.
# Any table of metric rows (buckets, instance totals, query totals).
MetricModel = BucketModel | TotalsModel | QueryTotalsModel

UNDIVIDED_MODELS: dict[Resolution, BucketModel | QueryTotalsModel] = {
    Resolution.MINUTE: QueryBucketMinute,
    **QUERY_TOTALS_MODELS,
}


class QueryExample(Base):
    """The slowest statement of a query in a bucket, and one drawn at random from it.

    Literals follow the instance's example policy (``literals``: full or masked);
    ``*_truncated`` says the text was cut at QUANTA_EXAMPLE_MAX_CHARS.
    """

    __tablename__ = "query_examples"
    __table_args__ = (
        Index("ix_query_examples_resolution_bucket_start", "resolution", "bucket_start"),
    )

    query_id: Mapped[str] = mapped_column(String(16), primary_key=True)
    resolution: Mapped[str] = mapped_column(String(10), primary_key=True)
    bucket_start: Mapped[datetime] = mapped_column(UTCDateTime, primary_key=True)
    instance_id: Mapped[int] = mapped_column(primary_key=True)
    seen: Mapped[int] = mapped_column(BigInteger)
    slowest_text: Mapped[str] = mapped_column(Text)
    slowest_query_time: Mapped[float] = mapped_column(Float)
    slowest_ts: Mapped[datetime] = mapped_column(UTCDateTime)
    slowest_schema: Mapped[str] = mapped_column(String(64))
    slowest_literals: Mapped[str] = mapped_column(String(10))
    slowest_truncated: Mapped[bool] = mapped_column(Boolean)
    sampled_text: Mapped[str] = mapped_column(Text)
    sampled_query_time: Mapped[float] = mapped_column(Float)
    sampled_ts: Mapped[datetime] = mapped_column(UTCDateTime)
    sampled_schema: Mapped[str] = mapped_column(String(64))
    sampled_literals: Mapped[str] = mapped_column(String(10))
    sampled_truncated: Mapped[bool] = mapped_column(Boolean)
