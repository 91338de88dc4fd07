"""What the agents report about themselves, per instance and source."""

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from quanta.core.db import Base, UTCDateTime

MAX_AGENT_ERROR_CHARS = 500


class AgentSource(Base):
    """One source (slowlog, perfschema, stats) of one instance as its agent last reported it.

    Data batches set ``last_batch_*`` and ``data_until`` (the newest time their rows cover:
    the batch's lag is ``last_batch_at - data_until``); the agent's status reports, sent every
    ``report_interval`` seconds even when the source has nothing to ship, set the rest.
    Agents older than those reports leave the status columns NULL.
    """

    __tablename__ = "agent_sources"
    __table_args__ = (UniqueConstraint("instance_id", "source"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    instance_id: Mapped[int] = mapped_column(ForeignKey("instances.id"))
    source: Mapped[str] = mapped_column(String(20))
    # Anything heard for this source: a data batch or a status report.
    last_seen_at: Mapped[datetime] = mapped_column(UTCDateTime)
    last_batch_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    last_batch_rows: Mapped[int | None] = mapped_column(Integer, default=None)
    data_until: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    agent_version: Mapped[str | None] = mapped_column(String(50), default=None)
    agent_host: Mapped[str | None] = mapped_column(String(255), default=None)
    report_interval: Mapped[float | None] = mapped_column(Float, default=None)
    # When the agent last read the source without an error (tailer pass, collector poll).
    read_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    # The agent's last attempt to read the source failed (``last_error`` says why).
    read_failing: Mapped[bool | None] = mapped_column(Boolean, default=None)
    spooled: Mapped[int | None] = mapped_column(Integer, default=None)
    spooled_bytes: Mapped[int | None] = mapped_column(BigInteger, default=None)
    dropped: Mapped[int | None] = mapped_column(Integer, default=None)
    rejected: Mapped[int | None] = mapped_column(Integer, default=None)
    last_error: Mapped[str | None] = mapped_column(Text, default=None)
    last_error_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
