"""Use cases of the query catalog and metric store."""

from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy.orm import Session

from quanta.analysis.aggregate import BatchDigest
from quanta.analysis.timeseries import load_series, plan_slots
from quanta.core.db import utcnow
from quanta.queries import repository
from quanta.queries.schemas import QueryRow, QueryTotals, SparkPoint, TopQueries


class InvalidRange(ValueError):
    """A time range that cannot be read (end before start)."""


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """A half-open UTC range [start, end)."""

    start: datetime
    end: datetime

    @property
    def seconds(self) -> float:
        """Length of the window in seconds."""
        return (self.end - self.start).total_seconds()


def resolve_window(
    *, start: datetime | None, end: datetime | None, default_hours: int
) -> TimeWindow:
    """The window to read: given bounds (naive ones are UTC), else the last `default_hours`."""
    end = _as_utc(end) if end else utcnow()
    start = _as_utc(start) if start else end - timedelta(hours=default_hours)
    if start >= end:
        raise InvalidRange(f"'from' ({start.isoformat()}) must be before 'to' ({end.isoformat()}).")
    return TimeWindow(start=start, end=end)


def record_digest(*, session: Session, instance_id: int, source: str, digest: BatchDigest) -> None:
    """Add a batch's aggregates to the catalog and the minute buckets."""
    repository.upsert_query_classes(
        session,
        [
            {
                "query_id": qid,
                "fingerprint": seen.fingerprint,
                "first_seen": seen.first_seen,
                "last_seen": seen.last_seen,
            }
            for qid, seen in digest.queries.items()
        ],
    )
    repository.upsert_buckets(
        session,
        [
            {
                "bucket_start": key.minute,
                "instance_id": instance_id,
                "query_id": key.query_id,
                "schema_name": key.schema,
                "user_name": key.user,
                "client_host": key.host,
                "source": source,
                "count": m.count,
                "query_time_sum": m.query_time_sum,
                "query_time_min": m.query_time_min,
                "query_time_max": m.query_time_max,
                "lock_time_sum": m.lock_time_sum,
                "rows_sent_sum": m.rows_sent_sum,
                "rows_examined_sum": m.rows_examined_sum,
            }
            for key, m in digest.buckets.items()
        ],
    )


def top_queries(
    *, session: Session, window: TimeWindow, limit: int, offset: int, sparkline_points: int
) -> TopQueries:
    """The heaviest queries of the window by total query time, with load and a sparkline each."""
    total_count, total_time = repository.totals(session, window.start, window.end)
    total_time = total_time or 0.0
    rows = repository.top_queries(session, window.start, window.end, limit=limit, offset=offset)
    slots = plan_slots(window.start, window.end, sparkline_points)
    points_by_query: dict[str, list[tuple[datetime, float]]] = defaultdict(list)
    for query_id, minute, query_time in repository.query_time_by_minute(
        session, window.start, window.end, [r.query_id for r in rows]
    ):
        points_by_query[query_id].append((minute, query_time))
    return TopQueries(
        from_=window.start,
        to=window.end,
        seconds=window.seconds,
        totals=QueryTotals(
            count=total_count or 0, query_time=total_time, load=total_time / window.seconds
        ),
        rows=[
            QueryRow(
                query_id=r.query_id,
                fingerprint=r.fingerprint,
                count=r.count,
                query_time=r.query_time,
                load=r.query_time / window.seconds,
                share=r.query_time / total_time if total_time else 0.0,
                sparkline=[
                    SparkPoint(ts=ts, load=load)
                    for ts, load in load_series(points_by_query[r.query_id], slots)
                ],
            )
            for r in rows
        ],
    )


def _as_utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
