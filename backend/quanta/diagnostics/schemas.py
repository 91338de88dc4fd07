"""Response bodies of the EXPLAIN and profile endpoints."""

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

RunStatusName = Literal["queued", "ok", "failed", "refused"]


class ExampleUsed(BaseModel):
    """The real statement a run used (never the fingerprint)."""

    kind: str = Field(description="slowest or sampled: which stored example it was.")
    text: str
    schema_name: str
    ts: datetime = Field(description="When the server ran it.")
    query_time: float


class FindingOut(BaseModel):
    """One observation about the plan, with a one-line explanation."""

    kind: str = Field(
        description="full_table_scan, full_index_scan, no_usable_key, key_choice, filesort, "
        "temporary_table, dependent_subquery or rows_examined."
    )
    table: str | None
    severity: str = Field(description="warning (likely costs time) or info.")
    message: str


class ServerUsed(BaseModel):
    """A server a run reached (or tried to reach)."""

    role: Literal["monitored server", "execution target"] = Field(
        description="The monitored server (EXPLAIN) or the execution target (ANALYZE, profiles)."
    )
    address: str = Field(description="host:port")


class _RunOut(BaseModel):
    id: int
    query_id: str
    instance: str
    status: RunStatusName
    requested_at: datetime
    taken_at: datetime | None = Field(description="When it ran; null while queued.")
    error: str | None = Field(
        description="Why it failed or was refused (the server's message, or Quanta's reason)."
    )
    pending: bool = Field(
        default=False, description="A newer request is queued; this is the latest finished run."
    )
    examples: list[ExampleUsed]
    server_version: str | None = Field(
        description="VERSION() of the server it ran on (a profile's: the execution target's)."
    )
    ran_on: list[ServerUsed] = Field(
        default_factory=list,
        description="Where it ran: EXPLAIN on the monitored server; ANALYZE and profiles on "
        "the execution target. Empty while queued, for a run refused before reaching any "
        "server, and for runs stored before this was recorded.",
    )


class ExplainRunOut(_RunOut):
    """EXPLAIN of a real example: the tabular plan, the JSON plan(s) and the findings."""

    verb: str | None = Field(description="select, update, delete, insert or replace.")
    findings: list[FindingOut]
    tabular: list[dict[str, Any]] | None = Field(
        description="EXPLAIN rows as the server gave them."
    )
    document: dict[str, Any] | None = Field(description="EXPLAIN FORMAT=JSON.")
    analyze: dict[str, Any] | None = Field(
        description="MariaDB ANALYZE FORMAT=JSON (measured), where executing SELECTs is allowed."
    )
    notes: list[str] = Field(description="Why a part is missing (ANALYZE not allowed, ...).")


class ProfileRowOut(BaseModel):
    """One state of the ranked profile, or the lost-time row."""

    state: str
    total_us: int
    percent: float = Field(description="Share of the response time; the rows sum to 100.")
    calls: int
    per_call_us: float
    lost_time: bool = Field(description="Response time that no stage accounts for.")


class ProfileRunOut(_RunOut):
    """A ranked response-time profile over every run of every example used."""

    runs: int | None = Field(description="Executions measured (runs per example x examples).")
    response_us: int | None = Field(description="Total response time of all runs, in µs.")
    lost_us: int | None
    rows: list[ProfileRowOut] = Field(description="States worst first, then lost time.")
    run_response_us: list[int]
