"""Request and response bodies of the suggestion endpoints."""

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class SuggestionColumnOut(BaseModel):
    """One column of a suggested index and the rule that put it there."""

    name: str
    desc: bool
    rule: str = Field(
        description="equality, in_list, join, range, order_by, group_by, min_max, covering"
    )


class SuggestionOut(BaseModel):
    """One index suggestion for one table a query reads, on one instance."""

    id: int
    query_id: str
    instance: str
    table: str = Field(description="db.table")
    action: str = Field(description="add, replace (drops the index it extends) or none")
    columns: list[SuggestionColumnOut]
    ddl: str = Field(description="The ALTER TABLE to run; empty for action none.")
    reason: str = Field(description="Why, in one sentence (for none: why no index helps).")
    notes: list[str]
    redundant: list[str] = Field(description="Existing indexes the new one makes redundant.")
    status: str = Field(
        description="new, applied (an index with these columns exists) or dismissed"
    )
    content_hash: str = Field(description="Changes exactly when the advice changes.")
    validation: dict[str, Any] | None = Field(
        description="Sandbox check: plans before/after, improved, summary; or error; null "
        "when the instance has no sandbox DSN."
    )
    created_at: datetime
    updated_at: datetime


class SuggestionList(BaseModel):
    """A query's index suggestions."""

    query_id: str
    suggestions: list[SuggestionOut]


class AdviceRequested(BaseModel):
    """A fresh advice run was queued; GET the same path for its result."""

    query_id: str
    instance: str
    status: Literal["queued"] = "queued"


class SuggestionPatch(BaseModel):
    """What a person may change on a suggestion: dismiss it, or take a dismissal back."""

    model_config = ConfigDict(extra="forbid")

    status: Literal["new", "dismissed"]
