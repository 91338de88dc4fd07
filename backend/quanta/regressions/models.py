"""Regressions: a query class that got dearer per call than its own baseline, with evidence."""

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from quanta.core.db import Base, UTCDateTime


class RegressionStatus(enum.StrEnum):
    """Where a regression stands."""

    # Found; its EXPLAIN (queued at once) is awaited so that the message can say whether the
    # plan changed. Announced at the next check after the EXPLAIN ends, or after PLAN_WAIT.
    PENDING = "pending"
    OPEN = "open"  # announced, still dearer than its baseline
    RESOLVED = "resolved"  # back within its baseline for the sustained window


class Regression(Base):
    """One regression of one query on one instance, from its start to its resolution.

    ``before`` is the metric's baseline value, kept as found: the regression is resolved
    against it (a sliding baseline would slowly take the regression in). ``evidence`` holds
    every metric compared, the windows, calls, and what the cause was chosen from (schema
    statements, annotations, plans); ``cause`` is the sentence that went to chat.
    """

    __tablename__ = "regressions"
    __table_args__ = (
        # Two checks running at once find the same start: one row.
        UniqueConstraint("instance_id", "query_id", "since"),
        Index("ix_regressions_status", "status"),
        Index("ix_regressions_instance_id_detected_at", "instance_id", "detected_at"),
        Index("ix_regressions_query_id", "query_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    instance_id: Mapped[int] = mapped_column(ForeignKey("instances.id"))
    query_id: Mapped[str] = mapped_column(String(16))
    kind: Mapped[str] = mapped_column(String(12))  # regression, new
    metric: Mapped[str] = mapped_column(String(30))
    before: Mapped[float | None] = mapped_column(Float, default=None)
    after: Mapped[float | None] = mapped_column(Float, default=None)
    since: Mapped[datetime] = mapped_column(UTCDateTime)
    detected_at: Mapped[datetime] = mapped_column(UTCDateTime)
    window_start: Mapped[datetime] = mapped_column(UTCDateTime)
    window_end: Mapped[datetime] = mapped_column(UTCDateTime)
    baseline_start: Mapped[datetime] = mapped_column(UTCDateTime)
    baseline_end: Mapped[datetime] = mapped_column(UTCDateTime)
    seasonal: Mapped[bool] = mapped_column(Boolean, default=False)
    load: Mapped[float] = mapped_column(Float, default=0.0)
    load_share: Mapped[float] = mapped_column(Float, default=0.0)
    evidence: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    cause: Mapped[str] = mapped_column(Text, default="")
    explain_run_id: Mapped[int | None] = mapped_column(Integer, default=None)
    status: Mapped[str] = mapped_column(String(10), default=RegressionStatus.PENDING.value)
    announced_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    # The window that showed it back within its baseline, and the metric's value there.
    resolution: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
