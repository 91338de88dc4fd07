"""Use cases of the query catalog and metric store."""

import logging
from collections import defaultdict
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, get_args

from pydantic import TypeAdapter
from sqlalchemy.orm import Session

from quanta.analysis.class_cap import is_other_queries
from quanta.analysis.histogram import LatencyHistogram
from quanta.analysis.impact import Slot
from quanta.analysis.metrics import SUM_METRICS
from quanta.analysis.redact import redact
from quanta.analysis.resolution import (
    Resolution,
    Segment,
    floor_to,
    series_resolution,
    width_at,
)
from quanta.analysis.tags import from_canonical
from quanta.analysis.timeseries import load_series, plan_slots
from quanta.core import errors
from quanta.core.config import Settings
from quanta.core.db import utcnow
from quanta.instances import service as instances_service
from quanta.queries import repository
from quanta.queries.models import QueryClass
from quanta.queries.schemas import (
    BreakdownRow,
    Filters,
    FilterValue,
    MetricStat,
    QueryDetail,
    QueryExampleOut,
    QueryExamples,
    QueryFlags,
    QueryRow,
    QueryTotals,
    RowFigures,
    SeriesPoint,
    SortOrder,
    SparkPoint,
    TopQueries,
)
from quanta.queries.window import (
    DIMENSION_COLUMNS,
    BucketFilter,
    InvalidRequest,
    TimeWindow,
    read_plan,
    retained_since,
)

log = logging.getLogger(__name__)


class UnknownSortKey(InvalidRequest):
    """A sort key that is not a metric of the list."""


class QueryNotFound(errors.NotFound):
    """No query class has this query_id."""


def find_query(*, session: Session, query_id: str) -> QueryClass:
    """The catalog entry of a query (its fingerprint, first and last seen).

    Raises:
        QueryNotFound: no query class has this query_id.
    """
    query = repository.query_class(session, query_id)
    if query is None:
        raise QueryNotFound(f"No query with query_id {query_id!r}.")
    return query


def own_queries(*, session: Session, query_ids: Collection[str]) -> set[str]:
    """Which of ``query_ids`` are Quanta's own statements (EXPLAIN, probes, polls), which
    views leave out by default (see quanta.queries.repository.own_query_ids)."""
    return repository.own_among(session, query_ids) if query_ids else set()


# Sort keys computed in Python from merged histograms, and their quantile.
PERCENTILE_SORTS = {"query_time_p50": 0.5, "query_time_p95": 0.95, "query_time_p99": 0.99}
SORT_KEYS: tuple[str, ...] = (*repository.SQL_SORT_KEYS, *PERCENTILE_SORTS)
ORDERS: tuple[str, ...] = get_args(SortOrder)
# Candidates whose percentile is computed per round when sorting by one (see top_queries).
PERCENTILE_CHUNK = 200
# The detail series has at most this many points (see analysis.resolution.series_resolution).
SERIES_MAX_POINTS = 360
DETAIL_QUANTILES = (0.5, 0.95, 0.99)
BREAKDOWN_DIMENSIONS = ("schema", "user", "host")


@dataclass(frozen=True, slots=True)
class RankedQuery:
    """A query among an instance's heaviest: its catalog entry and its sums over the window,
    without the list's percentiles, flags and sparkline (each reads every bucket of it)."""

    query_id: str
    fingerprint: str
    statement_type: str | None
    tables: list[str]
    count: int
    query_time: float
    load: float  # average active sessions
    share: float  # of the window's query time
    rows_examined: int | None


@dataclass(frozen=True, slots=True)
class InstanceLoad:
    """An instance's heaviest queries of a window, heaviest first, and the query time of
    all its queries there."""

    rows: list[RankedQuery]
    query_time: float


