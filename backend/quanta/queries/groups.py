"""The overview grouped by a dimension: load per schema, user, client host or instance, or
per value of one tag key (``tag:KEY``) or instance label (``label:KEY``).

A tag's value is part of a bucket's canonical tags and a label's is its instance's: the
buckets are summed per tags string (or instance) by the database, and those sums merged
per value of the key here (every metric merges exactly; '' is "no such tag").
"""

from collections import defaultdict, namedtuple
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import cache
from typing import Any, get_args

from sqlalchemy.orm import Session

from quanta.analysis.histogram import LatencyHistogram
from quanta.analysis.resolution import Segment, width_at
from quanta.analysis.tags import from_canonical
from quanta.analysis.timeseries import load_series, plan_slots
from quanta.core.config import Settings
from quanta.instances import service as instances_service
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
    sparkline,
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
# group_by "tag:KEY" and "label:KEY": a key's values, from these bucket columns.
KEYED_GROUPS = {"tag": "tags", "label": "instance_id"}


def group_column(session: Session, group_by: str) -> tuple[str, Callable[[Any], Any] | None]:
    """The bucket column a group_by sums by, and for a tag or label key the function from
    that column's value to the key's value (None: the column's value is the group's)."""
    if group_by in GROUP_COLUMNS:
        return GROUP_COLUMNS[group_by], None
    kind, colon, key = group_by.partition(":")
    if not colon or kind not in KEYED_GROUPS or not key:
        raise InvalidRequest(
            f"Unknown group_by {group_by!r}; use one of: {', '.join(GROUP_BY)}, tag:KEY or "
            "label:KEY."
        )
    key = key.lower()
    if kind == "tag":
        return "tags", lambda tags: from_canonical(tags).get(key, "")
    labels = instances_service.instance_labels_by_id(session=session)
    return "instance_id", lambda instance_id: labels.get(instance_id, {}).get(key, "")


def merge_rows(rows: Sequence[Any], value: Any) -> Any:
    """`repository.aggregate` rows (of one group) summed into one, its first column
    ``value``: sums added (None when none is known), minima and maxima kept."""
    names = rows[0]._fields
    merged: dict[str, Any] = {names[0]: value}
    for name in names[1:]:
        known = [getattr(row, name) for row in rows if getattr(row, name) is not None]
        if not known:
            merged[name] = None
        elif name.endswith("_min"):
            merged[name] = min(known)
        elif name.endswith("_max"):
            merged[name] = max(known)
        else:
            merged[name] = sum(known)
    # A tuple with named fields, as the rows it stands for (read by position and by name).
    return _row_type(tuple(names))(**merged)


@cache
def _row_type(names: tuple[str, ...]) -> Any:
    return namedtuple("MergedRow", names)


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
    column, value_of = group_column(session, group_by)
    if sort not in SORT_KEYS:
        raise UnknownSortKey(f"Unknown sort key {sort!r}; use one of: {', '.join(SORT_KEYS)}.")
    if order not in ORDERS:
        raise InvalidRequest(f"Unknown order {order!r}; use 'asc' or 'desc'.")
    segments = read_plan(settings=settings, window=window)
    rows = repository.aggregate(session, segments, flt, [column])
    (total,) = repository.aggregate(session, segments, flt, count_queries=True)
    totals = Totals.of_aggregate(total)
    histograms = merged_histograms(session, segments, flt, column, None)
    if value_of is None:
        sums = {row[0]: row for row in rows}
        raw: dict[Any, list[Any]] = {}
    else:
        parts: dict[Any, list[Any]] = {}
        raw = {}
        for row in rows:
            parts.setdefault(value_of(row[0]), []).append(row)
            raw.setdefault(value_of(row[0]), []).append(row[0])
        sums = {value: merge_rows(group, value) for value, group in parts.items()}
        histograms = _merged_by(histograms, value_of)
    seconds = window.seconds
    key = _sort_key(sort, seconds, histograms)
    ranked = sorted(sums, key=lambda value: (key(sums[value]) is None, key(sums[value]) or 0.0))
    if order == "desc":
        known = [v for v in ranked if key(sums[v]) is not None]
        ranked = known[::-1] + [v for v in ranked if key(sums[v]) is None]
    page = ranked[offset : offset + limit]
    series = _load_series(
        session, segments, flt, column, page, window, sparkline_points, value_of, raw
    )
    by_instance = group_by == "instance"
    names = instances_service.instance_names_by_id(session=session) if by_instance else {}
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
    value_of: Callable[[Any], Any] | None = None,
    raw: dict[Any, list[Any]] | None = None,
) -> dict[Any, list[SparkPoint]]:
    slots = plan_slots(window.start, window.end, points)
    by_value: dict[Any, list[tuple[datetime, float]]] = defaultdict(list)
    stored = values if value_of is None else [v for value in values for v in (raw or {})[value]]
    for value, start, query_time in repository.load_by_bucket(
        session, segments, flt, stored, column
    ):
        by_value[value if value_of is None else value_of(value)].append((start, query_time))
    return {
        value: sparkline(load_series(by_value[value], slots, width_at(segments)))
        for value in values
    }


def _merged_by(
    histograms: dict[Any, LatencyHistogram], value_of: Callable[[Any], Any]
) -> dict[Any, LatencyHistogram]:
    """Histograms per stored value merged per group value."""
    out: dict[Any, LatencyHistogram] = {}
    for stored, histogram in histograms.items():
        out.setdefault(value_of(stored), LatencyHistogram()).merge(histogram)
    return out
