"""Use cases of the query catalog and metric store."""

import logging
import random
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from quanta.analysis.aggregate import (
    SUM_METRICS,
    BatchDigest,
    BucketKey,
    BucketMetrics,
    Example,
    ExamplePick,
    rollup,
    rollup_examples,
)
from quanta.analysis.fingerprint import fingerprint
from quanta.analysis.histogram import LatencyHistogram
from quanta.analysis.resolution import COARSE_TO_FINE, Resolution, Segment, floor_to, plan_reads
from quanta.analysis.statement import describe_statement
from quanta.analysis.timeseries import load_series, plan_slots
from quanta.core.config import Settings
from quanta.core.db import utcnow
from quanta.instances.models import ExamplePolicy
from quanta.queries import repository
from quanta.queries.models import BUCKET_KEY, BUCKET_MODELS, QueryExample
from quanta.queries.schemas import QueryRow, QueryTotals, SparkPoint, TopQueries

log = logging.getLogger(__name__)

SUM_COLUMNS = tuple(f"{name}_sum" for name in SUM_METRICS)
EXAMPLE_KEY = ("query_id", "resolution", "bucket_start", "instance_id")
# Writes go minute -> hour -> day: one fixed order across workers (no lock cycles).
WRITE_ORDER = (Resolution.MINUTE, Resolution.HOUR, Resolution.DAY)
# PostgreSQL partitions: the time each one spans, and how far ahead of now they are created.
PARTITION_AHEAD = {
    Resolution.MINUTE: timedelta(days=7),
    Resolution.HOUR: timedelta(days=62),
    Resolution.DAY: timedelta(days=366),
}


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


def retained_since(*, settings: Settings, now: datetime) -> dict[Resolution, datetime]:
    """Per resolution, the oldest bucket start that retention keeps at ``now``."""
    days = {
        Resolution.MINUTE: settings.retention_minute_days,
        Resolution.HOUR: settings.retention_hour_days,
        Resolution.DAY: settings.retention_day_days,
    }
    return {r: floor_to(now - timedelta(days=d), r) for r, d in days.items()}


def read_plan(*, settings: Settings, window: TimeWindow) -> list[Segment]:
    """The segments (resolution, range) that answer a window: the coarsest that fit."""
    return plan_reads(window.start, window.end, retained_since(settings=settings, now=utcnow()))


def record_digest(
    *,
    session: Session,
    instance_id: int,
    source: str,
    digest: BatchDigest,
    example_policy: str,
    example_max_chars: int,
    rng: random.Random | None = None,
) -> None:
    """Add a batch's aggregates to the catalog and to the buckets of every resolution.

    Minute, hour and day buckets are all written here, in the batch's transaction: no
    rollup job, no late-data window, and a batch counts at every resolution exactly once.
    """
    draw = rng or random.Random()
    _record_catalog(session=session, instance_id=instance_id, digest=digest)
    for resolution in WRITE_ORDER:
        buckets = (
            digest.buckets
            if resolution is Resolution.MINUTE
            else rollup(digest.buckets, resolution)
        )
        rows = [_bucket_row(key, m, instance_id, source) for key, m in buckets.items()]
        repository.merge_rows(
            session, BUCKET_MODELS[resolution], BUCKET_KEY, rows, _combine_buckets
        )
    if example_policy == ExamplePolicy.OFF:
        return
    masked = example_policy == ExamplePolicy.MASKED
    for resolution in WRITE_ORDER:
        picks = (
            digest.examples
            if resolution is Resolution.MINUTE
            else rollup_examples(digest.examples, resolution, draw)
        )
        example_rows = [
            _example_row(qid, start, pick, resolution, instance_id, masked, example_max_chars)
            for (qid, start), pick in picks.items()
        ]
        repository.merge_rows(
            session,
            QueryExample,
            EXAMPLE_KEY,
            example_rows,
            lambda stored, new: _combine_examples(stored, new, draw),
        )


def top_queries(
    *,
    session: Session,
    settings: Settings,
    window: TimeWindow,
    limit: int,
    offset: int,
    sparkline_points: int,
) -> TopQueries:
    """The heaviest queries of the window by total query time, with load and a sparkline each.

    Only each instance's primary source counts, so a query seen in both the slow log and
    performance_schema is counted once.
    """
    segments = read_plan(settings=settings, window=window)
    total_count, total_time = repository.totals(session, segments)
    total_time = total_time or 0.0
    rows = repository.top_queries(session, segments, limit=limit, offset=offset)
    slots = plan_slots(window.start, window.end, sparkline_points)
    points_by_query: dict[str, list[tuple[datetime, float]]] = defaultdict(list)
    for query_id, start, query_time in repository.query_time_by_bucket(
        session, segments, [r.query_id for r in rows]
    ):
        points_by_query[query_id].append((start, query_time))
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