def instance_load(
    *, session: Session, settings: Settings, instance: str, window: TimeWindow, limit: int
) -> InstanceLoad:
    """One instance's ``limit`` heaviest queries by load over ``window`` (Quanta's own left
    out), ranked and summed as the top list does them: what beat's passes (regressions,
    EXPLAIN, advice) work on. Reading the page's buckets for percentiles no pass uses was
    seven eighths of the regression check's time (py-spy, bench/capacity.py at 500 servers:
    1,482 samples over a level before, 212 after)."""
    segments = read_plan(settings=settings, window=window)
    sums = repository.per_query(
        session,
        segments,
        BucketFilter(instances=(instance,)),
        sort="load",
        descending=True,
        limit=limit,
        offset=0,
    )
    if not sums:
        return InstanceLoad([], 0.0)
    total_time = Totals.of(sums[0]).query_time
    catalog = repository.query_classes(session, [r.query_id for r in sums])
    seconds = window.seconds
    rows = []
    for r in sums:
        query = catalog[r.query_id]
        figures = row_figures(r, seconds, total_time, None)
        rows.append(
            RankedQuery(
                query_id=r.query_id,
                fingerprint=query.fingerprint,
                statement_type=query.statement_type,
                tables=list(query.tables or []),
                count=figures.count,
                query_time=figures.query_time,
                load=figures.load,
                share=figures.share,
                rows_examined=figures.rows_examined,
            )
        )
    return InstanceLoad(rows, total_time)


def instance_top_queries(
    *, session: Session, settings: Settings, instance: str, window: TimeWindow, limit: int
) -> list[RankedQuery]:
    """One instance's ``limit`` heaviest queries by load over ``window`` (Quanta's own and
    the "other queries" classes left out): what beat's automatic EXPLAIN and advice passes
    work on."""
    rows = instance_load(
        session=session, settings=settings, instance=instance, window=window, limit=limit
    ).rows
    return [row for row in rows if not is_other_queries(row.fingerprint)]


def rows_affected_by_query(
    *,
    session: Session,
    settings: Settings,
    instance: str,
    window: TimeWindow,
    query_ids: Collection[str],
) -> dict[str, int]:
    """Rows affected over ``window`` by each of ``query_ids`` on one instance, where a
    source reported them (absent otherwise): the write rate of a table without statistics."""
    if not query_ids:
        return {}
    wanted = set(query_ids)
    segments = read_plan(settings=settings, window=window)
    flt = BucketFilter(instances=(instance,))
    return {
        row.query_id: int(row.rows_affected)
        for row in repository.aggregate(session, segments, flt, ("query_id",))
        if row.query_id in wanted and row.rows_affected is not None
    }


def rows_examined_per_call(
    *, session: Session, settings: Settings, instance: str, window: TimeWindow, query_id: str
) -> float | None:
    """The rows examined per call one query measured over ``window`` on one instance (None
    when no source reported them): what index advice weighs instead of its estimates."""
    segments = read_plan(settings=settings, window=window)
    flt = BucketFilter(instances=(instance,), query_id=query_id)
    (row,) = repository.aggregate(session, segments, flt)
    if row.rows_examined is None or not row.calls:
        return None
    return float(row.rows_examined) / float(row.calls)


