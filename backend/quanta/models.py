"""Every ORM model, imported once so Base.metadata is complete (Alembic, tests)."""

from quanta.auth.models import ApiToken
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

__all__ = [
    "ApiToken",
    "IngestBatch",
    "Instance",
    "QueryBucketDay",
    "QueryBucketHour",
    "QueryBucketMinute",
    "QueryClass",
    "QueryExample",
    "QueryInstance",
]
