"""Statements on the query catalog, the metric buckets and the examples."""

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any
from typing import cast as type_cast

from sqlalchemy import (
    BigInteger,
    BindParameter,
    ColumnElement,
    Executable,
    Result,
    Row,
    Select,
    Subquery,
    Table,
    Text,
    and_,
    bindparam,
    cast,
    delete,
    event,
    false,
    func,
    literal,
    or_,
    select,
    union_all,
    update,
)
from sqlalchemy.orm import ORMExecuteState, Session

from quanta.analysis.metrics import SUM_METRICS
from quanta.analysis.resolution import Resolution, Segment, floor_to
from quanta.analysis.sources import DEFAULT_PRIMARY_SOURCE
from quanta.analysis.tags import tag_pair
from quanta.core.db import floor_day, floor_hour
from quanta.core.upsert import chunks, insert_for, insert_or_widen, key_getter
from quanta.instances.models import Instance
from quanta.queries.models import (
    BUCKET_MODELS,
    OWN_CLASSES,
    TOTALS_MODELS,
    UNDIVIDED_MODELS,
    ClassAdmission,
    InstanceTotalsDay,
    MetricModel,
    QueryBucketHour,
    QueryBucketMinute,
    QueryClass,
    QueryExample,
    QueryExampleMinute,
    QueryInstance,
    RollupPending,
    TagValue,
)
from quanta.queries.rollup import rolled_models
from quanta.queries.window import DIMENSION_COLUMNS, BucketFilter, by_key

# Buckets from a source that is not the instance's primary one are stored, not totalled; an
# instance whose primary source is not set yet counts DEFAULT_PRIMARY_SOURCE (its slow log).
# Query ids per IN list: bounded statements whatever the number of queries.
IN_CHUNK = 500


def known_query_ids(session: Session, query_ids: Sequence[str]) -> set[str]:
    """The query ids already in the catalog."""
    found: set[str] = set()
    for chunk in chunks(sorted(query_ids)):
        found.update(
            session.scalars(select(QueryClass.query_id).where(QueryClass.query_id.in_(chunk)))
        )
    return found


def insert_query_classes(session: Session, rows: Sequence[dict[str, Any]]) -> None:
    """Insert query classes that are not stored yet (in key order); leave known ones be."""
    _insert_new(session, QueryClass, ["query_id"], rows)


def _insert_new(
    session: Session, model: Any, key: list[str], rows: Sequence[dict[str, Any]]
) -> None:
    if rows:
        stmt = insert_for(session)(model).on_conflict_do_nothing(index_elements=key)
        session.connection().execute(stmt, sorted(rows, key=key_getter(key)))


def upsert_query_classes(session: Session, rows: Sequence[dict[str, Any]]) -> None:
    """Insert new query classes; widen first/last seen of known ones (in key order)."""
    insert_or_widen(
        session, QueryClass, ["query_id"], rows, least=["first_seen"], greatest=["last_seen"]
    )


def upsert_query_instances(session: Session, rows: Sequence[dict[str, Any]]) -> None:
    """Record where query classes run: first and last seen per instance."""
    key = ["query_id", "instance_id"]
    insert_or_widen(session, QueryInstance, key, rows, least=["first_seen"], greatest=["last_seen"])


def bucket_rows_for_union(
    segments: Sequence[Segment],
    *columns: str,
    where: Callable[[Table], list[ColumnElement[bool]]] | None = None,
    models: Mapping[Resolution, MetricModel] = BUCKET_MODELS,
    bounds: Callable[[int], tuple[Any, Any, Any]] | None = None,
) -> Select[Any]:
    """Rows of every segment (its resolution's table, its time range), as one union.

    ``where`` gives more conditions on each segment's table: they sit inside every branch of
    the union, where the database can use the table's indexes for them. ``models`` are the
    tables by resolution: the buckets, or the per-instance totals. A table rolled up from the
    minutes (quanta.queries.rollup) is read with the minute rows not rolled up yet, each
    dated at the start of its hour or day: rolled-up and pending rows add up to every minute
    stored, at every moment. ``bounds(n)`` gives the n-th segment's start, end and the start
    of its first hour as SQL (bound parameters of a statement built once, see
    `_ReadShape`); without it, the segments' own times are used.
    """
    selects = []
    rolled = rolled_models()
    for n, segment in enumerate(segments):
        model = models[segment.resolution]
        table = type_cast(Table, model.__table__)  # mapped to a Table
        start, end, first_hour = (
            bounds(n)
            if bounds is not None
            else (segment.start, segment.end, floor_to(segment.start, Resolution.HOUR))
        )
        selects.append(
            select(*(table.c[c] for c in columns)).where(
                table.c.bucket_start >= start,
                table.c.bucket_start < end,
                *(where(table) if where else ()),
            )
        )
        if model in rolled:
            selects.append(
                _pending_minutes(segment.resolution, start, end, first_hour, columns, where)
            )
    if not selects:
        raise ValueError("no segment to read")
    union = union_all(*selects).subquery("buckets")
    return select(union)