def query_histogram(
    *,
    session: Session,
    settings: Settings,
    window: TimeWindow,
    query_id: str,
    instance_id: int | None = None,
) -> LatencyHistogram:
    """The latency histogram of a query over the window, merged from its stored buckets."""
    merged = LatencyHistogram()
    for data in repository.histograms(
        session, read_plan(settings=settings, window=window), query_id, instance_id
    ):
        merged.merge(LatencyHistogram.from_bytes(data))
    return merged


def apply_retention(*, session: Session, settings: Settings, now: datetime) -> dict[str, int]:
    """Delete buckets and examples older than their resolution's retention; drop partitions.

    Returns the rows deleted per resolution (dropped partitions not counted).
    """
    kept = retained_since(settings=settings, now=now)
    deleted: dict[str, int] = {}
    for resolution in COARSE_TO_FINE:
        model = BUCKET_MODELS[resolution]
        cutoff = kept[resolution]
        if repository.is_postgresql(session):
            for name in repository.partition_names(session, model.__tablename__):
                bounds = _partition_bounds(name, model.__tablename__, resolution)
                if bounds is not None and bounds[1] <= cutoff:
                    repository.drop_partition(session, name)
        count = repository.delete_buckets_before(session, model, cutoff)
        count += repository.delete_examples_before(session, resolution.value, cutoff)
        deleted[resolution.value] = count
    return deleted


def maintain_partitions(*, session: Session, settings: Settings, now: datetime) -> list[str]:
    """On PostgreSQL, create the time partitions from the current period to ahead of now.

    Returns the partitions created (or already there).
    Rows outside every partition go to the DEFAULT one, so ingest never depends on this.
    """
    if not repository.is_postgresql(session):
        return []
    created: list[str] = []
    for resolution in COARSE_TO_FINE:
        parent = BUCKET_MODELS[resolution].__tablename__
        repository.create_partition(session, parent, f"{parent}_default", None, None)
        # From the current period on: older rows, if any, are already in the DEFAULT partition.
        lower = _period_start(now, resolution)
        horizon = now + PARTITION_AHEAD[resolution]
        while lower < horizon:
            upper = _next_period(lower, resolution)
            name = _partition_name(parent, lower)
            if repository.create_partition(session, parent, name, lower, upper):
                created.append(name)
            else:
                log.warning("partition %s not created: the default partition has its rows", name)
            lower = upper
    return created


# --------------------------------------------------------------------------- helpers


def _record_catalog(*, session: Session, instance_id: int, digest: BatchDigest) -> None:
    known = repository.known_query_ids(session, list(digest.queries))
    classes = []
    for qid, seen in digest.queries.items():
        row: dict[str, Any] = {
            "query_id": qid,
            "fingerprint": seen.fingerprint,
            "first_seen": seen.first_seen,
            "last_seen": seen.last_seen,
            "statement_type": None,
            "tables": None,
        }
        if qid not in known:
            # Parsing is slow: once per new query class, never per event.
            info = describe_statement(seen.fingerprint, seen.sample)
            row["statement_type"] = info.statement_type
            row["tables"] = list(info.tables)
        classes.append(row)
    repository.upsert_query_classes(session, classes)
    repository.upsert_query_instances(
        session,
        [
            {
                "query_id": qid,
                "instance_id": instance_id,
                "first_seen": seen.first_seen,
                "last_seen": seen.last_seen,
            }
            for qid, seen in digest.queries.items()
        ],
    )


def _bucket_row(key: BucketKey, m: BucketMetrics, instance_id: int, source: str) -> dict[str, Any]:
    row: dict[str, Any] = {
        "instance_id": instance_id,
        "bucket_start": key.start,
        "query_id": key.query_id,
        "schema_name": key.schema,
        "user_name": key.user,
        "client_host": key.host,
        "source": source,
        "count": m.count,
        "query_time_sum": m.query_time_sum,
        "query_time_min": m.query_time_min,
        "query_time_max": m.query_time_max,
        "lock_time_max": m.lock_time_max,
        "histogram": None if m.histogram is None else m.histogram.to_bytes(),
    }
    sums = m.sums
    for name, column in zip(SUM_METRICS, SUM_COLUMNS, strict=True):
        row[column] = sums.get(name)
    return row


