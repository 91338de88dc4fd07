"""What other domains hand to notify: plain, frozen values with no ORM objects in them.

The advisor builds a `SuggestionNotice` per suggestion and calls
`quanta.notify.service.publish_suggestion`; annotations build an `ImpactNotice` and call
`publish_impact`; index plans build a `PlanNotice` per table and call `publish_plan`;
the weekly index review builds a `ReviewNotice` per instance and calls `publish_review`.
All are JSON-friendly so a delivery can keep its own copy.
"""

from dataclasses import asdict, dataclass, field
from typing import Literal

EventType = Literal[
    "new_suggestion",
    "annotation_impact",
    "index_plan",
    "regression",
    "regression_resolved",
    "suggestion_applied",
    "index_review",
]
NEW_SUGGESTION: EventType = "new_suggestion"
ANNOTATION_IMPACT: EventType = "annotation_impact"
# A table's workload index plan, once per plan signature. A channel that takes it gets one
# message per table instead of one per query (new_suggestion is then not sent to it).
INDEX_PLAN: EventType = "index_plan"
# Weekly: an instance's existing indexes that can go (duplicate, redundant, primary-key
# suffix, unused), listing only the findings not announced before. Opt-in per channel.
INDEX_REVIEW: EventType = "index_review"
# A query that got slower on its own (quanta.regressions), and the same one back to normal.
REGRESSION: EventType = "regression"
REGRESSION_RESOLVED: EventType = "regression_resolved"
# What an applied suggestion measurably did: sent where the suggestion was sent.
SUGGESTION_APPLIED: EventType = "suggestion_applied"
EVENT_TYPES: tuple[EventType, ...] = (
    NEW_SUGGESTION,
    ANNOTATION_IMPACT,
    INDEX_PLAN,
    REGRESSION,
    REGRESSION_RESOLVED,
    SUGGESTION_APPLIED,
    INDEX_REVIEW,
)


@dataclass(frozen=True, slots=True)
class SuggestionNotice:
    """One index suggestion worth telling a team about.

    `load_share` is the query's share of the instance's load, 0..1. `content_hash` changes
    whenever the suggestion's substance (DDL, reason, plans) changes: a channel receives the
    same suggestion again only when it does.
    """

    suggestion_id: int
    query_id: str
    fingerprint: str
    instance: str
    table: str
    load_share: float
    calls: int
    ddl: str
    reason: str
    content_hash: str
    plan_before: str | None = None
    plan_after: str | None = None
    # What a team needs to act (absent from notices stored before they existed):
    # the period load_share and calls were measured over (ISO 8601 instants),
    window_start: str | None = None
    window_end: str | None = None
    # the current cost per call, and what the index would save per call (an estimate),
    rows_examined_per_call: float | None = None
    rows_sent_per_call: float | None = None
    latency_avg: float | None = None
    # each table's size, one line per table ("shop.orders: 30,000 rows, 2.1 MB").
    table_sizes: list[str] = field(default_factory=list)
    # A message about something else than one query (a table's index plan) says so.
    title: str | None = None
    link_text: str | None = None

    def to_dict(self) -> dict[str, object]:
        """The notice as JSON primitives."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class ImpactNotice:
    """Regressions and improvements found after an annotation (deploy, schema change).

    Each one is a small dict, e.g. {"query_id": ..., "fingerprint": ..., "metric":
    "avg_latency", "before": 0.2, "after": 1.4, "change": 6.0}; builders show the keys they
    know and ignore the rest. ``window_seconds``: the length of each window compared.
    """

    annotation_id: int
    text: str
    instance_names: list[str] = field(default_factory=list)
    regressions: list[dict[str, object]] = field(default_factory=list)
    improvements: list[dict[str, object]] = field(default_factory=list)
    window_seconds: int | None = None

    def to_dict(self) -> dict[str, object]:
        """The notice as JSON primitives."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class PlanNotice:
    """A table's workload index plan: one ALTER TABLE serving several queries.

    `signature` changes exactly when the DDL does: a channel receives a plan once per
    signature. `load_share` is the share of the instance's load of the queries the plan's
    indexes serve; `queries` has one short line per served query, heaviest first; `summary`
    says what the plan saves and costs in a sentence or two.
    """

    plan_id: int
    instance_id: int
    instance: str
    table: str
    load_share: float
    calls: int
    ddl: str
    signature: str
    summary: str
    queries: list[str] = field(default_factory=list)
    plan_before: str | None = None
    plan_after: str | None = None
    window_start: str | None = None
    window_end: str | None = None
    table_sizes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        """The notice as JSON primitives."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class ReviewNotice:
    """An instance's index review findings not announced before.

    Each finding is a dict with the keys of the review's API (table, index, kind,
    covered_by, ddl, reason); `total` is how many findings the review has in all (new or
    not); `content_hash` names the instance and the new findings, so a channel never gets
    the same list twice.
    """

    instance_id: int
    instance: str
    findings: list[dict[str, object]] = field(default_factory=list)
    total: int = 0
    content_hash: str = ""

    def to_dict(self) -> dict[str, object]:
        """The notice as JSON primitives."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class RegressionNotice:
    """A query class that got slower on its own, or is back within its baseline.

    ``metric`` is the per-call figure that regressed (avg_latency, p95_latency in seconds,
    rows_examined_per_call; load in active sessions for a new heavy query); ``before`` its
    baseline, ``after`` its value in the window that found (or resolved) it; ``since`` when
    it started (ISO 8601); ``cause`` the likely cause, one or two sentences.
    ``load_share`` (the query's share of its instance's load) is for channel filters.
    """

    regression_id: int
    instance: str
    query_id: str
    fingerprint: str
    metric: str
    before: float | None
    after: float | None
    since: str
    cause: str
    load_share: float = 0.0
    kind: str = "regression"  # or "new": a new heavy query

    def to_dict(self) -> dict[str, object]:
        """The notice as JSON primitives."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class OutcomeNotice:
    """What an applied index suggestion did to its query, measured per call: the same
    windows before and after the index appeared."""

    suggestion_id: int
    instance: str
    query_id: str
    fingerprint: str
    table: str
    ddl: str
    applied_at: str
    window_seconds: int
    metrics: list[dict[str, object]] = field(default_factory=list)  # name, before, after, change

    def to_dict(self) -> dict[str, object]:
        """The notice as JSON primitives."""
        return asdict(self)