def _pending_minutes(
    resolution: Resolution,
    start: Any,
    end: Any,
    first_hour: Any,
    columns: Sequence[str],
    where: Callable[[Table], list[ColumnElement[bool]]] | None,
) -> Select[Any]:
    """The minute rows of a segment of ``resolution`` (``[start, end)``, its first hour
    starting at ``first_hour``) whose roll-up is pending, as rows of its resolution.

    Read from the pending entries (a handful, indexed by their hour) to their rows by
    ``rollup_id``: never a scan of the segment's minutes.
    """
    minute = type_cast(Table, QueryBucketMinute.__table__)
    pending = type_cast(Table, RollupPending.__table__)
    floor = _FLOORS[resolution]
    selected = [
        floor(minute.c.bucket_start).label(c) if c == "bucket_start" else minute.c[c]
        for c in columns
    ]
    return (
        select(*selected)
        .select_from(pending.join(minute, minute.c.rollup_id == pending.c.id))
        .where(
            pending.c.hour_start >= first_hour,
            pending.c.hour_start < end,
            minute.c.bucket_start >= start,
            minute.c.bucket_start < end,
            *(where(minute) if where else ()),
        )
    )


def _same_minute(column: Any) -> Any:
    return column


_FLOORS: dict[Resolution, Callable[[Any], Any]] = {
    Resolution.MINUTE: _same_minute,
    Resolution.HOUR: floor_hour,
    Resolution.DAY: floor_day,
}


# --------------------------------------------------------------------------- filtered reads
# A read of the store is one statement per request over a union of a few segments' tables,
# each branch with every column and filter: building it (and its column collections) took
# more time than PostgreSQL took to run it (bench/api_latency.py, #40). So the statement is
# built once per shape (which segments' resolutions, which columns, which filters are set)
# with bound parameters, kept, and run with the request's values.

_MODEL_SETS: dict[str, Mapping[Resolution, MetricModel]] = {
    "buckets": BUCKET_MODELS,
    "undivided": UNDIVIDED_MODELS,
    "totals": TOTALS_MODELS,
}
# Statements kept: a shape per view, range kind and filter combination (a few dozen).
_SHAPES_KEPT = 512


@dataclass(frozen=True, slots=True)
class _ReadShape:
    """What a filtered read's statement depends on, apart from the values."""

    resolutions: tuple[Resolution, ...]
    columns: tuple[str, ...]
    models: str  # a key of _MODEL_SETS
    sources: int  # distinct primary sources among the instances
    instance_names: bool = False
    instance_ids: bool = False
    dimensions: tuple[str, ...] = ()  # the BucketFilter attributes that are set
    query_id: bool = False
    search: bool = False
    exclude_own: bool = False
    # Per tag key (and label key), how many values it may take: values of one key are
    # alternatives, keys must all match.
    tag_values: tuple[int, ...] = ()
    labels: tuple[tuple[str, int], ...] = ()


@dataclass(slots=True)
class _Read:
    """A filtered read: its rows as a subquery ``b``, and the values of its parameters."""

    b: Subquery
    params: dict[str, Any]

    def run(self, session: Session, stmt: Executable) -> Result[*tuple[Any, ...]]:
        """Run a statement over ``b`` with the read's values.

        On the session's connection: plain rows need none of the ORM's result processing
        (a tenth of the top list's time went to it, over the page's 20,000 histograms).
        Pending ORM changes are flushed first, as ``session.execute`` would.
        """
        if session.autoflush:
            session.flush()
        return session.connection().execute(stmt, self.params)


def _primary_sources(session: Session) -> list[tuple[str, list[int]]]:
    """Each primary source and its instances (an instance whose primary source is not set
    counts its slow log).

    Read once per transaction (a request's reads share it: a round trip each was a quarter
    of the detail view's time) and again after the session wrote anything (see
    `_forget_primary_sources`)."""
    transaction = session.get_transaction()
    known = session.info.get(_PRIMARY_SOURCES_KEY)
    if known is not None and known[0] is transaction:
        return type_cast(list[tuple[str, list[int]]], known[1])
    by_source: dict[str, list[int]] = {}
    primary = func.coalesce(Instance.primary_source, literal(DEFAULT_PRIMARY_SOURCE))
    for instance_id, source in session.execute(select(Instance.id, primary).order_by(Instance.id)):
        by_source.setdefault(source, []).append(instance_id)
    sources = sorted(by_source.items())
    # The transaction is read after the statement: it began with it if none was open.
    session.info[_PRIMARY_SOURCES_KEY] = (session.get_transaction(), sources)
    return sources


_PRIMARY_SOURCES_KEY = "quanta.queries.primary_sources"


def _forget_primary_sources(session: Session, *_args: Any) -> None:
    session.info.pop(_PRIMARY_SOURCES_KEY, None)


def _forget_after_writes(state: ORMExecuteState) -> None:
    if not state.is_select:
        _forget_primary_sources(state.session)


# Any write through the session may change an instance or add one.
event.listen(Session, "after_flush", _forget_primary_sources)
event.listen(Session, "do_orm_execute", _forget_after_writes)


