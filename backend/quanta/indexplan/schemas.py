"""Response bodies of the index plan endpoints."""

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from quanta.advice.schemas import SuggestionColumnOut


class SandboxCheckOut(BaseModel):
    """What the sandbox's EXPLAIN said about one served query, before and after the plan."""

    improved: bool | None = Field(description="The plan got better; null when not checked.")
    worse: bool | None = None
    summary: str | None = Field(
        default=None, description="'orders: ALL, 6,000 rows -> ref idx_orders_phone, 2 rows'"
    )
    rows_before: int | None = Field(default=None, description="Sample's estimate, before.")
    rows_after: int | None = Field(default=None, description="Sample's estimate, after.")
    error: str | None = Field(default=None, description="Why this query was not checked.")


class ServedQueryOut(BaseModel):
    """A query an index of the plan serves, with what it costs now and with the plan."""

    query_id: str
    fingerprint: str
    load_share: float = Field(description="Share (0..1) of the instance's load in the window.")
    calls: float
    rows_examined_per_call: float | None = Field(
        description="Measured over the window (slow log / performance_schema)."
    )
    rows_before: int | None = Field(
        description="Rows examined per call now by the accesses the index serves: their share "
        "of the measured rows when measured, else the estimate."
    )
    rows_after: int | None = Field(
        description="... with the plan: the measured rows cut by the estimated saving when "
        "measured, else the estimate."
    )
    measured: bool = Field(description="rows_before is measured (rows_after derives from it).")
    estimated_before: int | None = Field(description="The advisor's estimate of rows_before.")
    estimated_after: int | None = Field(description="The advisor's estimate of rows_after.")
    from_example: bool = Field(description="Planned from a real example (else the fingerprint).")
    sandbox: SandboxCheckOut | None = None


class PlannedIndexOut(BaseModel):
    """A new index of the plan and its evidence."""

    name: str
    definition: str = Field(description="ADD INDEX idx_t_a_b (a, b)")
    columns: list[SuggestionColumnOut]
    width_bytes: int = Field(description="Bytes per row, with the primary key InnoDB appends.")
    entries_per_s: float = Field(description="Index entries maintained per second (writes).")
    served: list[ServedQueryOut]
    validation: Literal["confirmed", "not_checked"] = Field(
        description="confirmed: a served query's sandbox plan uses it and got better."
    )


class DroppedIndexOut(BaseModel):
    """An existing index the plan makes redundant."""

    name: str
    reason: str
    replaced_by: str | None


class LeftOutIndexOut(BaseModel):
    """A query's own suggestion the plan left out, and why."""

    name: str
    columns: list[str]
    query_ids: list[str] = Field(description="The queries it was suggested for.")
    reason: str
    in_chat: list[str] = Field(description="Of those, the ones chat already received it for.")


class RejectedIndexOut(BaseModel):
    """A planned change the sandbox's plans did not confirm, left out of the DDL."""

    name: str
    definition: str
    reason: str


class TablePlanOut(BaseModel):
    """One table's index plan: one ALTER TABLE with its adds and drops."""

    id: int
    table: str = Field(description="db.table")
    ddl: str = Field(description="One ALTER TABLE; empty when the table needs nothing.")
    signature: str = Field(description="Changes exactly when the DDL does.")
    load_share: float = Field(description="Share of the load of the queries the adds serve.")
    rows_before_per_s: float = Field(
        description="Rows examined per second now: measured for the queries whose rows "
        "examined were measured, estimated for the others."
    )
    rows_after_per_s: float = Field(description="... with the plan.")
    write_entries_per_s: float = Field(description="Index entries the adds maintain per second.")
    adds: list[PlannedIndexOut]
    drops: list[DroppedIndexOut]
    rejected: list[RejectedIndexOut]
    unserved: list[ServedQueryOut] = Field(description="Queries on the table no index helps.")
    left_out: list[LeftOutIndexOut] = Field(
        description="The queries' own suggestions the plan left out."
    )
    notes: list[str]
    validation: dict[str, Any] | None = Field(
        description="The sandbox run: sandbox, sample_rows, or error; null without a sandbox."
    )
    computed_at: datetime
    changed_at: datetime


class IndexPlanList(BaseModel):
    """An instance's latest index plans, heaviest table first."""

    instance_id: int
    instance: str
    window_start: datetime | None = Field(description="The window the plans weigh.")
    window_end: datetime | None
    computed_at: datetime | None = Field(description="When they were computed; null: never.")
    plans: list[TablePlanOut]


class PlanRequested(BaseModel):
    """A fresh plan was queued; GET the same path for its result."""

    instance_id: int
    instance: str
    status: Literal["queued"] = "queued"
