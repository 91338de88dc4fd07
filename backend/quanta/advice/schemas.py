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


class MergedIntoOut(BaseModel):
    """The suggestion a superseded one was merged into: its wider index serves both."""

    id: int
    query_id: str
    ddl: str


class PlanVerdictOut(BaseModel):
    """What the instance's latest workload index plan did with a suggestion."""

    plan_id: int | None = Field(
        description="The table's plan (GET /instances/{id}/index-plan); null: no plan of it."
    )
    verdict: Literal["planned", "served", "left_out", "not_weighed"] = Field(
        description="planned: the plan adds this index; served: it serves the query with "
        "another; left_out: it weighed this index and left it out; not_weighed: the query "
        "is not among the plan's"
    )
    index: str | None = Field(description="The plan's index that serves the query, if one.")
    sentence: str = Field(description="Why, in one sentence.")
    computed_at: datetime


class SuggestionOut(BaseModel):
    """One index suggestion for one table a query reads, on one instance."""

    id: int
    query_id: str
    instance: str
    instance_id: int
    table: str = Field(description="db.table")
    action: str = Field(description="add, replace (drops the index it extends) or none")
    columns: list[SuggestionColumnOut]
    ddl: str = Field(description="The ALTER TABLE to run; empty for action none.")
    reason: str = Field(description="Why, in one sentence (for none: why no index helps).")
    notes: list[str]
    redundant: list[str] = Field(description="Existing indexes the new one makes redundant.")
    status: str = Field(
        description="new, applied (an index with these columns exists), dismissed, or "
        "superseded (nothing left to do: the advice became none, or merged_into's index "
        "serves the query)"
    )
    content_hash: str = Field(description="Changes exactly when the advice changes.")
    validation: dict[str, Any] | None = Field(
        description="Sandbox check: plans before/after, improved, summary; or error; null "
        "when the instance has no sandbox DSN."
    )
    merged_into: MergedIntoOut | None = Field(
        description="The suggestion this superseded one was merged into."
    )
    plan: PlanVerdictOut | None = Field(
        description="The latest workload index plan's verdict; null before one."
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
