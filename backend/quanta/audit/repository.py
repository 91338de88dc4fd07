"""Statements on audit_log."""

from sqlalchemy import select
from sqlalchemy.orm import Session

from quanta.audit.models import AuditEntry


def newest(session: Session, *, limit: int, before_id: int | None) -> list[AuditEntry]:
    """Up to ``limit`` entries, newest first, older than ``before_id`` when given."""
    stmt = select(AuditEntry).order_by(AuditEntry.id.desc()).limit(limit)
    if before_id is not None:
        stmt = stmt.where(AuditEntry.id < before_id)
    return list(session.scalars(stmt))