def _read(
    session: Session,
    segments: Sequence[Segment],
    columns: Sequence[str],
    *,
    models: str = "buckets",
    flt: BucketFilter | None = None,
    instance_ids: Sequence[int] | None = None,
    instance_names: Sequence[str] = (),
) -> _Read:
    """The primary-source buckets of the segments that pass the filters, as a subquery with
    ``columns``: the statement of its shape (built once), and this read's values.

    Only each instance's primary source counts, so that a query both sources saw counts
    once: the condition (source and instances, per primary source) sits in every branch
    of the union next to the other filters, as plain values the planner can estimate.
    """
    sources = _primary_sources(session)
    params: dict[str, Any] = {}
    for n, segment in enumerate(segments):
        params[f"s{n}_start"] = segment.start
        params[f"s{n}_end"] = segment.end
        params[f"s{n}_hour"] = floor_to(segment.start, Resolution.HOUR)
    for n, (source, ids) in enumerate(sources):
        params[f"source{n}"] = source
        params[f"source{n}_ids"] = ids
    dimensions: tuple[str, ...] = ()
    tag_values: tuple[int, ...] = ()
    labels: tuple[tuple[str, int], ...] = ()
    names = tuple(instance_names)
    if flt is not None:
        tag_values = _tag_params(flt.tags, params)
        labels = _label_params(flt.labels, params)
        names = flt.instances
        dimensions = tuple(a for a in DIMENSION_COLUMNS if getattr(flt, a) is not None)
        for attr in dimensions:
            params[f"f_{attr}"] = getattr(flt, attr)
        if flt.query_id is not None:
            params["f_query_id"] = flt.query_id
        if flt.search:
            term = flt.search.strip()
            escaped = _like_escaped(term.lower())
            params["f_search_pattern"] = f"%{escaped}%"
            params["f_search_id"] = term.upper()
    if names:
        params["f_instance_names"] = list(names)
    if instance_ids is not None:
        params["f_instance_ids"] = list(instance_ids)
    shape = _ReadShape(
        resolutions=tuple(s.resolution for s in segments),
        columns=tuple(columns),
        models=models,
        sources=len(sources),
        instance_names=bool(names),
        instance_ids=instance_ids is not None,
        dimensions=dimensions,
        query_id=flt is not None and flt.query_id is not None,
        search=flt is not None and bool(flt.search),
        exclude_own=flt is not None and not flt.include_own and flt.query_id is None,
        tag_values=tag_values,
        labels=labels,
    )
    return _Read(_statement_of(shape), params)


def _like_escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _tag_params(pairs: tuple[tuple[str, str], ...], params: dict[str, Any]) -> tuple[int, ...]:
    """The values of a tag filter as parameters: per key ``k`` and value ``v``, the canonical
    pair and the LIKE patterns of it first, last or inside a bucket's tags (see
    `_tagged`); returns how many values each key has."""
    counts = []
    for k, (key, values) in enumerate(by_key(pairs).items()):
        for v, value in enumerate(values):
            pair = tag_pair(key, value)
            escaped = _like_escaped(pair)
            params[f"tag{k}_{v}"] = pair
            params[f"tag{k}_{v}_first"] = f"{escaped},%"
            params[f"tag{k}_{v}_last"] = f"%,{escaped}"
            params[f"tag{k}_{v}_inside"] = f"%,{escaped},%"
        counts.append(len(values))
    return tuple(counts)


def _label_params(
    pairs: tuple[tuple[str, str], ...], params: dict[str, Any]
) -> tuple[tuple[str, int], ...]:
    """The values of a label filter as parameters (``label{k}_{v}``); returns each key with
    how many values it has (the keys are part of the statement: JSON paths)."""
    shape = []
    for k, (key, values) in enumerate(by_key(pairs).items()):
        for v, value in enumerate(values):
            params[f"label{k}_{v}"] = value
        shape.append((key, len(values)))
    return tuple(shape)


def _tagged(table: Table, tag_values: tuple[int, ...], param: "_Params") -> list[Any]:
    """Conditions that a bucket's canonical tags (sorted ``key=value`` pairs joined by
    commas) hold one of the values of each key."""
    where = []
    for k, count in enumerate(tag_values):
        column = table.c.tags
        alternatives = []
        for v in range(count):
            name = f"tag{k}_{v}"
            alternatives += [
                column == param(name),
                column.like(param(f"{name}_first"), escape=_LIKE_ESCAPE),
                column.like(param(f"{name}_last"), escape=_LIKE_ESCAPE),
                column.like(param(f"{name}_inside"), escape=_LIKE_ESCAPE),
            ]
        where.append(or_(*alternatives))
    return where


def _labelled(labels: tuple[tuple[str, int], ...], param: "_Params") -> Select[Any]:
    """The ids of the instances whose labels hold one of the values of each key."""
    conditions = [
        or_(*(Instance.labels[key].as_string() == param(f"label{k}_{v}") for v in range(count)))
        for k, (key, count) in enumerate(labels)
    ]
    return select(Instance.id).where(*conditions)


