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
    Integer,
    LargeBinary,
    String,
    Text,
    and_,
    or_,
)
from sqlalchemy.engine.default import DefaultExecutionContext
from sqlalchemy.orm import Mapped, mapped_column

from quanta.analysis.metrics import METRICS
from quanta.analysis.own import is_own
from quanta.analysis.resolution import Resolution
from quanta.analysis.tags import MAX_KEY_CHARS, MAX_TAGS_CHARS, MAX_VALUE_CHARS
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
    "tags",
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


# The classes every read leaves out (repository.own_query_ids): Quanta's own statement forms,
# and classes only a monitoring account ran. A subquery of it sits in each branch of every
# read's union; indexed by it, each probes a few rows instead of scanning the catalog
# (0.7-1 ms a branch at 5,000 classes, growing with the catalog).
OWN_CLASSES = or_(
    QueryClass.own_statement.is_(True),
    and_(QueryClass.own_seen.is_(True), QueryClass.app_seen.is_(False)),
)
Index(
    "ix_query_classes_own",
    QueryClass.query_id,
    postgresql_where=OWN_CLASSES,
    sqlite_where=OWN_CLASSES,
)


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
    # The statements' tags, canonical (quanta.analysis.tags): configured keys, capped values.
    tags: Mapped[str] = mapped_column(String(MAX_TAGS_CHARS), primary_key=True, default="")
    # quanta.analysis.histogram.LatencyHistogram.to_bytes(); NULL: no distribution given.
    histogram: Mapped[bytes | None] = mapped_column(LargeBinary)


class RollupPending(Base):
    """Minute rows one write added for one hour of one instance, not rolled up yet.

    Ingest appends minute rows only; each write records here, per hour it touched, a row
    whose id its minute rows carry (``rollup_id``). Beat's roll-up (quanta.queries.rollup)
    adds the minute rows of due entries into the hour, day and totals tables and deletes the
    entries in the same transaction, so a minute row counts in the rolled-up tables exactly
    when its entry is gone: reads add the minute rows whose entry is still here to the
    rolled-up rows (exact at every moment), and a minute that arrives after its hour was
    rolled up (an import a week late) gets an entry of its own.
    """

    __tablename__ = "rollup_pending"
    __table_args__ = (
        Index("ix_rollup_pending_due_at", "due_at"),
        Index("ix_rollup_pending_hour_start", "hour_start"),
        # Ids are never used again (SQLite would reuse a deleted largest one): rolled-up
        # minute rows keep theirs, and must not look pending to a later entry.
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    )
    instance_id: Mapped[int]
    hour_start: Mapped[datetime] = mapped_column(UTCDateTime)
    # When the roll-up may take it: the end of its hour, or when it was written if later.
    due_at: Mapped[datetime] = mapped_column(UTCDateTime)


class QueryBucketMinute(_MetricColumns, Base):
    """Minute buckets (kept QUANTA_RETENTION_MINUTE_DAYS), appended by ingest.

    Append-only: no primary key, so that ingest COPYs a batch's minutes straight in. Two
    parts of one minute (an agent ships a busy minute in parts, or late entries with the next
    one) are two rows; every read sums rows by its grouping anyway, and the roll-up merges
    them into the hour. ``rollup_id`` is the write's RollupPending entry (0: rolled up).
    """

    __tablename__ = "query_buckets_minute"
    __table_args__ = (
        Index("ix_query_buckets_minute_instance_id_bucket_start", "instance_id", "bucket_start"),
        Index("ix_query_buckets_minute_query_id_bucket_start", "query_id", "bucket_start"),
        Index("ix_query_buckets_minute_rollup_id", "rollup_id"),
        {"postgresql_partition_by": PARTITION_BY},
    )

    instance_id: Mapped[int] = mapped_column()
    bucket_start: Mapped[datetime] = mapped_column(UTCDateTime)
    query_id: Mapped[str] = mapped_column(String(16))
    schema_name: Mapped[str] = mapped_column(String(64))
    user_name: Mapped[str] = mapped_column(String(128))
    client_host: Mapped[str] = mapped_column(String(255))
    source: Mapped[str] = mapped_column(String(20))
    tags: Mapped[str] = mapped_column(String(MAX_TAGS_CHARS), default="")
    histogram: Mapped[bytes | None] = mapped_column(LargeBinary)
    rollup_id: Mapped[int] = mapped_column(BigInteger, server_default="0")

    # The ORM needs an identity; the table has no key. Two parts of a minute come from two
    # writes, so their rollup_id tells them apart.
    __mapper_args__ = {  # noqa: RUF012 (SQLAlchemy reads it once, at mapping)
        "primary_key": [
            instance_id,
            bucket_start,
            query_id,
            schema_name,
            user_name,
            client_host,
            source,
            tags,
            rollup_id,
        ]
    }


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


