"""Request and response bodies of the annotation endpoints."""

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from quanta.annotations.models import TAG_MAX_CHARS, TEXT_MAX_CHARS
from quanta.core.names import InstanceName

MAX_TAGS = 20
MAX_INSTANCES = 100

Tag = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=TAG_MAX_CHARS)
]


class AnnotationIn(BaseModel):
    """A new annotation: a point in time, or a range when ``end_time`` is given."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "text": "Started ALTER TABLE orders ADD INDEX idx_customer (customer_id)",
                    "tags": ["schema", "deploy"],
                    "instances": ["db1"],
                }
            ]
        },
    )

    text: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=TEXT_MAX_CHARS)
    ]
    tags: list[Tag] = Field(default_factory=list, max_length=MAX_TAGS)
    instances: list[InstanceName] = Field(
        default_factory=list,
        max_length=MAX_INSTANCES,
        description="Names of the instances it is about; empty: all of them.",
    )
    time: datetime | None = Field(
        default=None, description="When it happened (ISO 8601, naive is UTC); default now."
    )
    end_time: datetime | None = Field(
        default=None, description="End of a ranged annotation; must be after `time`."
    )


class AnnotationOut(BaseModel):
    """A stored annotation."""

    id: int
    text: str
    tags: list[str]
    instances: list[str] = Field(description="Instance names; empty: all instances.")
    time: datetime
    end_time: datetime | None
    created_by: str = Field(description="Name of the token that created it.")
    created_at: datetime


class TimeRange(BaseModel):
    """A half-open UTC range [from, to)."""

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    from_: datetime = Field(alias="from", serialization_alias="from")
    to: datetime


class MetricChangeOut(BaseModel):
    """One metric before and after, the size of the change and its significance."""

    before: float | None
    after: float | None
    change: float | None = Field(description="after - before.")
    change_pct: float | None = Field(
        description="change / before (0.25 = +25%); null when before is 0 or unknown."
    )
    p_value: float | None = Field(
        description="Two-sided Mann-Whitney U on the per-minute values of the two windows."
    )
    significant: bool


class ImpactRow(BaseModel):
    """One query's change across the annotation."""

    query_id: str
    fingerprint: str
    instance: str | None = Field(
        description="The instance when all of the query's load came from one; else null."
    )
    status: Literal["changed", "unchanged", "new", "gone", "not_enough_data"]
    verdict: Literal["improved", "regressed", "unchanged", "new", "gone", "not_enough_data"] = (
        Field(description="not_enough_data: the windows are shorter than a verdict needs.")
    )
    metrics: dict[
        Literal["load", "count", "avg_latency", "p95_latency", "rows_examined_per_call"],
        MetricChangeOut,
    ] = Field(
        description="load: query seconds per second; count: calls in the window; latencies "
        "in seconds; rows examined per call."
    )


class AnnotationImpact(BaseModel):
    """Per query, equal windows before and after an annotation compared."""

    annotation: AnnotationOut
    window_seconds: int = Field(
        description="Length of each window compared (shorter than asked while the window "
        "after the annotation has not fully elapsed)."
    )
    minutes_needed: int = Field(
        description="Minutes each window needs before a verdict (QUANTA_REGRESSION_MIN_MINUTES)."
    )
    note: str | None = Field(
        default=None,
        description='Why there is no verdict yet: "not enough data yet (N minutes; M needed)".',
    )
    before: TimeRange
    after: TimeRange
    queries: list[ImpactRow]
