"""Statements on ingest_batches."""

from datetime import datetime

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from quanta.ingest.models import BatchStatus, IngestBatch


def find_batch(session: Session, *, token_id: int, batch_id: str) -> IngestBatch | None:
    """The batch a token already sent under this id, if any."""
    stmt = select(IngestBatch).where(
        IngestBatch.token_id == token_id, IngestBatch.batch_id == batch_id
    )
    return session.scalars(stmt).one_or_none()


def stale_batch_ids(session: Session, *, received_before: datetime) -> list[int]:
    """Batches still queued long after they arrived (their task was lost)."""
    stmt = select(IngestBatch.id).where(
        IngestBatch.status == BatchStatus.QUEUED, IngestBatch.received_at < received_before
    )
    return list(session.scalars(stmt))


def queue_summary(session: Session) -> tuple[int, datetime | None]:
    """How many batches are still queued, and when the oldest of them arrived."""
    stmt = select(func.count(), func.min(IngestBatch.received_at)).where(
        IngestBatch.status == BatchStatus.QUEUED
    )
    count, oldest = session.execute(stmt).one()
    return int(count), oldest


def clear_processed_payloads(session: Session) -> int:
    """Drop the raw payload of every batch no longer queued; returns how many were dropped."""
    stmt = (
        update(IngestBatch)
        .where(IngestBatch.status != BatchStatus.QUEUED, IngestBatch.payload_gzip.is_not(None))
        .values(payload_gzip=None)
    )
    return int(session.execute(stmt).rowcount)  # type: ignore[attr-defined]


def count_failed(session: Session) -> int:
    """How many batches the worker gave up on."""
    stmt = select(func.count()).where(IngestBatch.status == BatchStatus.FAILED)
    return int(session.scalar(stmt) or 0)
