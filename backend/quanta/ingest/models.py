"""Raw ingest batches, stored durably before they are processed."""

import enum
from datetime import datetime

from sqlalchemy import Enum, ForeignKey, Index, Integer, LargeBinary, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from quanta.core.db import Base, UTCDateTime, utcnow


class BatchStatus(enum.StrEnum):
    """Where a batch is in the pipeline."""

    QUEUED = "queued"
    DONE = "done"
    FAILED = "failed"  # the worker could not process it (see error); never retried again


MAX_ERROR_CHARS = 500


class IngestBatch(Base):
    """One batch as an agent sent it; (token_id, batch_id) makes delivery idempotent.

    The raw payload is transient: it is dropped in the transaction that processes the batch
    (it holds every literal the agent sent), while the row stays so that a resent batch is
    still recognised.
    """

    __tablename__ = "ingest_batches"
    __table_args__ = (
        UniqueConstraint("token_id", "batch_id"),
        Index("ix_ingest_batches_status_received_at", "status", "received_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    token_id: Mapped[int] = mapped_column(ForeignKey("api_tokens.id"))
    batch_id: Mapped[str] = mapped_column(String(64))
    instance_id: Mapped[int] = mapped_column(ForeignKey("instances.id"))
    source: Mapped[str] = mapped_column(String(20))
    payload_gzip: Mapped[bytes | None] = mapped_column(LargeBinary, default=None)
    event_count: Mapped[int] = mapped_column(Integer)
    status: Mapped[BatchStatus] = mapped_column(
        Enum(
            BatchStatus,
            native_enum=False,
            length=10,
            values_callable=lambda e: [m.value for m in e],
        ),
        default=BatchStatus.QUEUED,
    )
    received_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    processed_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    # Processing attempts a worker started, so that a batch that kills or fails its worker
    # every time is given up after ingest_max_attempts instead of re-queued for ever.
    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    error: Mapped[str | None] = mapped_column(String(MAX_ERROR_CHARS), default=None)