def top_queries(
    *,
    session: Session,
    settings: Settings,
    window: TimeWindow,
    limit: int,
    offset: int,
    sparkline_points: int,
    flt: BucketFilter | None = None,
    sort: str = "load",
    order: str = "desc",
) -> TopQueries:
    """The top queries of the window by any metric, with totals, load share and a sparkline.

    Only each instance's primary source counts, so a query seen in both the slow log and
    performance_schema is counted once. Totals and shares are over the queries that match
    the filters. Sorting by a percentile merges histograms in Python (see `_by_percentile`).
    """
    flt = flt or BucketFilter()
    if sort not in SORT_KEYS:
        raise UnknownSortKey(f"Unknown sort key {sort!r}; use one of: {', '.join(SORT_KEYS)}.")
    if order not in ORDERS:
        raise InvalidRequest(f"Unknown order {order!r}; use 'asc' or 'desc'.")
    descending = order == "desc"
    segments = read_plan(settings=settings, window=window)
    if sort in PERCENTILE_SORTS:
        rows, read = _by_percentile(
            session, segments, flt, PERCENTILE_SORTS[sort], descending, limit + offset
        )
        rows = rows[offset : offset + limit]
        if not descending:  # its candidates were every query: only their histograms were read
            read = _PageBuckets.read(session, segments, flt, [r.query_id for r in rows])
    else:
        rows = list(
            repository.per_query(
                session, segments, flt, sort=sort, descending=descending, limit=limit, offset=offset
            )
        )
        read = _PageBuckets.read(session, segments, flt, [r.query_id for r in rows])
    total = (
        Totals.of(rows[0])
        if rows
        else Totals.of_aggregate(
            repository.aggregate(session, segments, flt, count_queries=True)[0]
        )
    )
    total_time = total.query_time
    catalog = repository.query_classes(session, [r.query_id for r in rows])
    slots = plan_slots(window.start, window.end, sparkline_points)
    widths = width_at(segments)
    seconds = window.seconds
    out_rows = []
    for r in rows:
        query = catalog[r.query_id]
        out_rows.append(
            QueryRow(
                query_id=r.query_id,
                fingerprint=query.fingerprint,
                statement_type=query.statement_type,
                tables=list(query.tables or []),
                **dict(row_figures(r, seconds, total_time, read.histograms.get(r.query_id))),
                flags=read.flags(r.query_id),
                sparkline=sparkline(load_series(read.points[r.query_id], slots, widths)),
            )
        )
    return TopQueries(
        from_=window.start,
        to=window.end,
        seconds=seconds,
        sort=sort,
        order=order,
        totals=total.over(seconds),
        rows=out_rows,
    )


_SPARKLINE = TypeAdapter(list[SparkPoint])


def sparkline(series: list[tuple[datetime, float]]) -> list[SparkPoint]:
    """A load series (`load_series`) as the API's points.

    Validated from dicts by pydantic's core: a 60-point row took 39 us so, 156 us with a
    ``model_construct`` per point.
    """
    return _SPARKLINE.validate_python([{"ts": ts, "load": load} for ts, load in series])


@dataclass
class _PageBuckets:
    """What the top list draws from its page's buckets (`repository.page_buckets`): each
    query's load points, merged histogram and flag sums."""

    points: dict[str, list[tuple[datetime, float]]]
    histograms: dict[str, LatencyHistogram]
    flag_sums: dict[str, list[int | None]]

    @classmethod
    def empty(cls) -> "_PageBuckets":
        """A read of no query."""
        return cls.of_histograms(defaultdict(LatencyHistogram))

    @classmethod
    def of_histograms(cls, histograms: dict[str, LatencyHistogram]) -> "_PageBuckets":
        """A read of merged histograms only."""
        return cls(defaultdict(list), histograms, {})

    @classmethod
    def read(
        cls, session: Session, segments: list[Segment], flt: BucketFilter, query_ids: list[str]
    ) -> "_PageBuckets":
        """Read the page's buckets once."""
        page = cls.empty()
        for query_id, start, query_time, histogram, *flags in repository.page_buckets(
            session, segments, flt, query_ids
        ):
            page.points[query_id].append((start, query_time))
            if histogram is not None:
                page.histograms[query_id].merge_bytes(histogram)
            sums = page.flag_sums.setdefault(query_id, [None] * len(flags))
            for n, value in enumerate(flags):
                if value is not None:
                    sums[n] = (sums[n] or 0) + value
        return page

    def update(self, other: "_PageBuckets") -> None:
        """Add another read's queries (none of them in this one)."""
        self.points.update(other.points)
        self.histograms.update(other.histograms)
        self.flag_sums.update(other.flag_sums)

    def flags(self, query_id: str) -> QueryFlags:
        """What the query's executions did at least once (None: no source says)."""
        sums = self.flag_sums.get(query_id, [None] * len(repository.LIST_FLAGS))
        return QueryFlags(
            **{name: _flag(total) for name, total in zip(repository.LIST_FLAGS, sums, strict=True)}
        )


