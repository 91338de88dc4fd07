"""Statements on the query catalog, the metric buckets and the examples."""

from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Row,
    Select,
    Table,
    and_,
    case,
    delete,
    func,
    literal,
    select,
    text,
    tuple_,
    union_all,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from quanta.analysis.resolution import Segment
from quanta.instances.models import Instance
from quanta.queries.models import (
    BUCKET_MODELS,
    QueryClass,
    QueryExample,
    QueryInstance,
)

# Rows per INSERT/SELECT statement: keeps every statement under SQLite's 32766 parameters.
ROWS_PER_STATEMENT = 500
# Buckets from a source that is not the instance's primary one are stored, not totalled; an
# instance whose primary source is not set yet counts its slow log.
DEFAULT_PRIMARY_SOURCE = "slowlog"

Combine = Callable[[Mapping[Any, Any], dict[str, Any]], dict[str, Any]]


def _insert_for(session: Session) -> Any:
    # Both dialects speak INSERT ... ON CONFLICT with the same API.
    return postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert


def _chunks(rows: Sequence[Any], size: int = ROWS_PER_STATEMENT) -> Iterator[Sequence[Any]]:
    for start in range(0, len(rows), size):
        yield rows[start : start + size]


def known_query_ids(session: Session, query_ids: Sequence[str]) -> set[str]:
    """The query ids already in the catalog."""
    found: set[str] = set()
    for chunk in _chunks(sorted(query_ids)):
        found.update(
            session.scalars(select(QueryClass.query_id).where(QueryClass.query_id.in_(chunk)))
        )
    return found


def upsert_query_classes(session: Session, rows: Sequence[dict[str, Any]]) -> None:
    """Insert new query classes; widen first/last seen of known ones (in key order)."""
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
    session.connection().execute(stmt, sorted(rows, key=lambda r: r["query_id"]))


def upsert_query_instances(session: Session, rows: Sequence[dict[str, Any]]) -> None:
    """Record where query classes run: first and last seen per instance."""
    if not rows:
        return
    stmt = _insert_for(session)(QueryInstance)
    stmt = stmt.on_conflict_do_update(
        index_elements=["query_id", "instance_id"],
        set_={
            "first_seen": _least(QueryInstance.first_seen, stmt.excluded.first_seen),
            "last_seen": _greatest(QueryInstance.last_seen, stmt.excluded.last_seen),
        },
    )
    ordered = sorted(rows, key=lambda r: (r["query_id"], r["instance_id"]))
    session.connection().execute(stmt, ordered)


def merge_rows(
    session: Session,
    model: Any,
    key: Sequence[str],
    rows: Sequence[dict[str, Any]],
    combine: Combine,
) -> None:
    """Add ``rows`` to ``model``'s table, merging each into the stored row with the same key.

    Histograms cannot be merged by SQL, so: insert the rows that are new (ON CONFLICT DO
    NOTHING; they are complete), lock the others (SELECT ... FOR UPDATE on PostgreSQL; SQLite
    serialises writers), merge them in Python with ``combine(stored, new)`` and UPDATE them.
    Every step goes in key order, so concurrent workers take row locks in the same order and
    cannot deadlock; a concurrent insert of the same key waits for the other transaction and
    then finds the row, so no increment is lost.
    """
    if not rows:
        return
    table: Table = model.__table__
    key_columns = [table.c[name] for name in key]

    def key_of(row: Mapping[Any, Any]) -> tuple[Any, ...]:
        return tuple(row[name] for name in key)

    ordered = sorted(rows, key=key_of)
    # executemany: SQLAlchemy sends the rows as multi-row INSERTs in order ("insertmanyvalues")
    # from one cached statement, within each database's parameter limit.
    insert_new = (
        _insert_for(session)(table)
        .on_conflict_do_nothing(index_elements=list(key))
        .returning(*key_columns)
    )
    inserted = {tuple(r) for r in session.connection().execute(insert_new, ordered)}
    existing = [row for row in ordered if key_of(row) not in inserted]
    if not existing:
        return
    updates: list[dict[str, Any]] = []
    for chunk in _chunks(existing):
        by_key = {key_of(row): row for row in chunk}
        stmt = (
            select(table)
            .where(tuple_(*key_columns).in_(list(by_key)))
            .order_by(*key_columns)
            .with_for_update()
        )
        for stored in session.execute(stmt).mappings():
            updates.append(combine(stored, by_key[key_of(stored)]))
    session.execute(update(model), updates)


def bucket_rows_for_union(segments: Sequence[Segment], *columns: str) -> Select[Any]:
    """Buckets of every segment (its resolution's table, its time range), as one union."""
    selects = []
    for segment in segments:
        table: Table = BUCKET_MODELS[segment.resolution].__table__  # type: ignore[assignment]
        selects.append(
            select(*(table.c[c] for c in columns)).where(
                table.c.bucket_start >= segment.start, table.c.bucket_start < segment.end
            )
        )
    if not selects:
        raise ValueError("no segment to read")
    union = union_all(*selects).subquery("buckets")
    return select(union)


