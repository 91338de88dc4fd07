"""What an annotated change did to each query: equal windows before and after, compared.

Pure: the caller reads the per-slot metrics of the two windows from the metric store; this
module plans the windows, compares them metric by metric and says whether each change is
significant, with a Mann-Whitney U test on the per-slot values (a slot is one bucket of the
resolution read, normally a minute).

Example:
    >>> from datetime import UTC, datetime, timedelta
    >>> kept = {r: datetime(2000, 1, 1, tzinfo=UTC) for r in Resolution}
    >>> t = datetime(2026, 1, 1, 12, 0, 30, tzinfo=UTC)
    >>> plan = plan_windows(time=t, end_time=None, window=timedelta(minutes=30),
    ...                     now=t + timedelta(hours=2), retained_since=kept, max_slots=1440)
    >>> (plan.resolution.value, plan.slots, plan.before_start.strftime("%H:%M"),
    ...  plan.after_start.strftime("%H:%M"))
    ('minute', 30, '11:30', '12:01')
"""

from __future__ import annotations

import enum
import math
import re
from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TypeVar

from quanta.analysis.histogram import LatencyHistogram
from quanta.analysis.resolution import Resolution, ceil_to, floor_to

__all__ = [
    "METRICS",
    "VERDICT_METRICS",
    "ImpactPlan",
    "MetricChange",
    "NothingToCompare",
    "QueryImpact",
    "Slot",
    "Status",
    "Thresholds",
    "Verdict",
    "compare_queries",
    "compare_query",
    "mann_whitney_many",
    "mann_whitney_p",
    "parse_window",
    "plan_windows",
]

MIN_WINDOW = timedelta(minutes=5)
MAX_WINDOW = timedelta(days=7)
_WINDOW = re.compile(r"(?P<amount>\d+)\s*(?P<unit>[mhdw])")
_WINDOW_UNITS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
P95 = 0.95
K = TypeVar("K", bound=Hashable)
# scipy computes exact Mann-Whitney p-values when a sample is this small and nothing ties.
_EXACT_MAX_SIZE = 8

# The metrics compared, in the order they are reported.
METRICS = ("load", "count", "avg_latency", "p95_latency", "rows_examined_per_call")
# The per-call metrics that decide the verdict, in order of precedence.
VERDICT_METRICS = ("avg_latency", "p95_latency", "rows_examined_per_call")
_FINE_TO_COARSE = (Resolution.MINUTE, Resolution.HOUR, Resolution.DAY)


class Status(enum.StrEnum):
    """How a query's metrics moved between the windows."""

    CHANGED = "changed"
    UNCHANGED = "unchanged"
    NEW = "new"
    GONE = "gone"


class Verdict(enum.StrEnum):
    """Whether the change made the query cheaper or dearer for the server."""

    IMPROVED = "improved"
    REGRESSED = "regressed"
    UNCHANGED = "unchanged"
    NEW = "new"
    GONE = "gone"


class NothingToCompare(ValueError):
    """The windows cannot be compared (yet): the message says why and what to do."""


def parse_window(text: str) -> timedelta:
    """A window length such as ``15m``, ``1h``, ``6h``, ``1d`` (5 minutes to 7 days).

    Example:
        >>> parse_window("90m")
        datetime.timedelta(seconds=5400)

    Raises:
        ValueError: the text is not a length, or it is outside 5m..7d.
    """
    match = _WINDOW.fullmatch(text.strip().lower())
    if not match:
        raise ValueError(
            f"Cannot read window {text!r}: use a number and a unit m, h, d or w (15m, 1h, 1d)."
        )
    window = timedelta(seconds=int(match["amount"]) * _WINDOW_UNITS[match["unit"]])
    if not MIN_WINDOW <= window <= MAX_WINDOW:
        raise ValueError(f"Window {text!r} is outside the accepted range of 5m to 7d.")
    return window


