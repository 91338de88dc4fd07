"""The audit log: one row per admin action."""

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from quanta.core.db import Base, UTCDateTime, utcnow


class AuditEntry(Base):
    """Who did what to which object, when.

    The actor is copied by name (and token id, without a foreign key) so the entry still
    says who acted after the token or user is gone.
    """

    __tablename__ = "audit_log"
    __table_args__ = (Index("ix_audit_log_at", "at"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    actor: Mapped[str] = mapped_column(String(100))
    actor_token_id: Mapped[int | None] = mapped_column(default=None)
    action: Mapped[str] = mapped_column(String(200))
    target: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    detail: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