def row_figures(
    sums: Any, seconds: float, total_time: float, histogram: LatencyHistogram | None
) -> RowFigures:
    """A row's figures over a range of ``seconds``: from its summed metrics (a
    `repository.per_query` or `repository.aggregate` row), the range's total query time
    (for its share) and its merged latency histogram (for the percentiles)."""
    p95, p99 = histogram.quantiles([0.95, 0.99]) if histogram else (None, None)
    return RowFigures(
        count=sums.calls,
        qps=sums.calls / seconds,
        query_time=sums.query_time,
        load=sums.query_time / seconds,
        share=sums.query_time / total_time if total_time else 0.0,
        query_time_avg=sums.query_time / sums.calls if sums.calls else None,
        query_time_p95=p95,
        query_time_p99=p99,
        query_time_max=sums.query_time_max,
        rows_examined=sums.rows_examined,
        rows_sent=sums.rows_sent,
    )


@dataclass(frozen=True, slots=True)
class Totals:
    """What the totals row sums, over every query matching the filters."""

    calls: int
    query_time: float
    rows_examined: int | None
    rows_sent: int | None
    queries: int

    @classmethod
    def of(cls, row: Any) -> "Totals":
        """From the window totals every row of `repository.per_query` carries."""
        return cls(
            row.total_calls or 0,
            row.total_query_time or 0.0,
            row.total_rows_examined,
            row.total_rows_sent,
            row.total_queries or 0,
        )

    @classmethod
    def of_aggregate(cls, row: Any) -> "Totals":
        """From a `repository.aggregate` row (when the page has no row to carry them)."""
        return cls(
            row.calls or 0, row.query_time or 0.0, row.rows_examined, row.rows_sent, row.queries
        )

    def over(self, seconds: float) -> QueryTotals:
        """The totals of a range of ``seconds``, with their rates."""
        return QueryTotals(
            count=self.calls,
            query_time=self.query_time,
            load=self.query_time / seconds,
            qps=self.calls / seconds,
            query_time_avg=self.query_time / self.calls if self.calls else None,
            rows_examined=self.rows_examined,
            rows_sent=self.rows_sent,
            queries=self.queries,
        )


def query_detail(
    *,
    session: Session,
    settings: Settings,
    window: TimeWindow,
    query_id: str,
    flt: BucketFilter | None = None,
) -> QueryDetail:
    """Every metric of one query over the window, its series and its breakdowns.

    Shares are of the same metric over every query matching the same filters.
    """
    query = find_query(session=session, query_id=query_id)
    base = replace(flt or BucketFilter(), search=None, query_id=None)
    mine = replace(base, query_id=query_id)
    segments = read_plan(settings=settings, window=window)
    (row,) = repository.aggregate(session, segments, mine)
    everything = _everything(session, segments, base)
    histogram = merged_histograms(session, segments, mine, "query_id", [query_id]).get(query_id)
    seconds = window.seconds
    count = row.calls or 0
    query_time = row.query_time or 0.0
    total_time = everything.query_time or 0.0
    return QueryDetail(
        query_id=query.query_id,
        fingerprint=query.fingerprint,
        statement_type=query.statement_type,
        tables=list(query.tables or []),
        first_seen=query.first_seen,
        last_seen=query.last_seen,
        from_=window.start,
        to=window.end,
        seconds=seconds,
        count=count,
        load=query_time / seconds,
        share=query_time / total_time if total_time else 0.0,
        metrics=_metric_stats(row, everything, histogram, seconds),
        **_series(session=session, settings=settings, window=window, flt=mine),
        breakdown=_breakdown(session, segments, mine, query_time),
    )


def _everything(session: Session, segments: list[Segment], flt: BucketFilter) -> Any:
    """Every query matching ``flt`` summed: from the instances' totals when no dimension
    filter applies (a few rows per period), else from the buckets."""
    if flt.has_dimension:
        (row,) = repository.aggregate(session, segments, flt)
        return row
    return repository.instance_totals(session, segments, flt.instances)


# Statements that change tables, their indexes or their statistics, and so plans.
SCHEMA_CHANGE_TYPES = ("alter", "create", "drop", "rename", "truncate", "analyze", "optimize")


@dataclass(frozen=True, slots=True)
class SchemaStatement:
    """A statement class that can change plans, as the metric store saw it run."""

    query_id: str
    fingerprint: str
    tables: list[str]
    seen_at: datetime  # the last time it ran


