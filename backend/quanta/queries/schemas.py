"""Response bodies of the query analytics endpoints."""

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# Closed vocabularies of GET /queries, typed in the OpenAPI schema (so the UI's generated
# client carries them instead of a hand-copied list).
SortOrder = Literal["asc", "desc"]
GroupBy = Literal["query", "schema", "user", "host", "instance"]


class SparkPoint(BaseModel):
    """Load (average active sessions) in one slot of the range."""

    ts: datetime
    load: float


class QueryFlags(BaseModel):
    """What a query's executions did at least once in the range (None: no source says)."""

    full_scan: bool | None
    filesort: bool | None
    tmp_disk_tables: bool | None
    no_index_used: bool | None


class QueryTotals(BaseModel):
    """Sums over every query in the range that matches the filters."""

    count: int
    query_time: float = Field(description="Seconds of query time.")
    load: float = Field(description="Average active sessions: query_time / seconds in range.")
    qps: float = Field(default=0.0, description="Executions per second of the range.")
    query_time_avg: float | None = Field(default=None, description="Seconds per execution.")
    rows_examined: int | None = None
    rows_sent: int | None = None
    queries: int = Field(default=0, description="Query classes matching the filters.")


class RowFigures(BaseModel):
    """The load figures of one ranked row: a query class, or one value of a dimension."""

    count: int
    qps: float = Field(description="Executions per second of the range.")
    query_time: float = Field(description="Seconds of query time.")
    load: float = Field(description="Average active sessions: query_time / seconds in range.")
    share: float = Field(description="Fraction (0..1) of the total query time in the range.")
    query_time_avg: float | None = Field(description="Seconds per execution.")
    query_time_p95: float | None
    query_time_p99: float | None
    query_time_max: float | None
    rows_examined: int | None
    rows_sent: int | None


class QueryRow(RowFigures):
    """One query class in the top list."""

    query_id: str
    fingerprint: str
    statement_type: str | None = None
    tables: list[str] = Field(default_factory=list)
    flags: QueryFlags | None = None
    sparkline: list[SparkPoint]


class GroupRow(RowFigures):
    """One value of the group_by dimension (a schema, user, client host or instance)."""

    value: str = Field(description="The dimension's value ('' when the source gave none).")
    sparkline: list[SparkPoint]


class TopQueries(BaseModel):
    """The heaviest queries of a time range, with totals; or, with group_by other than
    query, the heaviest values of that dimension (in ``groups``, ``rows`` empty)."""

    model_config = ConfigDict(populate_by_name=True)

    from_: datetime = Field(alias="from")
    to: datetime
    seconds: float
    totals: QueryTotals
    rows: list[QueryRow]
    sort: str = "load"
    order: SortOrder = "desc"
    group_by: str = Field(
        default="query", description="query, schema, user, host, instance, tag:KEY or label:KEY."
    )
    groups: list[GroupRow] = Field(default_factory=list)


class MetricStat(BaseModel):
    """One metric of a query over the range: its sum, rate, share of all queries, per call."""

    name: str
    sum: float | None
    rate: float | None = Field(description="Sum per second of the range.")
    share: float | None = Field(description="Fraction (0..1) of the metric over all queries.")
    avg: float | None = Field(description="Per call: sum / count.")
    min: float | None = None
    max: float | None = None
    p50: float | None = None
    p95: float | None = None
    p99: float | None = None


class SeriesPoint(BaseModel):
    """One bucket of a query's time series; gaps have zero load, count and rows."""

    ts: datetime
    load: float
    count: int
    rows_examined: int
    p50: float | None
    p95: float | None
    p99: float | None


class BreakdownRow(BaseModel):
    """The query's load under one value of a dimension."""

    value: str
    count: int
    query_time: float
    share: float = Field(description="Fraction (0..1) of the query's query time.")


class QueryDetail(BaseModel):
    """Everything about one query class over a time range."""

    model_config = ConfigDict(populate_by_name=True)

    query_id: str
    fingerprint: str
    statement_type: str | None
    tables: list[str]
    first_seen: datetime
    last_seen: datetime
    from_: datetime = Field(alias="from")
    to: datetime
    seconds: float
    count: int
    load: float
    share: float = Field(description="Fraction (0..1) of the total query time in the range.")
    metrics: list[MetricStat]
    resolution: str = Field(description="Width of the series' points: minute, hour or day.")
    series: list[SeriesPoint]
    breakdown: dict[str, list[BreakdownRow]] = Field(
        description="Per dimension (schema, user, host, instance, and tag:KEY per tag key),"
        " heaviest first."
    )


class QueryExampleOut(BaseModel):
    """A real statement of the query: the slowest of a bucket or one drawn at random."""

    kind: str = Field(description="slowest or sampled")
    text: str
    query_time: float
    ts: datetime
    schema_name: str
    instance: str
    literals: str = Field(description="full, or masked as in the fingerprint")
    truncated: bool


class QueryExamples(BaseModel):
    """Examples of a query in the range, slowest first."""

    query_id: str
    examples: list[QueryExampleOut]


class FilterValue(BaseModel):
    """One value of a dimension and its share of the load in the range."""

    value: str
    count: int
    share: float


class Filters(BaseModel):
    """The values of each dimension seen in the range, heaviest first."""

    model_config = ConfigDict(populate_by_name=True)

    from_: datetime = Field(alias="from")
    to: datetime
    instance: list[FilterValue]
    schema_: list[FilterValue] = Field(alias="schema")
    user: list[FilterValue]
    host: list[FilterValue]
    tags: dict[str, list[FilterValue]] = Field(
        default_factory=dict, description="Per tag key, its values (statements without it: none)."
    )
    labels: dict[str, list[FilterValue]] = Field(
        default_factory=dict, description="Per instance label key, its values."
    )


class ClassCap(BaseModel):
    """Where one instance stands against the query-class caps."""

    instance: str
    classes: int = Field(description="Query classes stored for the instance.")
    max_classes: int = Field(description="QUANTA_MAX_CLASSES_PER_INSTANCE.")
    added_this_hour: int = Field(description="Classes the instance added this (wall-clock) hour.")
    max_new_per_hour: int = Field(description="QUANTA_MAX_NEW_CLASSES_PER_HOUR.")
    folded_classes: int = Field(
        description="New statement shapes counted under 'other queries' over the last 24 hours "
        "(a shape sent in several batches counts once per batch)."
    )
    folded_events: int = Field(description="Their executions over the last 24 hours.")
    last_folded: datetime | None = Field(
        description="The start of the last hour in which a shape was folded (within 24 hours)."
    )
