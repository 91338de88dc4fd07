"""Monitored database server instances."""

import enum
from datetime import datetime

from sqlalchemy import JSON, Boolean, String, Text
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
    a query seen by both is not counted twice; NULL until the first batch, which sets it. The
    slow log takes over once it reports (it sees prepared statements, per-call latency, users
    and hosts) unless ``primary_source_pinned``: an admin chose the source.
    """

    __tablename__ = "instances"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    primary_source: Mapped[str | None] = mapped_column(String(20), default=None)
    primary_source_pinned: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")
    example_policy: Mapped[str] = mapped_column(
        String(10), default=ExamplePolicy.FULL.value, server_default=ExamplePolicy.FULL.value
    )
    # How workers reach the server (EXPLAIN, profiles, schema): a read-only account's DSN,
    # Fernet-encrypted (quanta.core.crypto); NULL until an admin registers one.
    dsn_encrypted: Mapped[str | None] = mapped_column(Text, default=None)
    # A scratch server where suggested indexes may be created to compare plans; optional.
    sandbox_dsn_encrypted: Mapped[str | None] = mapped_column(Text, default=None)
    flavor: Mapped[str | None] = mapped_column(String(20), default=None)  # detected
    version: Mapped[str | None] = mapped_column(String(100), default=None)  # detected
    # Where examples may be executed (ANALYZE, profiles): a read-only replica or sandbox,
    # verified read-only at every connect (quanta.monitored.target); Fernet-encrypted like
    # dsn_encrypted. NULL: nothing is executed anywhere, EXPLAIN only.
    target_dsn_encrypted: Mapped[str | None] = mapped_column(Text, default=None)
    # Run diagnostics even though the account has privileges beyond SELECT, PROCESS, SHOW
    # VIEW and REPLICATION CLIENT: an admin's explicit, audited choice.
    allow_broad_privileges: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")
    # Labels (environment, cluster, ...): from the agent's config or set by an admin; they
    # filter, group and route chat like tags.
    labels: Mapped[dict[str, str]] = mapped_column(JSON, default=dict, server_default="{}")