@dataclass(frozen=True, slots=True)
class ImpactPlan:
    """The two windows compared: ``slots`` buckets of ``resolution`` each, equal lengths.

    ``before`` ends where the bucket holding the annotation's time starts and ``after`` starts
    with the first whole bucket after its end, so the bucket the change happened in (mixed
    before and after) counts in neither.
    """

    resolution: Resolution
    slots: int
    before_start: datetime
    before_end: datetime
    after_start: datetime
    after_end: datetime

    @property
    def slot_seconds(self) -> float:
        """Length of one slot in seconds."""
        return self.resolution.width.total_seconds()

    @property
    def window_seconds(self) -> int:
        """Length of each window in seconds."""
        return int(self.slots * self.slot_seconds)

    def slot_of(self, bucket_start: datetime) -> tuple[bool, int] | None:
        """(is after, slot index) of a bucket start, or None when it is in neither window."""
        width = self.resolution.width
        if self.before_start <= bucket_start < self.before_end:
            return False, (bucket_start - self.before_start) // width
        if self.after_start <= bucket_start < self.after_end:
            return True, (bucket_start - self.after_start) // width
        return None

    def first_observed(self, since: datetime | None) -> tuple[int, int]:
        """The first slot of (before, after) at or after the slot holding ``since``.

        Slots before the one in which a query (on an instance) was first seen were not
        monitored: they are missing, not zero. ``since`` None: everything was observed.
        """
        if since is None:
            return 0, 0
        start = floor_to(since, self.resolution)
        width = self.resolution.width

        def first(window_start: datetime) -> int:
            return min(self.slots, max(0, (start - window_start) // width))

        return first(self.before_start), first(self.after_start)


def plan_windows(
    *,
    time: datetime,
    end_time: datetime | None,
    window: timedelta,
    now: datetime,
    retained_since: Mapping[Resolution, datetime],
    max_slots: int,
) -> ImpactPlan:
    """The finest resolution still kept that splits ``window`` into at most ``max_slots``.

    An after window that has not fully elapsed is cut to the whole slots elapsed by ``now``,
    and the before window to the same length: the two windows are always equal.

    Raises:
        NothingToCompare: no data can be compared (after window not started, data expired).
    """
    after_from = end_time or time
    for resolution in _FINE_TO_COARSE:
        width = resolution.width
        slots = window // width
        if slots < 1 or slots > max_slots:
            continue
        before_end = floor_to(time, resolution)
        if retained_since[resolution] > before_end - slots * width:
            continue
        after_start = ceil_to(after_from, resolution)
        elapsed = max(0, (floor_to(now, resolution) - after_start) // width)
        slots = min(slots, elapsed)
        if slots < 1:
            raise NothingToCompare(
                f"The window after the annotation has no whole {resolution.value} yet: it "
                f"starts at {after_start.isoformat()}; ask again after "
                f"{(after_start + width).isoformat()}."
            )
        return ImpactPlan(
            resolution=resolution,
            slots=slots,
            before_start=before_end - slots * width,
            before_end=before_end,
            after_start=after_start,
            after_end=after_start + slots * width,
        )
    raise NothingToCompare(
        "The metric store no longer keeps data fine enough for this window before the "
        "annotation (minute buckets are kept for a few days, hour buckets longer): use a "
        "longer window, e.g. 1d."
    )


@dataclass(slots=True)
class Slot:
    """One query's metrics in one slot (summed over instances, schemas, users, hosts)."""

    count: int = 0
    query_time: float = 0.0
    # Only from buckets whose source reports rows examined, with the calls they cover.
    rows_examined: int | None = None
    rows_examined_calls: int = 0
    histogram: LatencyHistogram | None = None

    def add(
        self,
        *,
        count: int,
        query_time: float,
        rows_examined: int | None,
        histogram: LatencyHistogram | None,
    ) -> None:
        """Fold one stored bucket into the slot; the slot takes ownership of ``histogram``."""
        self.count += count
        self.query_time += query_time
        if rows_examined is not None:
            self.rows_examined = (self.rows_examined or 0) + rows_examined
            self.rows_examined_calls += count
        if histogram is not None:
            # The first one is kept as is: most slots hold one bucket, and a copy per bucket
            # is what an impact over hours of minutes would spend its time on.
            if self.histogram is None:
                self.histogram = histogram
            else:
                self.histogram.merge(histogram)


@dataclass(frozen=True, slots=True)
class Thresholds:
    """When a change counts as significant: the test says it is real *and* it is large.

    The test alone is not enough: with hundreds of minutes per window it finds even a 1 %
    shift "significant", and a query of 100 microseconds that gets 60 faster because its
    neighbour stopped scanning a table is a real change nobody should act on. A size floor
    alone is not enough either: it is the raw threshold that noisy queries cross by chance,
    window after window. So a change is significant when the Mann-Whitney U p-value is below
    ``alpha``, the relative change is at least ``min_relative_change`` and, for load and
    latencies, the absolute change is at least ``min_load_change`` (average active
    sessions) or ``min_latency_change`` (seconds). A frequent query's small per-call change
    still counts through its load.
    """

    alpha: float = 0.01
    min_relative_change: float = 0.10
    min_load_change: float = 0.001
    min_latency_change: float = 0.001

    def absolute_floor(self, metric: str) -> float:
        """The smallest absolute change of ``metric`` that can count (0: none)."""
        if metric == "load":
            return self.min_load_change
        if metric in ("avg_latency", "p95_latency"):
            return self.min_latency_change
        return 0.0


@dataclass(frozen=True, slots=True)
class MetricChange:
    """One metric in both windows and the size and significance of its change."""

    before: float | None
    after: float | None
    change: float | None
    change_pct: float | None
    p_value: float | None
    significant: bool


@dataclass(frozen=True, slots=True)
class QueryImpact:
    """Every metric of one query compared, with the overall status and verdict."""

    status: Status
    verdict: Verdict
    metrics: dict[str, MetricChange] = field(default_factory=dict)

    @property
    def load_change(self) -> float:
        """Absolute change in load (0 when unknown): the sort key of the impact list."""
        change = self.metrics["load"].change
        return abs(change) if change is not None else 0.0


def mann_whitney_p(before: Sequence[float], after: Sequence[float]) -> float | None:
    """Two-sided Mann-Whitney U p-value; None when a sample is empty, 1.0 when all are equal.

    Example:
        >>> mann_whitney_p([1.0] * 20, [1.0] * 20)
        1.0
        >>> mann_whitney_p([1.0, 1.1, 0.9, 1.05] * 5, [0.1, 0.12, 0.09, 0.11] * 5) < 0.001
        True
    """
    return mann_whitney_many([(before, after)])[0]


def mann_whitney_many(
    pairs: Sequence[tuple[Sequence[float], Sequence[float]]],
    alternative: str = "two-sided",
    *,
    exact_with_ties: bool = False,
) -> list[float | None]:
    """The p-values of :func:`mann_whitney_p` for many pairs of samples, in order.

    ``alternative``: scipy's, for each pair (first, second): ``"less"`` asks whether the
    second sample is larger (a regression detector's question), ``"two-sided"`` whether
    either is. ``exact_with_ties``: a sample of 8 or fewer gets the exact distribution even
    when values tie (uncorrected for ties): the normal approximation is far off at such sizes
    (one minute against 150 with ties: 0.044 or 7e-5 where the exact answer is 1/151).

    One scipy call per pair of sample sizes (vectorised over the pairs of that shape): a
    call costs about half a millisecond whatever its size, and an impact view tests five
    metrics of every query.

    Example:
        >>> [round(p, 4) for p in mann_whitney_many([([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]),
        ...                                          ([1, 2, 3, 4, 5], [5, 4, 3, 2, 1])])]
        [0.0079, 1.0]
    """
    # Imported here: scipy.stats takes seconds to import, and every `quanta` command and
    # the API load this module (the settings validate the announce window with it).
    import numpy as np
    from scipy.stats import mannwhitneyu

    out: list[float | None] = [None] * len(pairs)
    by_shape: dict[tuple[int, int, str], list[int]] = defaultdict(list)
    for i, (before, after) in enumerate(pairs):
        if not before or not after:
            continue
        if min(min(before), min(after)) == max(max(before), max(after)):
            out[i] = 1.0  # identical values: scipy would answer NaN
            continue
        # scipy's "auto" rule, per pair: a vectorised call would apply one choice to all rows.
        small = len(before) <= _EXACT_MAX_SIZE or len(after) <= _EXACT_MAX_SIZE
        ties = len(set(before) | set(after)) < len(before) + len(after)
        method = "exact" if small and (exact_with_ties or not ties) else "asymptotic"
        by_shape[(len(before), len(after), method)].append(i)
    for (_, _, method), indexes in by_shape.items():
        before_rows = np.array([pairs[i][0] for i in indexes], dtype=float)
        after_rows = np.array([pairs[i][1] for i in indexes], dtype=float)
        result = mannwhitneyu(
            before_rows, after_rows, axis=1, alternative=alternative, method=method
        )
        for i, p in zip(indexes, np.atleast_1d(result.pvalue), strict=True):
            out[i] = None if math.isnan(p) else float(p)
    return out


def _change(
    name: str,
    before: float | None,
    after: float | None,
    p_value: float | None,
    thresholds: Thresholds,
) -> MetricChange:
    change = after - before if before is not None and after is not None else None
    change_pct = change / before if change is not None and before else None
    if change is None or change == 0 or abs(change) < thresholds.absolute_floor(name):
        large = False
    elif change_pct is None:  # from nothing to something: larger than any floor
        large = True
    else:
        large = abs(change_pct) >= thresholds.min_relative_change
    return MetricChange(
        before=before,
        after=after,
        change=change,
        change_pct=change_pct,
        p_value=p_value,
        significant=large and p_value is not None and p_value < thresholds.alpha,
    )


@dataclass(frozen=True, slots=True)
class _Window:
    """One window's totals and per-slot samples of one query."""

    totals: dict[str, float | None]
    samples: dict[str, list[float]]


def _window(
    slots: Mapping[int, Slot], n_slots: int, slot_seconds: float, first: int = 0
) -> _Window:
    """One window's totals and samples, from slot ``first`` on: the slots before it were
    not observed (the instance or query was not monitored yet) and are missing, not zero."""
    observed = max(0, n_slots - first)
    if not observed:
        # Not seen in the whole window: nothing ran that anyone saw, and nothing to test.
        totals: dict[str, float | None] = dict.fromkeys(METRICS)
        totals.update(load=0.0, count=0.0)
        return _Window(totals, {name: [] for name in METRICS})
    ordered = [slots.get(i) for i in range(first, n_slots)]
    busy = [s for s in ordered if s is not None and s.count > 0]
    count = sum(s.count for s in busy)
    query_time = sum(s.query_time for s in busy)
    with_rows = [s for s in busy if s.rows_examined is not None and s.rows_examined_calls]
    rows_calls = sum(s.rows_examined_calls for s in with_rows)
    merged: LatencyHistogram | None = None
    for s in busy:
        if s.histogram is not None:
            if merged is None:
                merged = LatencyHistogram()
            merged.merge(s.histogram)
    # Observed minutes without a call weigh in as zero load and zero calls; latencies only
    # exist for minutes with calls, so only those are latency samples. Calls are the window's
    # at the observed rate, so a window partly before monitoring began is not diluted.
    totals = {
        "load": query_time / (observed * slot_seconds),
        "count": count * n_slots / observed,
        "avg_latency": query_time / count if count else None,
        "p95_latency": merged.quantile(P95) if merged is not None and count else None,
        "rows_examined_per_call": (
            sum(s.rows_examined or 0 for s in with_rows) / rows_calls if rows_calls else None
        ),
    }
    p95s = [s.histogram.quantile(P95) for s in busy if s.histogram is not None]
    samples: dict[str, list[float]] = {
        "load": [s.query_time / slot_seconds if s else 0.0 for s in ordered],
        "count": [float(s.count) if s else 0.0 for s in ordered],
        "avg_latency": [s.query_time / s.count for s in busy],
        "p95_latency": [p for p in p95s if p is not None],
        "rows_examined_per_call": [
            (s.rows_examined or 0) / s.rows_examined_calls for s in with_rows
        ],
    }
    return _Window(totals, samples)


def compare_query(
    before: Mapping[int, Slot],
    after: Mapping[int, Slot],
    *,
    slots: int,
    slot_seconds: float,
    thresholds: Thresholds,
) -> QueryImpact:
    """Compare one query's slots (by index, 0..slots-1) in the windows before and after.

    Example:
        >>> def busy(qt): return Slot(count=10, query_time=qt, rows_examined=1000,
        ...                           rows_examined_calls=10)
        >>> impact = compare_query({i: busy(2.0 + i % 3 / 10) for i in range(30)},
        ...                        {i: busy(0.2 + i % 3 / 100) for i in range(30)},
        ...                        slots=30, slot_seconds=60, thresholds=Thresholds())
        >>> impact.status.value, impact.verdict.value, impact.metrics["load"].significant
        ('changed', 'improved', True)
    """
    return compare_queries(
        {"": (before, after)}, slots=slots, slot_seconds=slot_seconds, thresholds=thresholds
    )[""]


def compare_queries(
    queries: Mapping[K, tuple[Mapping[int, Slot], Mapping[int, Slot]]],
    *,
    slots: int,
    slot_seconds: float,
    thresholds: Thresholds,
    observed_from: Mapping[K, tuple[int, int]] | None = None,
) -> dict[K, QueryImpact]:
    """:func:`compare_query` for many queries (slots before, slots after) at once.

    ``observed_from``: per query, the first slot of each window (before, after) in which it
    was observed (see :meth:`ImpactPlan.first_observed`); missing means from slot 0.
    """
    firsts = observed_from or {}
    windows = {}
    for key, (before, after) in queries.items():
        first_before, first_after = firsts.get(key, (0, 0))
        windows[key] = (
            _window(before, slots, slot_seconds, first_before),
            _window(after, slots, slot_seconds, first_after),
        )
    tests = [(key, name) for key in windows for name in METRICS]
    p_values = mann_whitney_many(
        [(windows[key][0].samples[name], windows[key][1].samples[name]) for key, name in tests]
    )
    p_of = dict(zip(tests, p_values, strict=True))
    out: dict[K, QueryImpact] = {}
    for key, (b, a) in windows.items():
        metrics = {
            name: _change(name, b.totals[name], a.totals[name], p_of[key, name], thresholds)
            for name in METRICS
        }
        out[key] = _impact(b, a, metrics)
    return out


def _impact(b: _Window, a: _Window, metrics: dict[str, MetricChange]) -> QueryImpact:
    before_calls, after_calls = b.totals["count"], a.totals["count"]
    if not before_calls and after_calls:
        return QueryImpact(Status.NEW, Verdict.NEW, metrics)
    if before_calls and not after_calls:
        return QueryImpact(Status.GONE, Verdict.GONE, metrics)
    changed = any(m.significant for m in metrics.values())
    return QueryImpact(Status.CHANGED if changed else Status.UNCHANGED, _verdict(metrics), metrics)


def _verdict(metrics: Mapping[str, MetricChange]) -> Verdict:
    # The query's own cost per call decides: latency, then rows examined, which an index
    # change moves even when the time saved is within the noise. Load and calls are context
    # only: when a change frees the server, closed-loop clients call a now faster query
    # more often and its load rises, which is throughput, not a regression.
    for name in VERDICT_METRICS:
        m = metrics[name]
        if m.significant and m.change:
            return Verdict.REGRESSED if m.change > 0 else Verdict.IMPROVED
    return Verdict.UNCHANGED