def schema_statements(
    *,
    session: Session,
    instance: str,
    tables: Sequence[str],
    since: datetime,
    until: datetime | None = None,
) -> list[SchemaStatement]:
    """The statements that can change plans (ALTER, CREATE/DROP INDEX, ANALYZE...) on one
    of ``tables`` last seen on ``instance`` in ``[since, until]``, oldest first.

    Tables match by name without their schema: the statements name them either way.
    """
    wanted = {_bare(t) for t in tables}
    return [
        SchemaStatement(query_id, fingerprint, names, at)
        for query_id, fingerprint, names, at in repository.schema_statements_between(
            session,
            instance=instance,
            types=SCHEMA_CHANGE_TYPES,
            since=since,
            until=until or datetime.max.replace(tzinfo=UTC),
        )
        if wanted & {_bare(t) for t in names}
    ]


def last_schema_change(
    *, session: Session, instance: str, tables: Sequence[str], since: datetime
) -> datetime | None:
    """When a statement that can change plans (ALTER, CREATE INDEX, ANALYZE...) last ran on
    one of ``tables`` on ``instance``, seen in its metrics since ``since``; None if never."""
    found = schema_statements(session=session, instance=instance, tables=tables, since=since)
    return max((s.seen_at for s in found), default=None)


def _bare(table: str) -> str:
    return table.rsplit(".", 1)[-1].strip("`").lower()


def query_examples(
    *,
    session: Session,
    settings: Settings,
    window: TimeWindow,
    query_id: str,
    instances: tuple[str, ...] = (),
    limit: int,
) -> QueryExamples:
    """Real statements of a query in the window (slowest and sampled ones), slowest first."""
    find_query(session=session, query_id=query_id)
    # Every resolution, not the coarsest that fits: an hour keeps two statements where its
    # minutes kept two each, and distinct real statements are what EXPLAIN and a reader want.
    segments = [Segment(r, floor_to(window.start, r), window.end) for r in Resolution]
    found: dict[tuple[str, datetime], QueryExampleOut] = {}
    for example, instance in repository.examples(session, segments, query_id, instances):
        for kind in ("slowest", "sampled"):
            out = QueryExampleOut(
                kind=kind,
                # Redacted as read too: examples stored before redaction knew a form.
                text=redact(getattr(example, f"{kind}_text")),
                query_time=getattr(example, f"{kind}_query_time"),
                ts=getattr(example, f"{kind}_ts"),
                schema_name=getattr(example, f"{kind}_schema"),
                instance=instance,
                literals=getattr(example, f"{kind}_literals"),
                truncated=getattr(example, f"{kind}_truncated"),
            )
            # The sampled statement is often the slowest one too, and the same statement is
            # kept at several resolutions: list it once.
            if window.start <= out.ts < window.end:
                found.setdefault((out.text, out.ts), out)
    ranked = sorted(found.values(), key=lambda e: (-e.query_time, e.ts))
    return QueryExamples(query_id=query_id, examples=ranked[:limit])


# Newest example buckets looked at for the latest usable statement: enough to get past a
# run of truncated ones, bounded so a long-lived query does not read all of its history.
EXAMPLE_ROWS_SCANNED = 50


@dataclass(frozen=True, slots=True)
class StoredExample:
    """One stored statement of a query: its text, database, time and whether it is usable
    for EXPLAIN (full literals, not truncated)."""

    text: str
    schema_name: str
    ts: datetime
    literals: str
    truncated: bool


def latest_examples(*, session: Session, query_id: str, instance_id: int) -> list[StoredExample]:
    """The stored statements of a query on an instance as stored (not redacted: for the
    use cases that send one to the instance's own servers), newest first."""
    rows = repository.latest_example_rows(session, query_id, instance_id, EXAMPLE_ROWS_SCANNED)
    found = [
        StoredExample(
            text=getattr(row, f"{kind}_text"),
            schema_name=getattr(row, f"{kind}_schema"),
            ts=getattr(row, f"{kind}_ts"),
            literals=getattr(row, f"{kind}_literals"),
            truncated=getattr(row, f"{kind}_truncated"),
        )
        for row in rows
        for kind in ("slowest", "sampled")
    ]
    return sorted(found, key=lambda e: e.ts, reverse=True)