@lru_cache(maxsize=_SHAPES_KEPT)
def _statement_of(shape: _ReadShape) -> Subquery:
    """The subquery ``b`` of a read shape, its parameters bound by name (see `_read`)."""
    param = _Params()

    def conditions(table: Table) -> list[ColumnElement[bool]]:
        where: list[ColumnElement[bool]] = []
        if shape.instance_names:
            named = select(Instance.id).where(
                Instance.name.in_(param("f_instance_names", expanding=True))
            )
            where.append(table.c.instance_id.in_(named))
        if shape.instance_ids:
            where.append(table.c.instance_id.in_(param("f_instance_ids", expanding=True)))
        for attr in shape.dimensions:
            where.append(table.c[DIMENSION_COLUMNS[attr]] == param(f"f_{attr}"))
        where += _tagged(table, shape.tag_values, param)
        if shape.labels:
            where.append(table.c.instance_id.in_(_labelled(shape.labels, param)))
        if shape.query_id:
            where.append(table.c.query_id == param("f_query_id"))
        if shape.search:
            where.append(table.c.query_id.in_(_search(param)))
        if shape.exclude_own:  # one query asked for by id is shown
            where.append(table.c.query_id.not_in(own_query_ids()))
        primary = [
            and_(
                table.c.source == param(f"source{n}"),
                table.c.instance_id.in_(param(f"source{n}_ids", expanding=True)),
            )
            for n in range(shape.sources)
        ]
        where.append(or_(*primary) if primary else false())
        return where

    segments = [Segment(resolution, _NO_TIME, _NO_TIME) for resolution in shape.resolutions]
    b = bucket_rows_for_union(
        segments,
        *shape.columns,
        where=conditions,
        models=_MODEL_SETS[shape.models],
        bounds=lambda n: (param(f"s{n}_start"), param(f"s{n}_end"), param(f"s{n}_hour")),
    ).subquery("b")
    b.c  # noqa: B018 - the column collections are built now, before threads share them
    return b


_NO_TIME = datetime.min


class _Params:
    """Bound parameters by name, one object per name (a name may appear in every branch)."""

    def __init__(self) -> None:
        self._made: dict[str, BindParameter[Any]] = {}

    def __call__(self, name: str, *, expanding: bool = False) -> BindParameter[Any]:
        made = self._made.get(name)
        if made is None:
            made = self._made[name] = bindparam(name, expanding=expanding)
        return made


def primary_bucket_rows(
    session: Session, segments: Sequence[Segment], instance_ids: Sequence[int], *columns: str
) -> Iterator[Any]:
    """``columns`` of the primary-source buckets of the instances in the segments, one row
    per stored bucket (the minutes still pending their roll-up as rows of their hour or
    day): the caller sums them."""
    if not instance_ids or not segments:
        return iter(())
    read = _read(session, segments, columns, instance_ids=instance_ids)
    return iter(read.run(session, select(read.b)))


# --------------------------------------------------------------------------- analytics reads
# Every read below sums primary-source buckets of the segments that pass a BucketFilter.
# Filters reach SQL as bound parameters only.

_LIKE_ESCAPE = "\\"


def _sum(column: Any) -> Any:
    # PostgreSQL sums BIGINT as NUMERIC (Decimal in Python): cast back to an integer.
    total = func.sum(column)
    return cast(total, BigInteger) if isinstance(column.type, BigInteger) else total


def _aggregates(b: Any, sums: Sequence[str] = SUM_METRICS) -> list[Any]:
    # NULL sums stay NULL: a metric no source gives is not reported as 0.
    columns = [
        _sum(b.c.count).label("calls"),
        func.sum(b.c.query_time_sum).label("query_time"),
        func.min(b.c.query_time_min).label("query_time_min"),
        func.max(b.c.query_time_max).label("query_time_max"),
        func.max(b.c.lock_time_max).label("lock_time_max"),
    ]
    columns += [_sum(b.c[f"{name}_sum"]).label(name) for name in sums]
    return columns


# The summed metrics a row of the top list shows (more are summed only to sort by them).
LIST_SUMS = ("rows_examined", "rows_sent")
# What a row of the top list flags (done at least once): read with its page's buckets
# (`page_buckets`), not summed for every query of the range (four more aggregates over a
# 30-day range's 66,000 rows cost its per-query statement a fifth of its time).
LIST_FLAGS = ("full_scan", "filesort", "tmp_disk_tables", "no_index_used")


_AGGREGATED = (
    "count",
    "query_time_sum",
    "query_time_min",
    "query_time_max",
    "lock_time_max",
    *(f"{name}_sum" for name in SUM_METRICS),
)


def _filtered(
    session: Session, segments: Sequence[Segment], flt: BucketFilter, *columns: str
) -> _Read:
    """The filtered buckets (of primary sources) as a read (see `_read`).

    The filters go inside each segment's SELECT (see `bucket_rows_for_union`), so an
    instance or a query is read through the bucket tables' indexes. When neither the filter
    nor the columns involve a schema, user, host or tags, hours and days are read from the
    query totals, which have one row where the buckets have one per combination of those.
    """
    divided = {*DIMENSION_COLUMNS.values(), "tags"}
    by_dimension = flt.has_dimension or not divided.isdisjoint(columns)
    return _read(
        session, segments, columns, models="buckets" if by_dimension else "undivided", flt=flt
    )


def schemas_of_instance(session: Session, instance_id: int, since: datetime) -> list[str]:
    """The schemas (databases) the instance's statements ran in since ``since``, sorted:
    from the hour buckets, and the minutes (whose hours may not be rolled up yet)."""
    names: set[str] = set()
    for model in (QueryBucketHour, QueryBucketMinute):
        table = model.__table__
        names.update(
            session.scalars(
                select(table.c.schema_name)
                .where(
                    table.c.instance_id == instance_id,
                    table.c.bucket_start >= since,
                    table.c.schema_name != "",
                )
                .distinct()
            )
        )
    return sorted(names)


