"""API shapes of the workload by table, index and account, and of the index review."""

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class CoverageOut(BaseModel):
    """How long the instance's statistics cover without a break."""

    source: str = Field(description="userstat or perfschema.")
    first_seen: datetime = Field(description="The first statistics received.")
    since: datetime = Field(
        description="Start of the current unbroken window (restarts after a break)."
    )
    until: datetime = Field(description="End of the last interval received.")
    broken_at: datetime | None = Field(description="When the window last restarted; null: never.")
    break_reason: str | None = Field(description="Why it restarted, in a sentence.")


class TableQueryOut(BaseModel):
    """A query class that touches a table, with its load over the range."""

    model_config = ConfigDict(populate_by_name=True)

    query_id: str
    fingerprint: str
    schema_: str | None = Field(
        alias="schema",
        description="The schema it ran in when it names the table without one (its page "
        "filters on it); null when it names db.table.",
    )
    calls: int
    load: float = Field(description="Average active sessions over the range.")
    share: float = Field(description="Share of the instance's load, 0..1.")


class TableWorkloadOut(BaseModel):
    """One table's reads and writes over the range, and what its snapshot says of it."""

    table: str = Field(description="db.table, as the server names it.")
    rows_read: int | None
    rows_changed: int | None = Field(description="Rows inserted, updated or deleted.")
    rows_inserted: int | None = Field(description="Where the source splits writes (P_S).")
    rows_updated: int | None
    rows_deleted: int | None
    rows_changed_x_indexes: int | None = Field(
        description="userstat: rows changed times the indexes each change maintained."
    )
    io_wait_s: float | None = Field(description="performance_schema: seconds of table I/O.")
    rows_read_per_s: float | None
    rows_changed_per_s: float | None
    read_share: float = Field(description="Share of the rows read on the instance, 0..1.")
    changed_share: float = Field(description="Share of the rows changed on the instance, 0..1.")
    row_estimate: int | None = Field(description="From the latest schema snapshot.")
    data_bytes: int | None
    index_bytes: int | None
    snapshot_taken_at: datetime | None
    queries: list[TableQueryOut] = Field(
        description="The query classes naming the table, heaviest first."
    )


class TablesOut(BaseModel):
    """An instance's tables by workload over a range."""

    model_config = ConfigDict(populate_by_name=True)

    instance_id: int
    instance: str
    from_: datetime = Field(alias="from")
    to: datetime
    seconds: float = Field(description="Seconds of the range the statistics cover (rates).")
    source: str | None = Field(description="userstat or perfschema; null: no statistics yet.")
    since: datetime | None = Field(description="The first statistics received.")
    coverage: CoverageOut | None
    tables: list[TableWorkloadOut]


class UserWorkloadOut(BaseModel):
    """One account's activity over the range: USER_STATISTICS where the server keeps it
    (null where it does not count a figure), and what its query classes did."""

    user: str
    own: bool = Field(
        default=False, description="Quanta's own monitoring account (the instance's DSN)."
    )
    cpu_time_s: float | None
    busy_time_s: float | None
    connected_time_s: float | None
    connections_total: int | None
    connections_ssl: int | None
    connections_concurrent: int | None = Field(
        description="The most connections at once the agent saw."
    )
    connections_denied: int | None
    connections_lost: int | None
    access_denied: int | None
    rows_read: int | None = Field(
        description="userstat: rows read from tables; else rows its queries examined."
    )
    rows_sent: int | None
    rows_changed: int | None
    rows_inserted: int | None
    rows_updated: int | None
    rows_deleted: int | None
    select_commands: int | None
    update_commands: int | None
    other_commands: int | None
    commit_transactions: int | None
    rollback_transactions: int | None
    empty_queries: int | None
    max_statement_time_exceeded: int | None
    bytes_received: int | None
    bytes_sent: int | None
    binlog_bytes_written: int | None
    errors: int | None = Field(description="Statements that failed (performance_schema).")
    calls: int | None = Field(description="Statements of its query classes (the store).")
    query_time_s: float | None
    load_share: float | None = Field(description="Share of the instance's query load, 0..1.")


class UsersOut(BaseModel):
    """An instance's accounts by activity over a range."""

    model_config = ConfigDict(populate_by_name=True)

    instance_id: int
    instance: str
    from_: datetime = Field(alias="from")
    to: datetime
    seconds: float
    source: Literal["userstat", "queries"] = Field(
        description="userstat: USER_STATISTICS; queries: only what the query store knows."
    )
    users: list[UserWorkloadOut]


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
        description="Start of the unbroken window its unused check looks at; null: no "
        "statistics of it yet."
    )
    unused_checked: bool = Field(
        description="Observed long enough (QUANTA_INDEX_UNUSED_MIN_MINUTES) to call indexes unused."
    )


class IndexUsageOut(BaseModel):
    """One index of a snapshotted table and its reads over the range."""

    table: str
    index: str = Field(description="'' : reads that used no index (table scans).")
    columns: list[str]
    unique: bool
    reads: int | None = Field(description="Rows read through it in the range; null: unknown.")
    last_read_at: datetime | None = Field(description="End of the last interval it was read in.")


class IndexReviewOut(BaseModel):
    """The review of an instance's existing indexes, and their reads over a range."""

    instance: str = Field(default="", description="The instance's name.")
    findings: list[IndexFindingOut]
    tables: list[ReviewedTableOut]
    indexes: list[IndexUsageOut] = []
    coverage: CoverageOut | None = None
    unused_after_minutes: float = Field(
        default=0, description="QUANTA_INDEX_UNUSED_MIN_MINUTES: the window an unused call needs."
    )
