"""The ingest wire format: what agents POST to /api/v1/ingest."""

from datetime import datetime
from typing import Annotated, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, StringConstraints

from quanta.ingest.models import BatchStatus

MAX_QUERY_CHARS = 1_000_000
# Counters above 2**53 are wrapped server counters (MariaDB logs some as 2**64 - n), not data.
MAX_COUNTER = 2**53

Name = Annotated[str, StringConstraints(min_length=1, max_length=100)]
Dimension = Annotated[str, StringConstraints(max_length=255)]


class SlowLogEventIn(BaseModel):
    """One slow-log entry as the agent parsed it."""

    model_config = ConfigDict(extra="forbid")

    ts: AwareDatetime
    query: Annotated[str, StringConstraints(min_length=1, max_length=MAX_QUERY_CHARS)]
    query_time: float = Field(ge=0)
    lock_time: float | None = Field(default=None, ge=0)
    rows_sent: int | None = Field(default=None, ge=0, le=MAX_COUNTER)
    rows_examined: int | None = Field(default=None, ge=0, le=MAX_COUNTER)
    db: Dimension | None = None
    user: Dimension | None = None
    host: Dimension | None = None


class IngestBatchIn(BaseModel):
    """A batch of events from one agent for one instance and one source."""

    model_config = ConfigDict(extra="forbid")

    batch_id: Annotated[
        str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9._:-]+$")
    ]
    instance: Name
    source: Literal["slowlog"] = "slowlog"
    events: list[SlowLogEventIn]


class IngestBatchOut(BaseModel):
    """Where a batch is: queued for the worker, or done."""

    batch_id: str
    status: BatchStatus
    events: int
    received_at: datetime
    processed_at: datetime | None
