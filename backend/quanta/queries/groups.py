"""The overview grouped by a dimension: load per schema, user, client host or instance."""

from collections import defaultdict
from collections.abc import Callable
from datetime import datetime
from typing import Any, get_args

from sqlalchemy.orm import Session

from quanta.analysis.resolution import Segment, width_at
from quanta.analysis.timeseries import load_series, plan_slots
from quanta.core.config import Settings
from quanta.queries import repository
from quanta.queries.schemas import GroupBy, GroupRow, SparkPoint, TopQueries
from quanta.queries.service import (
    ORDERS,
    PERCENTILE_SORTS,
    SORT_KEYS,
    Totals,
    UnknownSortKey,
    merged_histograms,
    row_figures,
)
from quanta.queries.window import (
    DIMENSION_COLUMNS,
    BucketFilter,
    InvalidRequest,
    TimeWindow,
    read_plan,
)

# group_by value -> bucket column; "query" is the plain overview (service.top_queries).
GROUP_COLUMNS = {**DIMENSION_COLUMNS, "instance": "instance_id"}
GROUP_BY: tuple[str, ...] = get_args(GroupBy)
assert ("query", *GROUP_COLUMNS) == GROUP_BY, "GroupBy (schemas) and GROUP_COLUMNS disagree"


def top_groups(
    *,
    session: Session,
    settings: Settings,
    window: TimeWindow,
    group_by: str,
    limit: int,
    offset: int,
    sparkline_points: int,
    flt: BucketFilter,
    sort: str = "load",
    order: str = "desc",
) -> TopQueries:
    """The values of one dimension ranked by any metric, each with its load and sparkline.

    A dimension has far fewer values than there are queries, so every value's sums come
    from one grouped read and are sorted here, percentiles included.
    """
    if group_by not in GROUP_COLUMNS:
        raise InvalidRequest(f"Unknown group_by {group_by!r}; use one of: {', '.join(GROUP_BY)}.")
    if sort not in SORT_KEYS:
        raise UnknownSortKey(f"Unknown sort key {sort!r}; use one of: {', '.join(SORT_KEYS)}.")
    if order not in ORDERS:
        raise InvalidRequest(f"Unknown order {order!r}; use 'asc' or 'desc'.")
    column = GROUP_COLUMNS[group_by]
    segments = read_plan(settings=settings, window=window)
    sums = {row[0]: row for row in repository.aggregate(session, segments, flt, [column])}
    (total,) = repository.aggregate(session, segments, flt, count_queries=True)
    totals = Totals.of_aggregate(total)
    histograms = merged_histograms(session, segments, flt, column, None)
    seconds = window.seconds
    key = _sort_key(sort, seconds, histograms)
    ranked = sorted(sums, key=lambda value: (key(sums[value]) is None, key(sums[value]) or 0.0))
    if order == "desc":
        known = [v for v in ranked if key(sums[v]) is not None]
        ranked = known[::-1] + [v for v in ranked if key(sums[v]) is None]
    page = ranked[offset : offset + limit]
    series = _load_series(session, segments, flt, column, page, window, sparkline_points)
    names = repository.instance_names(session) if group_by == "instance" else {}
    rows = []
    for value in page:
        r = sums[value]
        rows.append(
            GroupRow(
                value=names.get(value, str(value)) if names else value,
                **dict(row_figures(r, seconds, totals.query_time, histograms.get(value))),
                sparkline=series[value],
            )
        )
    return TopQueries(
        from_=window.start,
        to=window.end,
        seconds=seconds,
        sort=sort,
        order=order,
        group_by=group_by,
        totals=totals.over(seconds),
        rows=[],
        groups=rows,
    )


def _sort_key(
    sort: str, seconds: float, histograms: dict[Any, Any]
) -> Callable[[Any], float | None]:
    """The sort metric of one group's summed row (None sorts last either way)."""
    if sort in PERCENTILE_SORTS:
        q = PERCENTILE_SORTS[sort]

        def percentile(row: Any) -> float | None:
            histogram = histograms.get(row[0])
            return histogram.quantile(q) if histogram else None

        return percentile
    per_row: dict[str, Callable[[Any], float | None]] = {
        "load": lambda r: r.query_time,
        "query_time": lambda r: r.query_time,
        "count": lambda r: r.calls,
        "qps": lambda r: r.calls / seconds,
        "query_time_avg": lambda r: r.query_time / r.calls if r.calls else None,
        "query_time_max": lambda r: r.query_time_max,
        "query_time_min": lambda r: r.query_time_min,
        "lock_time_max": lambda r: r.lock_time_max,
        "rows_examined_per_row_sent": lambda r: (
            r.rows_examined / r.rows_sent if r.rows_examined is not None and r.rows_sent else None
        ),
    }
    if sort in per_row:
        return per_row[sort]
    return lambda r: getattr(r, sort)  # one of SUM_METRICS: aggregate() sums each


def _load_series(
    session: Session,
    segments: list[Segment],
    flt: BucketFilter,
    column: str,
    values: list[Any],
    window: TimeWindow,
    points: int,
) -> dict[Any, list[SparkPoint]]:
    slots = plan_slots(window.start, window.end, points)
    by_value: dict[Any, list[tuple[datetime, float]]] = defaultdict(list)
    for value, start, query_time in repository.load_by_bucket(
        session, segments, flt, values, column
    ):
        by_value[value].append((start, query_time))
    return {
        value: [
            SparkPoint.model_construct(ts=ts, load=load)
            for ts, load in load_series(by_value[value], slots, width_at(segments))
        ]
        for value in values
    }
