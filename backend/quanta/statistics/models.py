"""Table, index and account statistics an instance's agent reports: summed since first seen,
per bucket of time, and how long they have been observed without a break."""

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Float, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from quanta.core.db import Base, UTCDateTime
from quanta.statistics.counters import COUNTS, GAUGE_COLUMNS, SECONDS

# What identifies a row: one table, one index of a table ('' = reads that used no index), or
# one account ('' schema and index).
STATISTICS_KEY = ("instance_id", "kind", "schema_name", "object_name", "index_name")
BUCKET_KEY = ("instance_id", "resolution", "bucket_start", *STATISTICS_KEY[1:])


class ObjectStatistics(Base):
    """The summed counters of one table, index or account, from every delta received.

    ``counters`` holds only what the source reported (userstat or performance_schema names,
    e.g. rows_read, count_fetch); ``resets`` counts the intervals in which the server's
    counters restarted, so the sums are lower bounds from then on.
    """

    __tablename__ = "object_statistics"

    instance_id: Mapped[int] = mapped_column(ForeignKey("instances.id"), primary_key=True)
    kind: Mapped[str] = mapped_column(String(10), primary_key=True)  # table | index | user
    schema_name: Mapped[str] = mapped_column(String(64), primary_key=True)
    object_name: Mapped[str] = mapped_column(String(128), primary_key=True)
    index_name: Mapped[str] = mapped_column(String(64), primary_key=True)
    since: Mapped[datetime] = mapped_column(UTCDateTime)
    until: Mapped[datetime] = mapped_column(UTCDateTime)
    resets: Mapped[int] = mapped_column(Integer)
    counters: Mapped[dict[str, Any]] = mapped_column(JSON)
    # The end of the last interval in which its counters restarted (server restart, FLUSH,
    # a table dropped and created again): reads before it were lost with the counters.
    reset_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    # The end of the last interval in which it was read (an index: is it used?).
    last_read_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    # A table: when its schema snapshot was last asked for because it has statistics.
    snapshot_requested_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)


class _BucketCounters:
    """One nullable column per counter of quanta.statistics.counters (added below): a 64-bit
    integer for counts and gauges, a double for seconds. NULL: the source does not give it."""


for _name in COUNTS:
    setattr(_BucketCounters, _name, mapped_column(BigInteger, nullable=True))
for _name in SECONDS:
    setattr(_BucketCounters, _name, mapped_column(Float, nullable=True))
for _name in GAUGE_COLUMNS.values():
    setattr(_BucketCounters, _name, mapped_column(BigInteger, nullable=True))
del _name


class StatisticsBucket(_BucketCounters, Base):
    """The deltas of one table, index or account that fell in one bucket of time.

    Every resolution (minute, hour, day) is written as the deltas arrive, as the metric
    store's buckets are, and kept as long as the metric store keeps that resolution; a delta
    lands in the bucket of its interval's midpoint.
    """

    __tablename__ = "statistics_buckets"

    instance_id: Mapped[int] = mapped_column(ForeignKey("instances.id"), primary_key=True)
    resolution: Mapped[str] = mapped_column(String(6), primary_key=True)
    bucket_start: Mapped[datetime] = mapped_column(UTCDateTime, primary_key=True)
    kind: Mapped[str] = mapped_column(String(10), primary_key=True)
    schema_name: Mapped[str] = mapped_column(String(64), primary_key=True)
    object_name: Mapped[str] = mapped_column(String(128), primary_key=True)
    index_name: Mapped[str] = mapped_column(String(64), primary_key=True)


class StatisticsCoverage(Base):
    """How long an instance's statistics have been observed without a break.

    ``since`` starts the current window: the agent's first interval, or the end of the last
    break (a server restart or FLUSH reset the counters; an interval was never received;
    the source changed). Reads before it may be lost, so an index is called unused only when
    ``until - since`` covers QUANTA_INDEX_UNUSED_MIN_MINUTES.
    """

    __tablename__ = "statistics_coverage"

    instance_id: Mapped[int] = mapped_column(ForeignKey("instances.id"), primary_key=True)
    origin: Mapped[str] = mapped_column(String(10))  # userstat | perfschema
    first_seen: Mapped[datetime] = mapped_column(UTCDateTime)
    since: Mapped[datetime] = mapped_column(UTCDateTime)
    until: Mapped[datetime] = mapped_column(UTCDateTime)
    # The last break and why (quanta.statistics.coverage.BREAKS); NULL: none yet.
    broken_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    break_reason: Mapped[str | None] = mapped_column(String(20), default=None)


class AnnouncedFinding(Base):
    """An index review finding already posted to chat (event ``index_review``): a finding is
    announced once, and again only after it went away and came back."""

    __tablename__ = "index_review_announced"

    instance_id: Mapped[int] = mapped_column(ForeignKey("instances.id"), primary_key=True)
    table_name: Mapped[str] = mapped_column(String(129), primary_key=True)
    index_name: Mapped[str] = mapped_column(String(64), primary_key=True)
    kind: Mapped[str] = mapped_column(String(20), primary_key=True)
    announced_at: Mapped[datetime] = mapped_column(UTCDateTime)
