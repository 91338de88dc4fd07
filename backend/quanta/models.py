"""Every ORM model, imported once so Base.metadata is complete (Alembic, tests)."""

from quanta.advice.models import Suggestion
from quanta.agents.models import AgentSource
from quanta.annotations.models import Annotation, AnnotationInstance, AnnotationTag
from quanta.audit.models import AuditEntry
from quanta.auth.models import ApiToken, User
from quanta.diagnostics.models import ExplainRun, ProfileRun
from quanta.indexplan.models import IndexPlan
from quanta.ingest.models import IngestBatch
from quanta.instances.models import Instance
from quanta.notify.models import Channel, Delivery, DeliveryAttempt
from quanta.queries.models import (
    ClassAdmission,
    InstanceTotalsDay,
    InstanceTotalsHour,
    InstanceTotalsMinute,
    QueryBucketDay,
    QueryBucketHour,
    QueryBucketMinute,
    QueryClass,
    QueryExample,
    QueryExampleMinute,
    QueryInstance,
    QueryTotalsDay,
    QueryTotalsHour,
    RollupPending,
    TagValue,
)
from quanta.regressions.models import Regression
from quanta.stages.models import (
    StageCollection,
    StageSamplesDay,
    StageSamplesHour,
    StageSamplesMinute,
    StageTimesDay,
    StageTimesHour,
    StageTimesMinute,
)
from quanta.statistics.models import (
    AnnouncedFinding,
    ObjectStatistics,
    StatisticsBucket,
    StatisticsCoverage,
)
from quanta.tables.models import TableSnapshot

__all__ = [
    "AgentSource",
    "Annotation",
    "AnnotationInstance",
    "AnnotationTag",
    "AnnouncedFinding",
    "ApiToken",
    "AuditEntry",
    "Channel",
    "ClassAdmission",
    "Delivery",
    "DeliveryAttempt",
    "ExplainRun",
    "IndexPlan",
    "IngestBatch",
    "Instance",
    "InstanceTotalsDay",
    "InstanceTotalsHour",
    "InstanceTotalsMinute",
    "ObjectStatistics",
    "ProfileRun",
    "QueryBucketDay",
    "QueryBucketHour",
    "QueryBucketMinute",
    "QueryClass",
    "QueryExample",
    "QueryExampleMinute",
    "QueryInstance",
    "QueryTotalsDay",
    "QueryTotalsHour",
    "Regression",
    "RollupPending",
    "StageCollection",
    "StageSamplesDay",
    "StageSamplesHour",
    "StageSamplesMinute",
    "StageTimesDay",
    "StageTimesHour",
    "StageTimesMinute",
    "StatisticsBucket",
    "StatisticsCoverage",
    "Suggestion",
    "TableSnapshot",
    "TagValue",
    "User",
]
