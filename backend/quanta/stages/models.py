"""Production stage profiles per query class (quanta.analysis.stages): the sampled executions
and the time of their stages and waits, per minute, hour and day, and whether each
instance's performance_schema consumers keep them.

Two kinds of mergeable rows, each at three resolutions, declared once in ``STAGE_TABLES``:

* samples, per (instance, bucket start, query): executions sampled, executions the digest
  table counted, the sampled ones' response time, and how many had their waits kept;
* times, per (instance, bucket start, query, stage, wait event): summed time and count; the
  wait event is '' for the stage's own time and calls, else a wait event in that stage
  (stage ``lost time``: between stages).

Minute rows are appended as batches arrive (a poll's rows of one minute; a minute may have
several, every read sums them); hour and day rows are merged at ingest, as the metric
store's are. Like the metric tables they carry no foreign keys (purge and instance deletion
find them by their query_id and instance_id columns).
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Boolean, Float, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from quanta.analysis.resolution import Resolution
from quanta.core.db import Base, UTCDateTime

SAMPLE_KEY = ("instance_id", "bucket_start", "query_id")
TIME_KEY = ("instance_id", "bucket_start", "query_id", "stage", "wait_event")
STAGE_ONLY = ""
"""The wait_event of a stage's own row."""


class _SampleColumns:
    """The sampled executions of one query in one bucket of time."""

    executions_sampled: Mapped[int] = mapped_column(BigInteger)
    executions_total: Mapped[int] = mapped_column(BigInteger)
    response_sum: Mapped[float] = mapped_column(Float)
    waits_sampled: Mapped[int] = mapped_column(BigInteger)


class _TimeColumns:
    """The time of one stage (or of one wait event in it) over those executions."""

    time_sum: Mapped[float] = mapped_column(Float)
    count: Mapped[int] = mapped_column(BigInteger)


class _SampleKey:
    instance_id: Mapped[int] = mapped_column(primary_key=True)
    bucket_start: Mapped[datetime] = mapped_column(UTCDateTime, primary_key=True)
    query_id: Mapped[str] = mapped_column(String(16), primary_key=True)


class _TimeKey:
    instance_id: Mapped[int] = mapped_column(primary_key=True)
    bucket_start: Mapped[datetime] = mapped_column(UTCDateTime, primary_key=True)
    query_id: Mapped[str] = mapped_column(String(16), primary_key=True)
    stage: Mapped[str] = mapped_column(String(128), primary_key=True)
    wait_event: Mapped[str] = mapped_column(String(128), primary_key=True)


class StageSamplesMinute(_SampleColumns, Base):
    """Sampled executions per minute, appended (kept as long as minute buckets)."""

    __tablename__ = "stage_samples_minute"
    __table_args__ = (
        Index("ix_stage_samples_minute_instance_id_bucket_start", "instance_id", "bucket_start"),
        Index("ix_stage_samples_minute_query_id_bucket_start", "query_id", "bucket_start"),
    )

    instance_id: Mapped[int] = mapped_column()
    bucket_start: Mapped[datetime] = mapped_column(UTCDateTime)
    query_id: Mapped[str] = mapped_column(String(16))

    # The ORM needs an identity; the table has no key (rows are written by Core inserts).
    __mapper_args__ = {"primary_key": [instance_id, bucket_start, query_id]}  # noqa: RUF012


class StageSamplesHour(_SampleKey, _SampleColumns, Base):
    """Sampled executions per hour (kept as long as hour buckets)."""

    __tablename__ = "stage_samples_hour"
    __table_args__ = (
        Index("ix_stage_samples_hour_query_id_bucket_start", "query_id", "bucket_start"),
    )


class StageSamplesDay(_SampleKey, _SampleColumns, Base):
    """Sampled executions per day (kept as long as day buckets)."""

    __tablename__ = "stage_samples_day"
    __table_args__ = (
        Index("ix_stage_samples_day_query_id_bucket_start", "query_id", "bucket_start"),
    )


class StageTimesMinute(_TimeColumns, Base):
    """Stage and wait times per minute, appended (kept as long as minute buckets)."""

    __tablename__ = "stage_times_minute"
    __table_args__ = (
        Index("ix_stage_times_minute_instance_id_bucket_start", "instance_id", "bucket_start"),
        Index("ix_stage_times_minute_query_id_bucket_start", "query_id", "bucket_start"),
    )

    instance_id: Mapped[int] = mapped_column()
    bucket_start: Mapped[datetime] = mapped_column(UTCDateTime)
    query_id: Mapped[str] = mapped_column(String(16))
    stage: Mapped[str] = mapped_column(String(128))
    wait_event: Mapped[str] = mapped_column(String(128))

    __mapper_args__ = {  # noqa: RUF012
        "primary_key": [instance_id, bucket_start, query_id, stage, wait_event]
    }


class StageTimesHour(_TimeKey, _TimeColumns, Base):
    """Stage and wait times per hour (kept as long as hour buckets)."""

    __tablename__ = "stage_times_hour"
    __table_args__ = (
        Index("ix_stage_times_hour_query_id_bucket_start", "query_id", "bucket_start"),
    )


class StageTimesDay(_TimeKey, _TimeColumns, Base):
    """Stage and wait times per day (kept as long as day buckets)."""

    __tablename__ = "stage_times_day"
    __table_args__ = (
        Index("ix_stage_times_day_query_id_bucket_start", "query_id", "bucket_start"),
    )


@dataclass(frozen=True)
class StageTable:
    """One kind of stage row at every resolution: its key, and its model per resolution
    (the minute one appended, the others merged; the shape a roll-up registry takes)."""

    key: tuple[str, ...]
    models: dict[Resolution, Any]


SAMPLES = StageTable(
    SAMPLE_KEY,
    {
        Resolution.MINUTE: StageSamplesMinute,
        Resolution.HOUR: StageSamplesHour,
        Resolution.DAY: StageSamplesDay,
    },
)
TIMES = StageTable(
    TIME_KEY,
    {
        Resolution.MINUTE: StageTimesMinute,
        Resolution.HOUR: StageTimesHour,
        Resolution.DAY: StageTimesDay,
    },
)
STAGE_TABLES = (SAMPLES, TIMES)


class StageCollection(Base):
    """What an instance's agent last said of its consumers: whether stages and waits are
    kept (the reason a query has no production profile)."""

    __tablename__ = "stage_collection"

    instance_id: Mapped[int] = mapped_column(primary_key=True)
    stages: Mapped[bool] = mapped_column(Boolean)
    waits: Mapped[bool] = mapped_column(Boolean)
    reported_at: Mapped[datetime] = mapped_column(UTCDateTime)
