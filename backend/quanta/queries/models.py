"""The query catalog and per-minute metric buckets."""

from datetime import datetime

from sqlalchemy import BigInteger, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from quanta.core.db import Base, UTCDateTime

# What identifies a bucket; upserts conflict on exactly these columns.
BUCKET_KEY = (
    "bucket_start",
    "instance_id",
    "query_id",
    "schema_name",
    "user_name",
    "client_host",
    "source",
)


class QueryClass(Base):
    """One fingerprint: the unit every report groups by."""

    __tablename__ = "query_classes"

    query_id: Mapped[str] = mapped_column(String(16), primary_key=True)
    fingerprint: Mapped[str] = mapped_column(Text)
    first_seen: Mapped[datetime] = mapped_column(UTCDateTime)
    last_seen: Mapped[datetime] = mapped_column(UTCDateTime)


class QueryBucket(Base):
    """Metrics of one query for one minute and one set of dimensions.

    Dimensions a source does not give are stored as '' so the unique key works on every
    database (NULLs never conflict); metrics a source does not give are NULL.
    """

    __tablename__ = "query_buckets"
    __table_args__ = (
        # The default name would pass PostgreSQL's 63-character limit.
        UniqueConstraint(*BUCKET_KEY, name="uq_query_buckets_dimensions"),
        Index("ix_query_buckets_query_id_bucket_start", "query_id", "bucket_start"),
    )

    # SQLite only autoincrements INTEGER primary keys.
    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    bucket_start: Mapped[datetime] = mapped_column(UTCDateTime)
    instance_id: Mapped[int] = mapped_column(ForeignKey("instances.id"))
    query_id: Mapped[str] = mapped_column(ForeignKey("query_classes.query_id"))
    schema_name: Mapped[str] = mapped_column(String(64))
    user_name: Mapped[str] = mapped_column(String(128))
    client_host: Mapped[str] = mapped_column(String(255))
    source: Mapped[str] = mapped_column(String(20))
    count: Mapped[int] = mapped_column(BigInteger)
    query_time_sum: Mapped[float] = mapped_column(Float)
    query_time_min: Mapped[float] = mapped_column(Float)
    query_time_max: Mapped[float] = mapped_column(Float)
    lock_time_sum: Mapped[float | None] = mapped_column(Float)
    rows_sent_sum: Mapped[int | None] = mapped_column(BigInteger)
    rows_examined_sum: Mapped[int | None] = mapped_column(BigInteger)
