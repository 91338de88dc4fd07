"""The latest workload index plan of each table of an instance."""

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Float, ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from quanta.core.db import Base, UTCDateTime
from quanta.tables.models import TABLE_NAME_LENGTH


class IndexPlan(Base):
    """One table's plan (quanta.analysis.advisor.workload.TablePlan) as last computed.

    ``plan`` holds the adds (each with the queries it serves), drops, notes and the estimated
    rows examined per second before/after, after the sandbox kept only what its plans
    confirmed; ``validation`` holds the sandbox's comparison per served query (or why there
    was none; NULL when the instance has no sandbox). ``signature`` changes exactly when the
    DDL does: chat is told once per signature. ``changed_at`` is when it last changed.
    """

    __tablename__ = "index_plans"
    __table_args__ = (UniqueConstraint("instance_id", "table_name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    instance_id: Mapped[int] = mapped_column(ForeignKey("instances.id"))
    table_name: Mapped[str] = mapped_column(String(TABLE_NAME_LENGTH))
    signature: Mapped[str] = mapped_column(String(64))
    ddl: Mapped[str] = mapped_column(Text)
    # Load-weighted estimated rows examined per second now: orders an instance's tables.
    rows_before_per_s: Mapped[float] = mapped_column(Float)
    plan: Mapped[dict[str, Any]] = mapped_column(JSON)
    validation: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    window_start: Mapped[datetime] = mapped_column(UTCDateTime)
    window_end: Mapped[datetime] = mapped_column(UTCDateTime)
    computed_at: Mapped[datetime] = mapped_column(UTCDateTime)
    changed_at: Mapped[datetime] = mapped_column(UTCDateTime)