def filter_values(
    *, session: Session, settings: Settings, window: TimeWindow, flt: BucketFilter
) -> Filters:
    """The values of each dimension in the window with their share of the load."""
    segments = read_plan(settings=settings, window=window)
    sums = _sums_by_dimension(session, segments, flt, labels=True)
    total_time = sum(query_time for _, query_time in sums["instance"].values())
    lists = {
        dimension: sorted(
            (
                FilterValue(
                    value=value,
                    count=count,
                    share=query_time / total_time if total_time else 0.0,
                )
                for value, (count, query_time) in values.items()
            ),
            key=lambda v: (-v.share, v.value),
        )
        for dimension, values in sums.items()
    }
    return Filters(
        from_=window.start,
        to=window.end,
        instance=lists["instance"],
        schema_=lists["schema"],
        user=lists["user"],
        host=lists["host"],
        tags={d[4:]: v for d, v in sorted(lists.items()) if d.startswith("tag:")},
        labels={d[6:]: v for d, v in sorted(lists.items()) if d.startswith("label:")},
    )


def _by_percentile(
    session: Session,
    segments: list[Segment],
    flt: BucketFilter,
    q: float,
    descending: bool,
    needed: int,
) -> tuple[list[Any], _PageBuckets]:
    """The queries ordered by a latency percentile merged from their histograms, and the
    buckets read on the way: for a descending sort, the `_PageBuckets` of every query that
    can be on the page; for an ascending one, every query's merged histogram.

    A percentile never exceeds the query's maximum, so for a descending sort the candidates
    are taken by maximum, heaviest first, PERCENTILE_CHUNK at a time, until the `needed`-th
    best percentile found is at least the next candidate's maximum: no later query can rank
    higher. An ascending sort computes every query's percentile. No histogram: last.

    A descending sort mostly ends within its first chunk, so only those candidates (and the
    next one, the bound) are read at first; every query's row only if it goes on. Reading
    all 5,000 rows of a 30-day overview took a fifth of its time (bench/api_latency.py).
    """
    first_read = max(needed, PERCENTILE_CHUNK) + 1 if descending else None
    candidates = _by_maximum(session, segments, flt, first_read)
    complete = first_read is None or len(candidates) < first_read
    values: dict[str, float | None] = {}
    read = _PageBuckets.empty()
    start = 0
    while True:
        end = start + PERCENTILE_CHUNK
        if not complete and len(candidates) <= end:  # this chunk or its bound was not read
            candidates, complete = _by_maximum(session, segments, flt, None), True
        if start >= len(candidates):
            break
        ids = [r.query_id for r in candidates[start:end]]
        # A descending sort's page is most likely in its first chunk: read what it shows too.
        chunk = (
            _PageBuckets.read(session, segments, flt, ids)
            if descending
            else _PageBuckets.of_histograms(
                merged_histograms(session, segments, flt, "query_id", ids)
            )
        )
        read.update(chunk)
        for query_id in ids:
            histogram = chunk.histograms.get(query_id)
            values[query_id] = histogram.quantile(q) if histogram else None
        following = candidates[end : end + 1]
        if descending and following and following[0].query_time_max is not None:
            known = sorted((v for v in values.values() if v is not None), reverse=True)
            if len(known) >= needed and known[needed - 1] >= following[0].query_time_max:
                candidates = candidates[:end]
                break
        start = end
    sign = -1.0 if descending else 1.0

    def rank(row: Any) -> tuple[bool, float, str]:
        value = values.get(row.query_id)
        return (value is None, sign * (value or 0.0), row.query_id)

    return sorted(candidates, key=rank), read


def _by_maximum(
    session: Session, segments: list[Segment], flt: BucketFilter, limit: int | None
) -> list[Any]:
    """The first ``limit`` queries (None: all) by maximum latency, heaviest first."""
    return list(
        repository.per_query(
            session, segments, flt, sort="query_time_max", descending=True, limit=limit, offset=0
        )
    )


