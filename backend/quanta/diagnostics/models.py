"""Stored EXPLAIN and profile runs of a query on an instance."""

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from quanta.core.db import Base, UTCDateTime, utcnow


class RunStatus(enum.StrEnum):
    """Where a run is: waiting for a worker, or done one way or another."""

    QUEUED = "queued"
    OK = "ok"
    FAILED = "failed"  # the server could not be reached or refused (``error`` says why)
    REFUSED = "refused"  # Quanta would not send the example (``error`` says why)


class _RunColumns:
    """What every run records: which query on which instance, when, and how it ended.

    ``examples`` describes the real statements used (kind, text, schema, time seen, bucket):
    examples are deleted by retention, and a plan means little without its statement.
    """

    id: Mapped[int] = mapped_column(primary_key=True)
    query_id: Mapped[str] = mapped_column(ForeignKey("query_classes.query_id"))
    instance_id: Mapped[int] = mapped_column(ForeignKey("instances.id"))
    requested_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    taken_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    status: Mapped[str] = mapped_column(String(10), default=RunStatus.QUEUED.value)
    # One line from the server or from Quanta's refusal; never a stack trace.
    error: Mapped[str | None] = mapped_column(Text, default=None)
    examples: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    server_version: Mapped[str | None] = mapped_column(String(100), default=None)
    # Who asked (user or token name, and the token's id; NULL: beat's daily run), copied to
    # the audit entry written when the run ends.
    requested_by: Mapped[str | None] = mapped_column(String(100), default=None)
    requested_by_token_id: Mapped[int | None] = mapped_column(Integer, default=None)
    # Where it ran (or tried to): [{"role": "monitored server" | "execution target",
    # "address": "host:port"}], as its audit entry says. A profile and an ANALYZE run on the
    # execution target, never on the monitored server; NULL on runs stored before.
    ran_on: Mapped[list[dict[str, str]] | None] = mapped_column(JSON, default=None)


class ExplainRun(_RunColumns, Base):
    """EXPLAIN (tabular and FORMAT=JSON, ANALYZE where allowed) of one example, and findings."""

    __tablename__ = "explain_runs"
    __table_args__ = (
        Index("ix_explain_runs_query_id_instance_id_id", "query_id", "instance_id", "id"),
    )

    verb: Mapped[str | None] = mapped_column(String(20), default=None)
    tabular: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON, default=None)
    document: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    analyze: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    # [{kind, table, severity, message}] from quanta.analysis.explain
    findings: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    notes: Mapped[list[str]] = mapped_column(JSON, default=list)


class ProfileRun(_RunColumns, Base):
    """A ranked profile of a query's examples: runs x examples, states worst first."""

    __tablename__ = "profile_runs"
    __table_args__ = (
        Index("ix_profile_runs_query_id_instance_id_id", "query_id", "instance_id", "id"),
    )

    runs: Mapped[int | None] = mapped_column(Integer, default=None)
    response_us: Mapped[int | None] = mapped_column(BigInteger, default=None)
    lost_us: Mapped[int | None] = mapped_column(BigInteger, default=None)
    # [{state, total_us, percent, calls, per_call_us, lost_time}] from quanta.analysis.profile
    rows: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    run_response_us: Mapped[list[int]] = mapped_column(JSON, default=list)