def _primary_buckets(segments: Sequence[Segment], *columns: str) -> Any:
    # Only each instance's primary source counts, so a query both sources saw counts once.
    needed = tuple(dict.fromkeys(("instance_id", "source", *columns)))
    buckets = bucket_rows_for_union(segments, *needed).subquery("b")
    primary = func.coalesce(Instance.primary_source, literal(DEFAULT_PRIMARY_SOURCE))
    return buckets, and_(Instance.id == buckets.c.instance_id, buckets.c.source == primary)


def totals(session: Session, segments: Sequence[Segment]) -> Row[int | None, float | None]:
    """Event count and query time over every query in the segments (primary sources only)."""
    buckets, on = _primary_buckets(segments, "count", "query_time_sum")
    stmt = select(func.sum(buckets.c.count), func.sum(buckets.c.query_time_sum)).join_from(
        buckets, Instance, on
    )
    return session.execute(stmt).one()


def top_queries(
    session: Session, segments: Sequence[Segment], *, limit: int, offset: int
) -> Sequence[Row[str, str, int, float]]:
    """The queries with the most total query time in the segments, heaviest first."""
    buckets, on = _primary_buckets(segments, "query_id", "count", "query_time_sum")
    query_time = func.sum(buckets.c.query_time_sum).label("query_time")
    per_query = (
        select(buckets.c.query_id, func.sum(buckets.c.count).label("count"), query_time)
        .join_from(buckets, Instance, on)
        .group_by(buckets.c.query_id)
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


def query_time_by_bucket(
    session: Session, segments: Sequence[Segment], query_ids: Sequence[str]
) -> Sequence[Row[str, datetime, float]]:
    """Query time per query and bucket start in the segments, for the given queries."""
    if not query_ids:
        return []
    buckets, on = _primary_buckets(segments, "query_id", "bucket_start", "query_time_sum")
    stmt = (
        select(buckets.c.query_id, buckets.c.bucket_start, func.sum(buckets.c.query_time_sum))
        .join_from(buckets, Instance, on)
        .where(buckets.c.query_id.in_(query_ids))
        .group_by(buckets.c.query_id, buckets.c.bucket_start)
    )
    return session.execute(stmt).all()


def histograms(
    session: Session, segments: Sequence[Segment], query_id: str, instance_id: int | None
) -> Sequence[bytes]:
    """The stored histograms of a query in the segments (primary sources only)."""
    buckets, on = _primary_buckets(segments, "query_id", "histogram")
    stmt = (
        select(buckets.c.histogram)
        .join_from(buckets, Instance, on)
        .where(buckets.c.query_id == query_id, buckets.c.histogram.is_not(None))
    )
    if instance_id is not None:
        stmt = stmt.where(buckets.c.instance_id == instance_id)
    return list(session.scalars(stmt))


def delete_buckets_before(session: Session, model: Any, cutoff: datetime) -> int:
    """Delete a resolution's buckets older than ``cutoff``; returns how many."""
    result = session.execute(delete(model).where(model.bucket_start < cutoff))
    return int(result.rowcount)  # type: ignore[attr-defined]


def delete_examples_before(session: Session, resolution: str, cutoff: datetime) -> int:
    """Delete a resolution's examples older than ``cutoff``; returns how many."""
    result = session.execute(
        delete(QueryExample).where(
            QueryExample.resolution == resolution, QueryExample.bucket_start < cutoff
        )
    )
    return int(result.rowcount)  # type: ignore[attr-defined]


def _least(current: Any, new: Any) -> ColumnElement[Any]:
    return case((new < current, new), else_=current)


def _greatest(current: Any, new: Any) -> ColumnElement[Any]:
    return case((new > current, new), else_=current)


# --------------------------------------------------------------------------- partitions
# PostgreSQL only: each bucket table is partitioned by range of bucket_start, with a DEFAULT
# partition for anything outside the created ranges (old imports, clock skew).


def is_postgresql(session: Session) -> bool:
    """Whether the store is PostgreSQL (the only one with partitions)."""
    return session.get_bind().dialect.name == "postgresql"


def partition_names(session: Session, parent: str) -> list[str]:
    """The partitions of ``parent``."""
    stmt = text(
        "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
        "JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = :parent ORDER BY c.relname"
    )
    return list(session.scalars(stmt, {"parent": parent}))


def create_partition(
    session: Session, parent: str, name: str, lower: datetime | None, upper: datetime | None
) -> bool:
    """Create a range partition (both bounds None: the DEFAULT one); False if it cannot be.

    Creation fails when the DEFAULT partition already holds rows of that range: those rows
    then stay where they are, which is correct, only less tidy.
    """
    if lower is None or upper is None:
        bounds = "DEFAULT"
    else:
        bounds = f"FOR VALUES FROM ('{_pg_timestamp(lower)}') TO ('{_pg_timestamp(upper)}')"
    try:
        with session.begin_nested():
            session.execute(
                text(f'CREATE TABLE IF NOT EXISTS "{name}" PARTITION OF "{parent}" {bounds}')
            )
    except DBAPIError:
        return False
    return True


def drop_partition(session: Session, name: str) -> None:
    """Drop one partition and its rows."""
    session.execute(text(f'DROP TABLE IF EXISTS "{name}"'))


def _pg_timestamp(value: datetime) -> str:
    # Bucket starts are stored as naive UTC; names and bounds are generated, never user input.
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