def has_source_data(session: Session, instance_id: int, source: str) -> bool:
    """Whether any data of ``source`` is stored for the instance: totals of a retained day,
    or minutes (whose day may not be rolled up yet)."""
    for model in (InstanceTotalsDay, QueryBucketMinute):
        found = select(model.instance_id).where(
            model.instance_id == instance_id, model.source == source
        )
        if session.scalar(found.limit(1)) is not None:
            return True
    return False


def own_query_ids() -> Select[Any]:
    """The query ids of Quanta's own statements (EXPLAIN, probes, polls: see
    quanta.analysis.own), as a subquery: the one definition top lists, impact views and
    advice leave out by default."""
    return select(QueryClass.query_id).where(OWN_CLASSES)


def own_among(session: Session, query_ids: Collection[str]) -> set[str]:
    """The ids among ``query_ids`` that are Quanta's own statements."""
    own = own_query_ids().where(QueryClass.query_id.in_(sorted(query_ids)))
    return set(session.scalars(own))


def mark_runners(session: Session, *, own: Sequence[str], app: Sequence[str]) -> None:
    """Record that these query classes were run by a monitoring account (``own``) or by
    anyone else (``app``); a flag once set stays."""
    for ids, flag in ((own, QueryClass.own_seen), (app, QueryClass.app_seen)):
        if ids:
            session.execute(
                update(QueryClass)
                .where(QueryClass.query_id.in_(sorted(ids)), flag.is_(False))
                .values({flag: True})
            )


def _search(param: Callable[[str], BindParameter[Any]]) -> Select[Any]:
    """Query ids whose fingerprint or tables contain the search term (``f_search_pattern``,
    lowered and escaped for LIKE), or whose id it is (``f_search_id``): see `_read`."""
    pattern = param("f_search_pattern")
    return select(QueryClass.query_id).where(
        or_(
            func.lower(QueryClass.fingerprint).like(pattern, escape=_LIKE_ESCAPE),
            func.lower(cast(QueryClass.tables, Text)).like(pattern, escape=_LIKE_ESCAPE),
            QueryClass.query_id == param("f_search_id"),
        )
    )


def aggregate(
    session: Session,
    segments: Sequence[Segment],
    flt: BucketFilter,
    group_by: Sequence[str] = (),
    *,
    count_queries: bool = False,
) -> Sequence[Any]:
    """Summed metrics of the filtered buckets, grouped by bucket columns (none: one row).

    Each row has the ``group_by`` columns, then calls (the summed count), query_time,
    query_time_min/max, lock_time_max, one sum per ``SUM_METRICS`` name, and with
    ``count_queries`` (a costly DISTINCT) ``queries``, the number of distinct query ids.
    """
    read = _filtered(session, segments, flt, "query_id", *group_by, *_AGGREGATED)
    return read.run(session, _aggregate_statement(read.b, tuple(group_by), count_queries)).all()


@lru_cache(maxsize=_SHAPES_KEPT)
def _aggregate_statement(buckets: Subquery, group_by: tuple[str, ...], count_queries: bool) -> Any:
    """`aggregate`'s statement over a read's subquery (kept with it: see `_statement_of`)."""
    keys = [buckets.c[name] for name in group_by]
    stmt = select(*keys, *_aggregates(buckets))
    if count_queries:
        stmt = stmt.add_columns(func.count(func.distinct(buckets.c.query_id)).label("queries"))
    if keys:
        stmt = stmt.group_by(*keys)
    return stmt


def _sort_expressions(q: Any) -> dict[str, Any]:
    per_call = {
        "query_time_avg": q.c.query_time / func.nullif(q.c.calls, 0),
        "rows_examined_per_row_sent": q.c.rows_examined * 1.0 / func.nullif(q.c.rows_sent, 0),
    }
    return {
        "load": q.c.query_time,
        "query_time": q.c.query_time,
        "count": q.c.calls,
        "qps": q.c.calls,
        "query_time_max": q.c.query_time_max,
        "query_time_min": q.c.query_time_min,
        "lock_time_max": q.c.lock_time_max,
        **per_call,
        **{name: q.c[name] for name in SUM_METRICS if name in q.c},
    }


# The keys the SQL read can order by (percentiles are ordered in Python by the service).
SQL_SORT_KEYS: tuple[str, ...] = (
    "load",
    "query_time",
    "count",
    "qps",
    "query_time_avg",
    "query_time_max",
    "query_time_min",
    "lock_time_max",
    "rows_examined_per_row_sent",
    *SUM_METRICS,
)


def instance_totals(session: Session, segments: Sequence[Segment], instances: Sequence[str]) -> Any:
    """Summed metrics of every query of the named instances (none: all) in the segments.

    The row has the columns of an ungrouped `aggregate` row (without ``queries``), read from
    the per-instance totals: a few rows per period instead of every query's buckets.
    """
    read = _read(session, segments, _AGGREGATED, models="totals", instance_names=instances)
    return read.run(session, _aggregate_statement(read.b, (), False)).one()


