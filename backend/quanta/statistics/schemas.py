"""API shapes of the existing-index review."""

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field


class IndexFindingOut(BaseModel):
    """An existing index that can go, why, and the DDL that drops it."""

    table: str = Field(description="db.table")
    index: str
    kind: Literal["duplicate", "redundant", "primary_key_suffix", "unused"]
    covered_by: str | None = Field(description="The index that serves its queries instead.")
    ddl: str
    reason: str


class ReviewedTableOut(BaseModel):
    """A snapshotted table and how long its index reads have been observed."""

    table: str
    statistics_since: datetime | None = Field(
        description="First index statistics received for it; null: none yet."
    )
    unused_checked: bool = Field(
        description="Observed long enough (QUANTA_INDEX_UNUSED_MIN_DAYS) to call indexes unused."
    )


class IndexReviewOut(BaseModel):
    """The review of an instance's existing indexes."""

    findings: list[IndexFindingOut]
    tables: list[ReviewedTableOut]
