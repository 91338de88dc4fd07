"""Statements on object statistics, their buckets, coverage and announced findings."""

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import and_, delete, func, or_, select, tuple_, update
from sqlalchemy.orm import Session

from quanta.analysis.resolution import Resolution, Segment
from quanta.core.upsert import Combine, chunks, merge_rows
from quanta.statistics.counters import COUNTS, GAUGE_COLUMNS, SECONDS
from quanta.statistics.models import (
    BUCKET_KEY,
    STATISTICS_KEY,
    AnnouncedFinding,
    ObjectStatistics,
    StatisticsBucket,
    StatisticsCoverage,
)

# Summed in a read: every counter; the gauges' greatest.
_SUMMED = (*COUNTS, *SECONDS)
_GREATEST = tuple(GAUGE_COLUMNS.values())
OBJECT_COLUMNS = ("schema_name", "object_name", "index_name")


def add(session: Session, rows: Sequence[dict[str, Any]], combine: Combine) -> None:
    """Add rows of deltas to the stored sums (locked merge, see quanta.core.upsert)."""
    merge_rows(session, ObjectStatistics, STATISTICS_KEY, rows, combine)


def add_buckets(session: Session, rows: Sequence[dict[str, Any]]) -> None:
    """Add rows of deltas to their buckets: counters add up, gauges keep the greatest."""
    merge_rows(session, StatisticsBucket, BUCKET_KEY, rows, combine_bucket, metrics=True)


def combine_bucket(stored: Mapping[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """A bucket row merged with a new one (what quanta.core.upsert's metric merge does in
    SQL on PostgreSQL): sums, the greatest of ``_max`` columns, NULL and x give x."""
    merged = dict(new)
    for name in _SUMMED:
        mine, theirs = stored[name], new[name]
        merged[name] = theirs if mine is None else mine if theirs is None else mine + theirs
    for name in _GREATEST:
        values = [v for v in (stored[name], new[name]) if v is not None]
        merged[name] = max(values) if values else None
    return merged


def of_kind(session: Session, instance_id: int, kind: str) -> Sequence[ObjectStatistics]:
    """Every stored row of one kind for an instance."""
    return session.scalars(
        select(ObjectStatistics).where(
            ObjectStatistics.instance_id == instance_id, ObjectStatistics.kind == kind
        )
    ).all()


def not_requested_since(
    session: Session,
    instance_id: int,
    tables: Sequence[tuple[str, str]],
    since: datetime,
    limit: int,
) -> list[tuple[str, str]]:
    """Of these (schema, table) pairs with statistics, at most ``limit`` whose snapshot was
    never asked for or not since ``since``."""
    found: list[tuple[str, str]] = []
    for chunk in chunks(tables):
        rows = session.execute(
            select(ObjectStatistics.schema_name, ObjectStatistics.object_name)
            .where(
                ObjectStatistics.instance_id == instance_id,
                ObjectStatistics.kind == "table",
                ObjectStatistics.index_name == "",
                tuple_(ObjectStatistics.schema_name, ObjectStatistics.object_name).in_(chunk),
                or_(
                    ObjectStatistics.snapshot_requested_at.is_(None),
                    ObjectStatistics.snapshot_requested_at < since,
                ),
            )
            .limit(limit - len(found))
        )
        found += [(schema, table) for schema, table in rows]
        if len(found) >= limit:
            break
    return found


def mark_snapshot_requested(
    session: Session, instance_id: int, tables: Sequence[tuple[str, str]], at: datetime
) -> None:
    """Note that these tables' snapshots were asked for."""
    for schema, table in tables:
        session.execute(
            update(ObjectStatistics)
            .where(
                ObjectStatistics.instance_id == instance_id,
                ObjectStatistics.kind == "table",
                ObjectStatistics.schema_name == schema,
                ObjectStatistics.object_name == table,
                ObjectStatistics.index_name == "",
            )
            .values(snapshot_requested_at=at)
        )


def sums(
    session: Session, instance_id: int, kind: str, segments: Sequence[Segment]
) -> list[dict[str, Any]]:
    """Per object of one kind, its counters summed over the buckets the segments read
    (``schema_name``, ``object_name``, ``index_name`` and every counter; NULL: never given)."""
    if not segments:
        return []
    bucket = StatisticsBucket.__table__.c
    in_segments = or_(
        *(
            and_(
                bucket.resolution == segment.resolution.value,
                bucket.bucket_start >= segment.start,
                bucket.bucket_start < segment.end,
            )
            for segment in segments
        )
    )
    keys = [bucket[name] for name in OBJECT_COLUMNS]
    statement = (
        select(
            *keys,
            *(func.sum(bucket[name]).label(name) for name in _SUMMED),
            *(func.max(bucket[name]).label(name) for name in _GREATEST),
        )
        .where(bucket.instance_id == instance_id, bucket.kind == kind, in_segments)
        .group_by(*keys)
    )
    return [dict(row) for row in session.execute(statement).mappings()]


def delete_buckets_before(session: Session, resolution: Resolution, before: datetime) -> int:
    """Delete one resolution's buckets that start before ``before``; how many."""
    result = session.execute(
        delete(StatisticsBucket).where(
            StatisticsBucket.resolution == resolution.value, StatisticsBucket.bucket_start < before
        )
    )
    return int(result.rowcount)  # type: ignore[attr-defined]


def coverage(
    session: Session, instance_id: int, *, lock: bool = False
) -> StatisticsCoverage | None:
    """The instance's coverage row (locked for update with ``lock``), if any."""
    return session.get(StatisticsCoverage, instance_id, with_for_update=lock)


def announced(session: Session, instance_id: int) -> dict[tuple[str, str, str], AnnouncedFinding]:
    """The findings already posted for an instance, by (table, index, kind)."""
    rows = session.scalars(
        select(AnnouncedFinding).where(AnnouncedFinding.instance_id == instance_id)
    )
    return {(r.table_name, r.index_name, r.kind): r for r in rows}
