"""The latest schema snapshot of each table of each instance."""

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from quanta.core.db import Base, UTCDateTime

# MySQL names are at most 64 characters: "db.table" fits in 129.
TABLE_NAME_LENGTH = 129


class TableSnapshot(Base):
    """One table as it was last read from its server (``document``: the advisor's per-table
    JSON: columns, primary key, indexes with cardinality, row estimate, sizes, engine).

    One row per (instance, table), replaced by each refresh: ``taken_at`` says how fresh it
    is, ``content_hash`` fingerprints its structure (not its statistics) and ``changed_at``
    is when that last changed, so a schema change is a hash that differs from the stored one.
    ``refresh_due_at`` debounces re-reads asked for by what ingest sees (tables.service).
    """

    __tablename__ = "table_snapshots"
    __table_args__ = (UniqueConstraint("instance_id", "table_name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    instance_id: Mapped[int] = mapped_column(ForeignKey("instances.id"))
    table_name: Mapped[str] = mapped_column(String(TABLE_NAME_LENGTH))  # db.table, lower case
    taken_at: Mapped[datetime] = mapped_column(UTCDateTime)
    changed_at: Mapped[datetime] = mapped_column(UTCDateTime)
    server_flavor: Mapped[str] = mapped_column(String(20))
    server_version: Mapped[str] = mapped_column(String(100))
    content_hash: Mapped[str] = mapped_column(String(64))
    document: Mapped[dict[str, Any]] = mapped_column(JSON)
    # When the re-read queued for it (a schema statement was seen) is due; None: none queued.
    refresh_due_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
