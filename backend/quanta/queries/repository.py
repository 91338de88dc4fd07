"""Statements on the query catalog and the metric buckets."""

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Row, case, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from quanta.queries.models import BUCKET_KEY, QueryBucket, QueryClass


def _insert_for(session: Session) -> Any:
    # Both dialects speak INSERT ... ON CONFLICT DO UPDATE with the same API.
    return postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert


def upsert_query_classes(session: Session, rows: Sequence[dict[str, Any]]) -> None:
    """Insert new query classes; widen first/last seen of known ones."""
    if not rows:
        return
    stmt = _insert_for(session)(QueryClass)
    stmt = stmt.on_conflict_do_update(
        index_elements=["query_id"],
        set_={
            "first_seen": _least(QueryClass.first_seen, stmt.excluded.first_seen),
            "last_seen": _greatest(QueryClass.last_seen, stmt.excluded.last_seen),
        },
    )
    session.execute(stmt, sorted(rows, key=lambda r: r["query_id"]))


def upsert_buckets(session: Session, rows: Sequence[dict[str, Any]]) -> None:
    """Add bucket metrics to existing buckets, inserting the missing ones.

    Rows are written in key order so concurrent workers lock rows in the same order.
    """
    if not rows:
        return
    stmt = _insert_for(session)(QueryBucket)
    new = stmt.excluded
    stmt = stmt.on_conflict_do_update(
        index_elements=list(BUCKET_KEY),
        set_={
            "count": QueryBucket.count + new.count,
            "query_time_sum": QueryBucket.query_time_sum + new.query_time_sum,
            "query_time_min": _least(QueryBucket.query_time_min, new.query_time_min),
            "query_time_max": _greatest(QueryBucket.query_time_max, new.query_time_max),
            "lock_time_sum": _add_nullable(QueryBucket.lock_time_sum, new.lock_time_sum),
            "rows_sent_sum": _add_nullable(QueryBucket.rows_sent_sum, new.rows_sent_sum),
            "rows_examined_sum": _add_nullable(
                QueryBucket.rows_examined_sum, new.rows_examined_sum
            ),
        },
    )
    session.execute(stmt, sorted(rows, key=lambda r: tuple(r[k] for k in BUCKET_KEY)))


def totals(session: Session, start: datetime, end: datetime) -> Row[int | None, float | None]:
    """Event count and query time over every query in the range."""
    stmt = select(func.sum(QueryBucket.count), func.sum(QueryBucket.query_time_sum)).where(
        QueryBucket.bucket_start >= start, QueryBucket.bucket_start < end
    )
    return session.execute(stmt).one()


def top_queries(
    session: Session, start: datetime, end: datetime, *, limit: int, offset: int
) -> Sequence[Row[str, str, int, float]]:
    """The queries with the most total query time in the range, heaviest first."""
    query_time = func.sum(QueryBucket.query_time_sum).label("query_time")
    per_query = (
        select(
            QueryBucket.query_id,
            func.sum(QueryBucket.count).label("count"),
            query_time,
        )
        .where(QueryBucket.bucket_start >= start, QueryBucket.bucket_start < end)
        .group_by(QueryBucket.query_id)
        .subquery()
    )
    stmt = (
        select(
            per_query.c.query_id, QueryClass.fingerprint, per_query.c.count, per_query.c.query_time
        )
        .join(QueryClass, QueryClass.query_id == per_query.c.query_id)
        .order_by(per_query.c.query_time.desc(), per_query.c.query_id)
        .limit(limit)
        .offset(offset)
    )
    return session.execute(stmt).all()


def query_time_by_minute(
    session: Session, start: datetime, end: datetime, query_ids: Sequence[str]
) -> Sequence[Row[str, datetime, float]]:
    """Query time per query and minute in the range, for the given queries."""
    stmt = (
        select(
            QueryBucket.query_id,
            QueryBucket.bucket_start,
            func.sum(QueryBucket.query_time_sum),
        )
        .where(
            QueryBucket.bucket_start >= start,
            QueryBucket.bucket_start < end,
            QueryBucket.query_id.in_(query_ids),
        )
        .group_by(QueryBucket.query_id, QueryBucket.bucket_start)
    )
    return session.execute(stmt).all()


def _least(current: Any, new: Any) -> Any:
    return case((new < current, new), else_=current)


def _greatest(current: Any, new: Any) -> Any:
    return case((new > current, new), else_=current)


def _add_nullable(current: Any, new: Any) -> Any:
    # NULL means "the source does not give this metric": NULL + x must stay x, not NULL.
    return case(
        (current.is_(None), new),
        (new.is_(None), current),
        else_=current + new,
    )
