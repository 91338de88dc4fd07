"""Table, index and account statistics an instance's agent reports, summed since first seen."""

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from quanta.core.db import Base, UTCDateTime

# What identifies a row: one table, one index of a table ('' = reads that used no index), or
# one account ('' schema and index).
STATISTICS_KEY = ("instance_id", "kind", "schema_name", "object_name", "index_name")


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