def per_query(
    session: Session,
    segments: Sequence[Segment],
    flt: BucketFilter,
    *,
    sort: str,
    descending: bool,
    limit: int | None,
    offset: int,
) -> Sequence[Any]:
    """Summed metrics per query, ordered by ``sort`` (NULLs last).

    The sums are those of ``LIST_SUMS`` and of the sort key. Ties are broken by query_id,
    so pages are stable. Every row also carries the totals over
    all matching queries: total_calls, total_query_time, total_rows_examined,
    total_rows_sent and total_queries.
    """
    # Only the metrics the list shows and the sort key: a narrower scan and aggregate.
    sums = [*LIST_SUMS, *([sort] if sort in SUM_METRICS and sort not in LIST_SUMS else [])]
    columns = ("count", "query_time_sum", "query_time_min", "query_time_max", "lock_time_max")
    read = _filtered(
        session, segments, flt, "query_id", *columns, *(f"{name}_sum" for name in sums)
    )
    buckets = read.b
    grouped = (
        select(buckets.c.query_id, *_aggregates(buckets, sums))
        .group_by(buckets.c.query_id)
        .subquery("per_query")
    )
    key = _sort_expressions(grouped)[sort]
    ordered = (key.desc() if descending else key.asc()).nulls_last()
    # The totals over every matching query ride along as window sums (computed before the
    # LIMIT), which saves a second scan of the buckets.
    window_totals = [
        cast(func.sum(grouped.c.calls).over(), BigInteger).label("total_calls"),
        func.sum(grouped.c.query_time).over().label("total_query_time"),
        cast(func.sum(grouped.c.rows_examined).over(), BigInteger).label("total_rows_examined"),
        cast(func.sum(grouped.c.rows_sent).over(), BigInteger).label("total_rows_sent"),
        func.count().over().label("total_queries"),
    ]
    stmt = select(grouped, *window_totals).order_by(ordered, grouped.c.query_id).offset(offset)
    if limit is not None:
        stmt = stmt.limit(limit)
    return read.run(session, stmt).all()


def query_class(session: Session, query_id: str) -> QueryClass | None:
    """The catalog entry of a query, if any."""
    return session.get(QueryClass, query_id)


def query_classes(session: Session, query_ids: Sequence[str]) -> dict[str, QueryClass]:
    """The catalog entries of these queries, by query_id."""
    found = session.scalars(select(QueryClass).where(QueryClass.query_id.in_(query_ids)))
    return {query.query_id: query for query in found}


def load_by_bucket(
    session: Session,
    segments: Sequence[Segment],
    flt: BucketFilter,
    values: Sequence[Any],
    key: str = "query_id",
) -> Sequence[Row[Any, datetime, float]]:
    """Query time per bucket start of the filtered buckets, for these values of bucket
    column ``key`` (the page's query ids, or the values of a dimension)."""
    if not values:
        return []
    read = _filtered(session, segments, flt, key, "bucket_start", "query_time_sum")
    buckets = read.b
    stmt = (
        select(buckets.c[key], buckets.c.bucket_start, func.sum(buckets.c.query_time_sum))
        .where(buckets.c[key].in_(values))
        .group_by(buckets.c[key], buckets.c.bucket_start)
    )
    return read.run(session, stmt).all()


def page_buckets(
    session: Session, segments: Sequence[Segment], flt: BucketFilter, query_ids: Sequence[str]
) -> Sequence[Row[Any, datetime, float, bytes | None, *tuple[int | None, ...]]]:
    """The filtered buckets of a page's queries, with what the top list draws from them:
    query_id, bucket_start, query_time_sum, histogram and the `LIST_FLAGS` sums (one read
    for the sparklines, the percentiles and the flags)."""
    if not query_ids:
        return []
    flags = [f"{name}_sum" for name in LIST_FLAGS]
    read = _filtered(
        session, segments, flt, "query_id", "bucket_start", "query_time_sum", "histogram", *flags
    )
    buckets = read.b
    stmt = select(
        buckets.c.query_id,
        buckets.c.bucket_start,
        buckets.c.query_time_sum,
        buckets.c.histogram,
        *(buckets.c[name] for name in flags),
    ).where(buckets.c.query_id.in_(query_ids))
    return read.run(session, stmt).all()


def histograms_by(
    session: Session,
    segments: Sequence[Segment],
    flt: BucketFilter,
    key: str,
    query_ids: Sequence[str] | None = None,
) -> Iterator[tuple[Any, bytes]]:
    """(value of bucket column ``key``, stored histogram) of the filtered buckets."""
    if query_ids is not None and not query_ids:
        return iter(())
    read = _filtered(session, segments, flt, "query_id", key, "histogram")
    buckets = read.b
    stmt = select(buckets.c[key], buckets.c.histogram).where(buckets.c.histogram.is_not(None))
    if query_ids is not None:
        stmt = stmt.where(buckets.c.query_id.in_(query_ids))
    return ((value, data) for value, data in read.run(session, stmt))


def query_tag_strings(
    session: Session, query_ids: Collection[str], instance_ids: Collection[int], since: datetime
) -> set[tuple[str, int, str]]:
    """The distinct (query_id, instance_id, tags) of tagged buckets of these queries and
    instances since ``since``: hours, and the minutes (whose hour may not be rolled up)."""
    found: set[tuple[str, int, str]] = set()
    for model in (QueryBucketHour, QueryBucketMinute):
        table = model.__table__
        stmt = (
            select(table.c.query_id, table.c.instance_id, table.c.tags)
            .where(
                table.c.query_id.in_(query_ids),
                table.c.instance_id.in_(instance_ids),
                table.c.bucket_start >= since,
                table.c.tags != "",
            )
            .distinct()
        )
        found.update((row.query_id, row.instance_id, row.tags) for row in session.execute(stmt))
    return found