class _ExampleColumns:
    """The slowest statement of a query in a bucket, and one drawn at random from it.

    Literals follow the instance's example policy (``literals``: full or masked);
    ``*_truncated`` says the text was cut at QUANTA_EXAMPLE_MAX_CHARS.
    """

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


class TagValue(Base):
    """A tag value an instance's buckets hold, per key: what QUANTA_TAG_VALUES_PER_KEY caps
    (quanta.queries.tags), and what the filter lists offer."""

    __tablename__ = "instance_tag_values"

    instance_id: Mapped[int] = mapped_column(primary_key=True)
    tag_key: Mapped[str] = mapped_column(String(MAX_KEY_CHARS), primary_key=True)
    tag_value: Mapped[str] = mapped_column(String(MAX_VALUE_CHARS), primary_key=True)
    first_seen: Mapped[datetime] = mapped_column(UTCDateTime)


class ClassAdmission(Base):
    """The new query classes of one instance in one wall-clock hour: those added under the
    caps, and those folded into "other queries" past them (quanta.queries.classes).

    ``folded`` counts new statement shapes once per batch that brought them (a shape sent
    in two batches counts twice); ``folded_events`` their executions.
    """

    __tablename__ = "class_admissions"

    instance_id: Mapped[int] = mapped_column(primary_key=True)
    hour_start: Mapped[datetime] = mapped_column(UTCDateTime, primary_key=True)
    admitted: Mapped[int] = mapped_column(BigInteger)
    folded: Mapped[int] = mapped_column(BigInteger)
    folded_events: Mapped[int] = mapped_column(BigInteger)


class QueryExample(_ExampleColumns, Base):
    """Examples of a query per hour or day and instance, rolled up from the minutes'."""

    __tablename__ = "query_examples"
    __table_args__ = (
        Index("ix_query_examples_resolution_bucket_start", "resolution", "bucket_start"),
    )

    query_id: Mapped[str] = mapped_column(String(16), primary_key=True)
    resolution: Mapped[str] = mapped_column(String(10), primary_key=True)
    bucket_start: Mapped[datetime] = mapped_column(UTCDateTime, primary_key=True)
    instance_id: Mapped[int] = mapped_column(primary_key=True)


class QueryExampleMinute(_ExampleColumns, Base):
    """Examples of a query per minute and instance, appended by ingest as the minute buckets
    are (no key; ``rollup_id`` as theirs)."""

    __tablename__ = "query_examples_minute"
    __table_args__ = (
        Index("ix_query_examples_minute_query_id_bucket_start", "query_id", "bucket_start"),
        Index("ix_query_examples_minute_bucket_start", "bucket_start"),
        Index("ix_query_examples_minute_rollup_id", "rollup_id"),
    )

    query_id: Mapped[str] = mapped_column(String(16))
    bucket_start: Mapped[datetime] = mapped_column(UTCDateTime)
    instance_id: Mapped[int] = mapped_column()
    rollup_id: Mapped[int] = mapped_column(BigInteger, server_default="0")

    __mapper_args__ = {  # noqa: RUF012 (SQLAlchemy reads it once, at mapping)
        "primary_key": [query_id, bucket_start, instance_id, rollup_id]
    }
