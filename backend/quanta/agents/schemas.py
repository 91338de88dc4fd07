"""Response bodies of the agents' health endpoint."""

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

SourceState = Literal["reporting", "failing", "stopped"]


class AgentSourceOut(BaseModel):
    """One source of one instance: what arrived last and what its agent says about itself."""

    instance: str
    instance_id: int
    source: str = Field(description="slowlog, perfschema or stats.")
    state: SourceState = Field(
        description="reporting: heard from lately and reading the source; failing: the agent "
        "reports, but its last read of the source failed (see last_error); stopped: nothing "
        "heard for longer than QUANTA_AGENT_SILENCE_SECONDS (or three report intervals)."
    )
    silent_seconds: float = Field(description="Seconds since anything arrived for it.")
    last_seen_at: datetime = Field(description="The last batch or status report received.")
    last_batch_at: datetime | None = Field(description="When the last data batch arrived.")
    last_batch_rows: int | None = Field(description="Statements or rows that batch carried.")
    lag_seconds: float | None = Field(
        description="Time from the newest data of the last batch to its arrival."
    )
    agent_version: str | None
    agent_host: str | None = Field(description="Null for agents that send no status.")
    read_at: datetime | None = Field(
        description="When the agent last read the source without an error."
    )
    spooled: int | None = Field(description="Batches waiting in the agent's spool.")
    spooled_bytes: int | None
    dropped: int | None = Field(
        description="Batches the agent dropped for lack of spool space since it started."
    )
    rejected: int | None = Field(description="Batches the server refused for good.")
    last_error: str | None = Field(description="Shown to admins only.")
    last_error_at: datetime | None