def examples(
    session: Session, segments: Sequence[Segment], query_id: str, instances: Sequence[str]
) -> list[Any]:
    """The stored examples of a query in the segments (each at its segment's resolution):
    rows of (example, instance name)."""
    found: list[Any] = []
    for segment in segments:
        minute = segment.resolution is Resolution.MINUTE
        model: Any = QueryExampleMinute if minute else QueryExample
        stmt = (
            select(model, Instance.name.label("instance"))
            .join(Instance, Instance.id == model.instance_id)
            .where(
                model.query_id == query_id,
                model.bucket_start >= segment.start,
                model.bucket_start < segment.end,
            )
        )
        if not minute:
            stmt = stmt.where(QueryExample.resolution == segment.resolution.value)
        if instances:
            stmt = stmt.where(Instance.name.in_(instances))
        found.extend(session.execute(stmt).all())
    return found


def latest_example_rows(session: Session, query_id: str, instance_id: int, limit: int) -> list[Any]:
    """The newest ``limit`` example rows of a query on an instance, of the minute table and
    of the rolled-up one each (unordered between the two)."""
    rows: list[Any] = []
    for model in (QueryExampleMinute, QueryExample):
        rows += session.scalars(
            select(model)
            .where(model.query_id == query_id, model.instance_id == instance_id)
            .order_by(model.bucket_start.desc())
            .limit(limit)
        )
    return rows


def delete_buckets_before(session: Session, model: MetricModel, cutoff: datetime) -> int:
    """Delete a resolution's buckets older than ``cutoff``; returns how many. Minute rows
    whose roll-up is pending stay until it is done."""
    stmt = delete(model).where(model.bucket_start < cutoff)
    if model is QueryBucketMinute:
        stmt = stmt.where(QueryBucketMinute.rollup_id.not_in(select(RollupPending.id)))
    result = session.execute(stmt)
    return int(result.rowcount)  # type: ignore[attr-defined]


def delete_examples_before(session: Session, resolution: Resolution, cutoff: datetime) -> int:
    """Delete a resolution's examples older than ``cutoff``; returns how many (minute ones
    whose roll-up is pending stay)."""
    if resolution is Resolution.MINUTE:
        stmt = delete(QueryExampleMinute).where(
            QueryExampleMinute.bucket_start < cutoff,
            QueryExampleMinute.rollup_id.not_in(select(RollupPending.id)),
        )
    else:
        stmt = delete(QueryExample).where(
            QueryExample.resolution == resolution.value, QueryExample.bucket_start < cutoff
        )
    result = session.execute(stmt)
    return int(result.rowcount)  # type: ignore[attr-defined]


def pending_between(session: Session, start: datetime, end: datetime) -> bool:
    """Whether a roll-up is pending for an hour in ``[start, end)``."""
    stmt = select(RollupPending.id).where(
        RollupPending.hour_start >= start, RollupPending.hour_start < end
    )
    return session.scalar(stmt.limit(1)) is not None


def schema_statements_between(
    session: Session, *, instance: str, types: Sequence[str], since: datetime, until: datetime
) -> list[tuple[str, str, list[str], datetime]]:
    """(query_id, fingerprint, tables, last seen) of the statement classes of ``types`` run on
    ``instance`` and last seen in ``[since, until]``."""
    stmt = (
        select(
            QueryClass.query_id, QueryClass.fingerprint, QueryClass.tables, QueryInstance.last_seen
        )
        .join(QueryInstance, QueryInstance.query_id == QueryClass.query_id)
        .join(Instance, Instance.id == QueryInstance.instance_id)
        .where(
            Instance.name == instance,
            QueryClass.statement_type.in_(types),
            QueryInstance.last_seen >= since,
            QueryInstance.last_seen <= until,
        )
        .order_by(QueryInstance.last_seen)
    )
    return [(qid, fp, list(tables or []), seen) for qid, fp, tables, seen in session.execute(stmt)]


# --------------------------------------------------------------------------- class caps


def instance_query_ids(session: Session, instance_id: int, query_ids: Sequence[str]) -> set[str]:
    """Those of ``query_ids`` the instance already has."""
    found: set[str] = set()
    for chunk in chunks(sorted(query_ids)):
        found.update(
            session.scalars(
                select(QueryInstance.query_id).where(
                    QueryInstance.instance_id == instance_id, QueryInstance.query_id.in_(chunk)
                )
            )
        )
    return found


def count_instance_classes(session: Session, instance_id: int | None = None) -> dict[int, int]:
    """Query classes per instance (of one instance when ``instance_id`` is given)."""
    stmt = select(QueryInstance.instance_id, func.count()).group_by(QueryInstance.instance_id)
    if instance_id is not None:
        stmt = stmt.where(QueryInstance.instance_id == instance_id)
    return {int(instance): int(count) for instance, count in session.execute(stmt)}