def merged_histograms(
    session: Session,
    segments: list[Segment],
    flt: BucketFilter,
    key: str,
    query_ids: list[str] | None,
) -> dict[Any, LatencyHistogram]:
    """The filtered buckets' histograms merged per value of bucket column ``key``."""
    merged: dict[Any, LatencyHistogram] = defaultdict(LatencyHistogram)
    for value, data in repository.histograms_by(session, segments, flt, key, query_ids):
        merged[value].merge_bytes(data)
    return dict(merged)


def _metric_stats(
    row: Any, everything: Any, histogram: LatencyHistogram | None, seconds: float
) -> list[MetricStat]:
    count = row.calls or 0

    def stat(name: str, value: Any, total: Any, **extra: float | None) -> MetricStat:
        return MetricStat(
            name=name,
            sum=value,
            rate=None if value is None else value / seconds,
            share=value / total if value is not None and total else None,
            avg=value / count if value is not None and count else None,
            **extra,
        )

    p50, p95, p99 = histogram.quantiles(DETAIL_QUANTILES) if histogram else (None, None, None)
    stats = [
        stat("count", count, everything.calls),
        stat(
            "query_time",
            row.query_time,
            everything.query_time,
            min=row.query_time_min,
            max=row.query_time_max,
            p50=p50,
            p95=p95,
            p99=p99,
        ),
    ]
    for name in SUM_METRICS:
        extra = {"max": row.lock_time_max} if name == "lock_time" else {}
        stats.append(stat(name, getattr(row, name), getattr(everything, name), **extra))
    return stats


def _series(
    *, session: Session, settings: Settings, window: TimeWindow, flt: BucketFilter
) -> dict[str, Any]:
    """The query's series at the finest kept resolution with at most SERIES_MAX_POINTS."""
    kept = retained_since(settings=settings, now=utcnow())
    resolution = series_resolution(window.start, window.end, kept, SERIES_MAX_POINTS)
    first = floor_to(window.start, resolution)
    segments = [Segment(resolution, first, window.end)]
    rows = {r[0]: r for r in repository.aggregate(session, segments, flt, ["bucket_start"])}
    merged = merged_histograms(session, segments, flt, "bucket_start", None)
    width = resolution.width
    points = []
    ts = first
    while ts < window.end:
        r = rows.get(ts)
        histogram = merged.get(ts)
        p50, p95, p99 = histogram.quantiles(DETAIL_QUANTILES) if histogram else (None, None, None)
        points.append(
            SeriesPoint.model_construct(  # computed values: no validation needed
                ts=ts,
                load=(r.query_time if r else 0.0) / width.total_seconds(),
                count=r.calls if r else 0,
                rows_examined=(r.rows_examined or 0) if r else 0,
                p50=p50,
                p95=p95,
                p99=p99,
            )
        )
        ts += width
    return {"resolution": resolution.value, "series": points}


def _breakdown(
    session: Session, segments: list[Segment], flt: BucketFilter, query_time: float
) -> dict[str, list[BreakdownRow]]:
    return {
        dimension: sorted(
            (
                BreakdownRow(
                    value=value,
                    count=count,
                    query_time=time,
                    share=time / query_time if query_time else 0.0,
                )
                for value, (count, time) in values.items()
            ),
            key=lambda v: (-v.query_time, v.value),
        )
        for dimension, values in _sums_by_dimension(session, segments, flt).items()
    }


def _sums_by_dimension(
    session: Session, segments: list[Segment], flt: BucketFilter, *, labels: bool = False
) -> dict[str, dict[str, tuple[int, float]]]:
    """(count, query time) per value of each dimension: instance (by name), schema, user,
    host, ``tag:KEY`` per tag key (buckets with that tag only), and with ``labels``
    ``label:KEY`` per instance label key. One scan grouped by all of them, added up here: a
    scan per dimension read the buckets once per dimension."""
    names = instances_service.instance_names_by_id(session=session)
    labelled = instances_service.instance_labels_by_id(session=session) if labels else {}
    columns = ["instance_id", *(DIMENSION_COLUMNS[d] for d in BREAKDOWN_DIMENSIONS), "tags"]
    sums: dict[str, dict[str, tuple[int, float]]] = {
        d: {} for d in ("instance", *BREAKDOWN_DIMENSIONS)
    }

    def add(dimension: str, value: str, row: Any) -> None:
        values = sums.setdefault(dimension, {})
        count, query_time = values.get(value, (0, 0.0))
        values[value] = (count + row.calls, query_time + row.query_time)

    for row in repository.aggregate(session, segments, flt, columns):
        instance_id, *dimension_values, tags = row[: len(columns)]
        add("instance", names.get(instance_id, str(instance_id)), row)
        for dimension, value in zip(BREAKDOWN_DIMENSIONS, dimension_values, strict=True):
            add(dimension, value, row)
        for key, value in from_canonical(tags).items():
            add(f"tag:{key}", value, row)
        for key, value in labelled.get(instance_id, {}).items():
            add(f"label:{key}", value, row)
    return sums