def _combine_buckets(stored: Mapping[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    out = dict(new)
    out["count"] = stored["count"] + new["count"]
    out["query_time_sum"] = stored["query_time_sum"] + new["query_time_sum"]
    out["query_time_min"] = _pick(stored["query_time_min"], new["query_time_min"], min)
    out["query_time_max"] = _pick(stored["query_time_max"], new["query_time_max"], max)
    out["lock_time_max"] = _pick(stored["lock_time_max"], new["lock_time_max"], max)
    for column in SUM_COLUMNS:
        out[column] = _pick(stored[column], new[column], _add)
    if stored["histogram"] is not None and new["histogram"] is not None:
        merged = LatencyHistogram.from_bytes(stored["histogram"])
        merged.merge(LatencyHistogram.from_bytes(new["histogram"]))
        out["histogram"] = merged.to_bytes()
    elif new["histogram"] is None:
        out["histogram"] = stored["histogram"]
    return out


def _example_row(
    qid: str,
    start: datetime,
    pick: ExamplePick,
    resolution: Resolution,
    instance_id: int,
    masked: bool,
    max_chars: int,
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "query_id": qid,
        "resolution": resolution.value,
        "bucket_start": start,
        "instance_id": instance_id,
        "seen": pick.seen,
    }
    for prefix, example in (("slowest", pick.slowest), ("sampled", pick.sampled)):
        row.update(_example_columns(prefix, example, masked, max_chars))
    return row


def _example_columns(prefix: str, example: Example, masked: bool, max_chars: int) -> dict[str, Any]:
    text = fingerprint(example.query) if masked and not example.masked else example.query
    return {
        f"{prefix}_text": text[:max_chars],
        f"{prefix}_truncated": example.truncated or len(text) > max_chars,
        f"{prefix}_literals": "masked" if masked or example.masked else "full",
        f"{prefix}_query_time": example.query_time,
        f"{prefix}_ts": example.ts,
        f"{prefix}_schema": example.schema[:64],
    }


_EXAMPLE_FIELDS = ("text", "truncated", "literals", "query_time", "ts", "schema")


def _combine_examples(
    stored: Mapping[str, Any], new: dict[str, Any], rng: random.Random
) -> dict[str, Any]:
    out = dict(new)
    if stored["slowest_query_time"] >= new["slowest_query_time"]:
        for name in _EXAMPLE_FIELDS:
            out[f"slowest_{name}"] = stored[f"slowest_{name}"]
    total = stored["seen"] + new["seen"]
    # Reservoir merge: the new sample replaces the stored one with probability new/total.
    if rng.random() * total >= new["seen"]:
        for name in _EXAMPLE_FIELDS:
            out[f"sampled_{name}"] = stored[f"sampled_{name}"]
    out["seen"] = total
    return out


def _add(a: Any, b: Any) -> Any:
    return a + b


def _pick(stored: Any, new: Any, both: Any) -> Any:
    # NULL means "the source does not give this metric": NULL and x give x, not NULL.
    if stored is None:
        return new
    if new is None:
        return stored
    return both(stored, new)


def _period_start(ts: datetime, resolution: Resolution) -> datetime:
    day = floor_to(ts, Resolution.DAY)
    if resolution is Resolution.MINUTE:
        return day
    if resolution is Resolution.HOUR:
        return day.replace(day=1)
    return day.replace(month=1, day=1)


def _next_period(start: datetime, resolution: Resolution) -> datetime:
    if resolution is Resolution.MINUTE:
        return start + timedelta(days=1)
    if resolution is Resolution.HOUR:
        return (start.replace(day=28) + timedelta(days=4)).replace(day=1)
    return start.replace(year=start.year + 1)


def _partition_name(parent: str, lower: datetime) -> str:
    return f"{parent}_p{lower:%Y%m%d}"


def _partition_bounds(
    name: str, parent: str, resolution: Resolution
) -> tuple[datetime, datetime] | None:
    suffix = name.removeprefix(f"{parent}_p")
    if suffix == name or not suffix.isdigit():
        return None  # the DEFAULT partition: never dropped, only deleted from
    lower = datetime.strptime(suffix, "%Y%m%d").replace(tzinfo=UTC)
    return lower, _next_period(lower, resolution)


def _as_utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
