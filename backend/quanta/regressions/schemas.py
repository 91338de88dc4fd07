"""API shapes of regressions."""

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

RegressionStatusName = Literal["pending", "open", "resolved"]


class RegressionOut(BaseModel):
    """A query that got dearer per call than its baseline (or a new heavy query)."""

    id: int
    instance: str
    query_id: str
    fingerprint: str
    kind: Literal["regression", "new"] = Field(
        description="regression: dearer per call; new: no calls in the baseline, heavy now."
    )
    metric: str = Field(
        description="avg_latency or p95_latency (seconds), rows_examined_per_call; load "
        "(active sessions) for a new query."
    )
    before: float | None = Field(description="The metric in the baseline.")
    after: float | None = Field(description="The metric in the window that found it.")
    since: datetime = Field(description="Its first slow minute.")
    detected_at: datetime
    window_start: datetime = Field(description="The recent window that found it.")
    window_end: datetime
    baseline_start: datetime = Field(description="The baseline it was compared with.")
    baseline_end: datetime
    seasonal: bool = Field(description="Baseline of the same hours of day only.")
    load: float = Field(description="Average active sessions in the recent window.")
    load_share: float = Field(description="Share (0..1) of its instance's load then.")
    cause: str = Field(description="The likely cause, as announced.")
    status: RegressionStatusName = Field(
        description="pending: waiting for its EXPLAIN before the announcement; open; resolved."
    )
    announced_at: datetime | None
    resolved_at: datetime | None
    explain_run_id: int | None = Field(description="The EXPLAIN queued when it was found.")
    evidence: dict[str, Any] = Field(
        description="Every metric compared (before, after, ratio, p_value, slow minutes), the "
        "baseline's values, calls per minute, schema statements, annotations and plans seen."
    )
    resolution: dict[str, Any] | None = Field(
        description="The window that showed it back within its baseline, and the metric then."
    )


class RegressionsOut(BaseModel):
    """Regressions, newest first."""

    regressions: list[RegressionOut]