def admissions_since(session: Session, since: datetime) -> list[ClassAdmission]:
    """The class admission rows of every instance from ``since`` on, oldest first."""
    stmt = (
        select(ClassAdmission)
        .where(ClassAdmission.hour_start >= since)
        .order_by(ClassAdmission.instance_id, ClassAdmission.hour_start)
    )
    return list(session.scalars(stmt))


def admitted_in_hour(session: Session, instance_id: int, hour_start: datetime) -> int:
    """The classes the instance added in the hour starting at ``hour_start``."""
    stmt = select(ClassAdmission.admitted).where(
        ClassAdmission.instance_id == instance_id, ClassAdmission.hour_start == hour_start
    )
    return int(session.scalar(stmt) or 0)


def add_admissions(
    session: Session,
    instance_id: int,
    hour_start: datetime,
    *,
    admitted: int,
    folded: int,
    folded_events: int,
) -> None:
    """Add to the instance's counts of the hour (the row is created on first use)."""
    row = {
        "instance_id": instance_id,
        "hour_start": hour_start,
        "admitted": admitted,
        "folded": folded,
        "folded_events": folded_events,
    }
    stmt = insert_for(session)(ClassAdmission)
    stmt = stmt.on_conflict_do_update(
        index_elements=["instance_id", "hour_start"],
        set_={
            name: getattr(ClassAdmission, name) + getattr(stmt.excluded, name)
            for name in ("admitted", "folded", "folded_events")
        },
    )
    session.connection().execute(stmt, [row])


def delete_admissions_before(session: Session, instance_id: int, cutoff: datetime) -> int:
    """Delete the instance's admission counts older than ``cutoff`` (its rows only: workers
    of other instances never wait on them)."""
    result = session.execute(
        delete(ClassAdmission).where(
            ClassAdmission.instance_id == instance_id, ClassAdmission.hour_start < cutoff
        )
    )
    return int(result.rowcount)  # type: ignore[attr-defined]


def slot_rows(
    session: Session, segments: Sequence[Segment], flt: BucketFilter, query_ids: Sequence[str]
) -> Iterator[Any]:
    """(query_id, bucket_start, count, query_time_sum, rows_examined_sum, histogram) of the
    filtered buckets of ``query_ids``: a row per bucket and dimension, summed by the caller."""
    columns = ("bucket_start", "count", "query_time_sum", "rows_examined_sum", "histogram")
    for chunk in chunks(list(query_ids), IN_CHUNK):
        read = _filtered(session, segments, flt, "query_id", *columns)
        stmt = select(read.b).where(read.b.c.query_id.in_(chunk))
        yield from read.run(session, stmt)


def latest_minute(session: Session, instance_id: int) -> datetime | None:
    """The newest minute the instance's primary source reported.

    Read from the minute buckets ingest appends: the instance's minute totals are rolled up
    from them by beat, after their hour has ended."""
    t = QueryBucketMinute
    primary = select(func.coalesce(Instance.primary_source, literal(DEFAULT_PRIMARY_SOURCE))).where(
        Instance.id == instance_id
    )
    stmt = select(func.max(t.bucket_start)).where(
        t.instance_id == instance_id, t.source == primary.scalar_subquery()
    )
    return session.scalar(stmt)


def first_seen_among(
    session: Session, query_ids: Sequence[str], instance_ids: Sequence[int]
) -> dict[str, datetime]:
    """When each of ``query_ids`` was first seen on any of ``instance_ids``."""
    out: dict[str, datetime] = {}
    for chunk in chunks(list(query_ids), IN_CHUNK):
        stmt = (
            select(QueryInstance.query_id, func.min(QueryInstance.first_seen))
            .where(QueryInstance.query_id.in_(chunk), QueryInstance.instance_id.in_(instance_ids))
            .group_by(QueryInstance.query_id)
        )
        out.update((query_id, seen) for query_id, seen in session.execute(stmt))
    return out


def instance_first_seen(session: Session, instance_id: int) -> datetime | None:
    """When the instance's first statement was seen."""
    stmt = select(func.min(QueryInstance.first_seen)).where(
        QueryInstance.instance_id == instance_id
    )
    return session.scalar(stmt)


def tag_values(
    session: Session, instance_ids: Collection[int] | None = None
) -> dict[int, dict[str, set[str]]]:
    """The tag values stored per instance and key (of these instances; None: of all)."""
    stmt = select(TagValue.instance_id, TagValue.tag_key, TagValue.tag_value)
    if instance_ids is not None:
        stmt = stmt.where(TagValue.instance_id.in_(instance_ids))
    out: dict[int, dict[str, set[str]]] = {}
    for instance_id, key, value in session.execute(stmt):
        out.setdefault(instance_id, {}).setdefault(key, set()).add(value)
    return out


def add_tag_values(
    session: Session, instance_id: int, pairs: Sequence[tuple[str, str]], now: datetime
) -> None:
    """Record new tag values of an instance (one already there is left as it is)."""
    if not pairs:
        return
    rows = [
        {"instance_id": instance_id, "tag_key": key, "tag_value": value, "first_seen": now}
        for key, value in pairs
    ]
    stmt = insert_for(session)(TagValue).on_conflict_do_nothing(
        index_elements=["instance_id", "tag_key", "tag_value"]
    )
    session.connection().execute(stmt, rows)
