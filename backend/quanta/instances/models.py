"""Monitored database server instances."""

import enum
from datetime import datetime

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from quanta.core.db import Base, UTCDateTime, utcnow


class ExamplePolicy(enum.StrEnum):
    """What an instance's examples keep of their statements' literals."""

    FULL = "full"
    MASKED = "masked"  # literals replaced as in the fingerprint
    OFF = "off"  # no examples stored


class Instance(Base):
    """A monitored MySQL/MariaDB server, named by its agent.

    ``primary_source`` is the source (slowlog or perfschema) whose buckets count in totals, so
    a query seen by both is not counted twice; NULL until the first batch, which sets it.
    """

    __tablename__ = "instances"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    primary_source: Mapped[str | None] = mapped_column(String(20), default=None)
    example_policy: Mapped[str] = mapped_column(
        String(10), default=ExamplePolicy.FULL.value, server_default=ExamplePolicy.FULL.value
    )
