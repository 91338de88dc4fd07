"""Response bodies of the query analytics endpoints."""

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field


class SparkPoint(BaseModel):
    """Load (average active sessions) in one slot of the range."""

    ts: datetime
    load: float


class QueryTotals(BaseModel):
    """Sums over every query in the range."""

    count: int
    query_time: float = Field(description="Seconds of query time.")
    load: float = Field(description="Average active sessions: query_time / seconds in range.")


class QueryRow(BaseModel):
    """One query class in the top list."""

    query_id: str
    fingerprint: str
    count: int
    query_time: float
    load: float
    share: float = Field(description="Fraction (0..1) of the total query time in the range.")
    sparkline: list[SparkPoint]


class TopQueries(BaseModel):
    """The heaviest queries of a time range, with totals."""

    model_config = ConfigDict(populate_by_name=True)

    from_: datetime = Field(alias="from")
    to: datetime
    seconds: float
    totals: QueryTotals
    rows: list[QueryRow]