def _flag(total: int | None) -> bool | None:
    return None if total is None else total > 0


IMPACT_COLUMNS = (
    "query_id", "instance_id", "bucket_start", "count", "query_time_sum", "rows_examined_sum",
    "histogram",
)  # fmt: skip


def impact_buckets(
    *,
    session: Session,
    resolution: Resolution,
    ranges: Sequence[tuple[datetime, datetime]],
    instance_ids: Sequence[int],
) -> Iterator[Any]:
    """Primary-source buckets of ``resolution`` starting in any of ``ranges``, of the
    instances ``instance_ids``: rows of IMPACT_COLUMNS, one per stored bucket, which the
    caller sums (histograms cannot be merged by SQL)."""
    segments = [Segment(resolution, lo, hi) for lo, hi in ranges]
    return repository.primary_bucket_rows(session, segments, instance_ids, *IMPACT_COLUMNS)


def schemas_of_instance(*, session: Session, instance_id: int, since: datetime) -> list[str]:
    """The schemas (databases) the instance's statements ran in since ``since``, sorted."""
    return repository.schemas_of_instance(session, instance_id, since)


def has_source_data(*, session: Session, instance_id: int, source: str) -> bool:
    """Whether any data of ``source`` (a query source) is stored for the instance."""
    return repository.has_source_data(session, instance_id, source)


def query_slots(
    *,
    session: Session,
    instance: str,
    resolution: Resolution,
    start: datetime,
    end: datetime,
    query_ids: Sequence[str],
) -> dict[str, dict[datetime, Slot]]:
    """Per query, its buckets of ``resolution`` starting in ``[start, end)`` on one instance
    (primary source), summed over schemas, users and hosts into one `Slot` per bucket start:
    what the regression detector compares."""
    out: dict[str, dict[datetime, Slot]] = defaultdict(dict)
    flt = BucketFilter(instances=(instance,), include_own=True)
    segments = [Segment(resolution, start, end)]
    for row in repository.slot_rows(session, segments, flt, query_ids):
        if not row.count:
            continue
        slot = out[row.query_id].setdefault(row.bucket_start, Slot())
        slot.add(
            count=row.count,
            query_time=row.query_time_sum,
            rows_examined=row.rows_examined_sum,
            histogram=LatencyHistogram.from_bytes(row.histogram) if row.histogram else None,
        )
    return dict(out)


def latest_minute(*, session: Session, instance_id: int) -> datetime | None:
    """The newest minute an instance's primary source reported (None: nothing yet): the end
    of what a check of recent minutes can read, whatever the ingest's delay."""
    return repository.latest_minute(session, instance_id)


def instance_first_seen(*, session: Session, instance_id: int) -> datetime | None:
    """When the instance's first statement was seen (None: never)."""
    return repository.instance_first_seen(session, instance_id)


def first_seen(
    *, session: Session, query_ids: Sequence[str], instance_ids: Sequence[int]
) -> dict[str, datetime]:
    """When each of ``query_ids`` was first seen on any of ``instance_ids`` (those never
    seen there are left out)."""
    return repository.first_seen_among(session, query_ids, instance_ids)


def fingerprints(*, session: Session, query_ids: Sequence[str]) -> dict[str, str]:
    """The fingerprint of each of ``query_ids`` in the catalog."""
    return {qid: q.fingerprint for qid, q in repository.query_classes(session, query_ids).items()}
