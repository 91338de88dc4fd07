"""Index suggestions: the advisor's advice for one table of one query on one instance."""

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from quanta.core.db import Base, UTCDateTime
from quanta.tables.models import TABLE_NAME_LENGTH


class SuggestionStatus(enum.StrEnum):
    """Where a suggestion stands."""

    NEW = "new"  # advised (or its advice changed) and not acted on
    APPLIED = "applied"  # an index with its columns now exists on the table
    DISMISSED = "dismissed"  # a person decided against it; kept while the advice is the same
    # Nothing left to do: the advice for the table became "none" (another index serves the
    # query now), or the index was merged into another suggestion's wider one (merged_into_id).
    SUPERSEDED = "superseded"


class Suggestion(Base):
    """One piece of advice for one table a query reads, on one instance.

    ``columns`` is ``[{"name", "desc", "rule"}]``; ``ddl`` is empty for action ``none`` (the
    reason says why no index helps). ``content_hash`` covers what the advice says (action,
    columns, DDL, reason, notes, redundant indexes): a re-run giving the same hash keeps the
    row and its status, a different one updates it and makes it ``new`` again.
    ``validation`` holds the sandbox's plans before and after (``improved``), or the reason
    validation failed, or NULL when the instance has no sandbox.
    ``merged_into_id`` is the suggestion (another query's, same table) whose wider index holds
    this one's columns as its left-most ones, when this one is superseded by it; no foreign
    key: a target deleted just ends the merge at the next pass. ``plan`` is what the
    instance's latest workload index plan did with this suggestion (quanta.indexplan writes
    it): ``{"plan_id", "verdict", "index", "sentence", "computed_at"}``, NULL before a plan.
    """

    __tablename__ = "suggestions"
    __table_args__ = (
        # One row per piece of advice; also what makes two concurrent runs for the same
        # query converge (the loser fails and its task is retried).
        UniqueConstraint("query_id", "instance_id", "table_name", "ddl"),
        Index("ix_suggestions_query_id_instance_id", "query_id", "instance_id"),
        Index("ix_suggestions_instance_id_table_name", "instance_id", "table_name"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    query_id: Mapped[str] = mapped_column(ForeignKey("query_classes.query_id"))
    instance_id: Mapped[int] = mapped_column(ForeignKey("instances.id"))
    table_name: Mapped[str] = mapped_column(String(TABLE_NAME_LENGTH))
    action: Mapped[str] = mapped_column(String(10))
    columns: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    ddl: Mapped[str] = mapped_column(Text)
    reason: Mapped[str] = mapped_column(Text)
    notes: Mapped[list[str]] = mapped_column(JSON)
    redundant: Mapped[list[str]] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(String(10), default=SuggestionStatus.NEW.value)
    content_hash: Mapped[str] = mapped_column(String(64))
    validation: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    merged_into_id: Mapped[int | None] = mapped_column(default=None)
    plan: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)
