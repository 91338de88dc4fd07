"""API shapes of the production stage profiles."""

from datetime import datetime

from pydantic import BaseModel, Field


class StageOut(BaseModel):
    """One stage of a production profile, worst first."""

    stage: str = Field(description="The state as SHOW PROFILE names it (Sending data).")
    time_s: float = Field(description="Summed time of the sampled executions in the stage.")
    share: float = Field(description="time_s over response_s (0 to 1).")
    calls: int = Field(description="How many times the sampled executions entered it.")
    per_call_s: float


class WaitOut(BaseModel):
    """One wait event under one stage ('lost time': between stages)."""

    stage: str
    event: str = Field(description="performance_schema's EVENT_NAME (wait/io/table/...).")
    time_s: float
    count: int


class CollectionOut(BaseModel):
    """What the instance's agent last said of the performance_schema consumers."""

    stages: bool = Field(description="The statement and stage history consumers are on.")
    waits: bool = Field(description="The wait history consumers are on too.")
    reported_at: datetime


class QueryStagesOut(BaseModel):
    """Where a query's time goes on one instance, from the executions performance_schema's
    history kept (nothing executed); a sample, never extrapolated."""

    instance: str
    from_: datetime = Field(alias="from")
    to: datetime
    executions_sampled: int = Field(description="Executions whose stages were all kept.")
    executions_total: int = Field(
        description="Executions the digest table counted in the range while stages were kept."
    )
    response_s: float = Field(description="Summed response time of the sampled executions.")
    stages: list[StageOut]
    lost_time_s: float = Field(description="Response time no stage accounts for.")
    waits_sampled: int = Field(description="Sampled executions whose waits were all kept.")
    waits: list[WaitOut] = Field(description="Under their stage, in the stages' order.")
    collection: CollectionOut | None = Field(
        description="The consumers as last reported; null: no agent reported them."
    )
    reason: str | None = Field(
        description="Why nothing was sampled (consumers off, not sampled in the range); "
        "null when there is a profile."
    )

    model_config = {"populate_by_name": True}


class StageTotalOut(BaseModel):
    """One stage over every sampled execution in scope (the overview's stage menu)."""

    stage: str
    time_s: float
    share: float = Field(description="Of the sampled executions' response time.")


class StageQueryOut(BaseModel):
    """A query's time in one stage."""

    query_id: str
    fingerprint: str | None
    executions_sampled: int
    executions_total: int
    response_s: float
    time_s: float = Field(description="Time of the sampled executions in the stage.")
    share: float = Field(description="time_s over the query's sampled response time.")
    per_execution_s: float = Field(description="time_s per sampled execution.")


class StageQueriesOut(BaseModel):
    """Queries ranked by the share of their time spent in one stage."""

    from_: datetime = Field(alias="from")
    to: datetime
    stage: str | None
    stages: list[StageTotalOut] = Field(description="Every stage seen, worst first.")
    rows: list[StageQueryOut]

    model_config = {"populate_by_name": True}
