"""Every ORM model, imported once so Base.metadata is complete (Alembic, tests)."""

from quanta.advice.models import Suggestion
from quanta.annotations.models import Annotation, AnnotationInstance, AnnotationTag
from quanta.auth.models import ApiToken
from quanta.diagnostics.models import ExplainRun, ProfileRun
from quanta.ingest.models import IngestBatch
from quanta.instances.models import Instance
from quanta.queries.models import (
    QueryBucketDay,
    QueryBucketHour,
    QueryBucketMinute,
    QueryClass,
    QueryExample,
    QueryInstance,
)
from quanta.tables.models import TableSnapshot

__all__ = [
    "Annotation",
    "AnnotationInstance",
    "AnnotationTag",
    "ApiToken",
    "ExplainRun",
    "IngestBatch",
    "Instance",
    "ProfileRun",
    "QueryBucketDay",
    "QueryBucketHour",
    "QueryBucketMinute",
    "QueryClass",
    "QueryExample",
    "QueryInstance",
    "Suggestion",
    "TableSnapshot",
]
