"""Fingerprint events and fold them into per-minute buckets, in memory.

A batch from one agent is for one instance and one source, so within a batch a bucket is
identified by (query_id, schema, user, host, minute).
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, TypeVar

from quanta.analysis.fingerprinter import Fingerprinter


class Event(Protocol):
    """What aggregation needs from an event, whichever source it came from."""

    @property
    def ts(self) -> datetime | None: ...
    @property
    def query(self) -> str: ...
    @property
    def query_time(self) -> float: ...
    @property
    def lock_time(self) -> float | None: ...
    @property
    def rows_sent(self) -> int | None: ...
    @property
    def rows_examined(self) -> int | None: ...
    @property
    def db(self) -> str | None: ...
    @property
    def user(self) -> str | None: ...
    @property
    def host(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class BucketKey:
    """The dimensions of one bucket; a missing dimension is ''."""

    query_id: str
    schema: str
    user: str
    host: str
    minute: datetime


@dataclass(slots=True)
class BucketMetrics:
    """Sums and extremes of one bucket; a metric no event carried stays None."""

    count: int = 0
    query_time_sum: float = 0.0
    query_time_min: float = float("inf")
    query_time_max: float = 0.0
    lock_time_sum: float | None = None
    rows_sent_sum: int | None = None
    rows_examined_sum: int | None = None

    def add(self, event: Event) -> None:
        """Fold one event into the bucket."""
        self.count += 1
        self.query_time_sum += event.query_time
        self.query_time_min = min(self.query_time_min, event.query_time)
        self.query_time_max = max(self.query_time_max, event.query_time)
        self.lock_time_sum = _add_optional(self.lock_time_sum, event.lock_time)
        self.rows_sent_sum = _add_optional(self.rows_sent_sum, event.rows_sent)
        self.rows_examined_sum = _add_optional(self.rows_examined_sum, event.rows_examined)


@dataclass(slots=True)
class QuerySeen:
    """A query class as one batch saw it."""

    fingerprint: str
    first_seen: datetime
    last_seen: datetime


@dataclass(slots=True)
class BatchDigest:
    """Everything a batch contributes to the metric store."""

    buckets: dict[BucketKey, BucketMetrics] = field(default_factory=dict)
    queries: dict[str, QuerySeen] = field(default_factory=dict)


def digest_events(
    events: Iterable[Event], fingerprinter: Fingerprinter | None = None
) -> BatchDigest:
    """Fingerprint each event and aggregate per query, dimensions and minute.

    Events without a timestamp cannot be placed in time and must be dated by the caller.

    Args:
        events: The batch's events.
        fingerprinter: Gives each statement's fingerprint and query_id, with the grouping
            rules in force; a plain one by default.

    Example:
        >>> digest = digest_events(events)
        >>> sum(m.count for m in digest.buckets.values()) == len(events)
        True
    """
    classify = fingerprinter or Fingerprinter()
    digest = BatchDigest()
    for event in events:
        if event.ts is None:
            raise ValueError("event without a timestamp")
        fp, qid = classify(event.query)
        seen = digest.queries.get(qid)
        if seen is None:
            digest.queries[qid] = QuerySeen(fp, event.ts, event.ts)
        else:
            seen.first_seen = min(seen.first_seen, event.ts)
            seen.last_seen = max(seen.last_seen, event.ts)
        key = BucketKey(
            query_id=qid,
            schema=event.db or "",
            user=event.user or "",
            host=event.host or "",
            minute=event.ts.replace(second=0, microsecond=0),
        )
        bucket = digest.buckets.get(key)
        if bucket is None:
            bucket = digest.buckets[key] = BucketMetrics()
        bucket.add(event)
    return digest


Number = TypeVar("Number", int, float)


def _add_optional(total: Number | None, value: Number | None) -> Number | None:
    if value is None:
        return total
    return value if total is None else total + value
