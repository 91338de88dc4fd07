"""API shape of a purge."""

from pydantic import BaseModel, Field


class QueryPurged(BaseModel):
    """What a purge deleted."""

    query_id: str
    deleted: dict[str, int] = Field(description="Rows deleted per table.")
