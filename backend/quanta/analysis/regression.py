"""Regressions of one query class: its recent cost per call against its own baseline.

Pure: the caller reads the query's slots from the metric store (the recent window in
minutes, the baseline before it at the finest resolution that keeps it under a few hundred
slots) and the instance's load; this module says whether the query regressed, since when,
by how much and how sure it is, or whether an open regression is back within its baseline.

A regression is reported only when it is all of these (`Rules` holds the thresholds):

* large: the recent per-call cost (average or p95 latency, rows examined per call) is at
  least ``min_ratio`` times the baseline's and at least ``min_latency_change`` seconds more
  per call (for rows examined: the average latency rose by that much too);
* significant: a one-sided Mann-Whitney U test of the recent minutes' values against the
  baseline slots' values gives p < ``alpha``;
* sustained: most of the recent minutes with calls (``sustained_fraction``) are slow, above
  ``slow_quantile`` of the baseline's slots and halfway to ``min_ratio``: one slow minute
  among fifteen is not enough, however slow (the share of slow minutes, as PlanetScale's
  anomalies count slow executions);
* heavy: the query carries ``min_load_share`` of the instance's load in the recent window,
  or ``min_active_sessions`` on its own.

The baseline is seasonal (only the slots at the hours of day of the recent window) when
those hours have calls on at least ``seasonal_min_days`` days: a query that is slow every
night at two is compared with other nights at two. A query with no calls in a baseline the
instance was monitored through, heavy now and carrying ``min_new_load`` active sessions, is a
new heavy query.

Minutes without data are missing, not zero (an agent restart, a gap): they are neither
samples nor slow minutes; the recent window needs calls in ``min_observed_fraction`` of its
minutes before anything is said.

Example:
    >>> from datetime import UTC, datetime, timedelta
    >>> end = datetime(2026, 3, 10, 14, 30, tzinfo=UTC)
    >>> w = Windows.ending(end, recent_minutes=15, baseline_minutes=120,
    ...                    baseline_resolution=Resolution.MINUTE)
    >>> def minute(i, seconds_each):
    ...     return Slot(count=20, query_time=20 * seconds_each * (1 + (i % 5) / 50))
    >>> base = {w.baseline_start + timedelta(minutes=i): minute(i, 0.004) for i in range(120)}
    >>> now = {w.recent_start + timedelta(minutes=i): minute(i, 0.040) for i in range(15)}
    >>> found = assess(base, now, windows=w, instance_query_time=200.0, rules=Rules())
    >>> found.kind.value, found.metric, found.since.strftime("%H:%M")
    ('regression', 'avg_latency', '14:15')
    >>> round(found.metrics["avg_latency"].ratio, 1)
    10.0
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from quanta.analysis.histogram import LatencyHistogram
from quanta.analysis.impact import Slot, mann_whitney_many
from quanta.analysis.resolution import Resolution, floor_to

__all__ = [
    "METRICS",
    "Assessment",
    "Clues",
    "Kind",
    "MetricEvidence",
    "Rules",
    "Windows",
    "assess",
    "baseline_resolution",
    "likely_cause",
    "per_call",
    "recovered",
]

# The per-call metrics compared, in order of precedence: the first that regressed is named.
METRICS = ("avg_latency", "p95_latency", "rows_examined_per_call")
P95 = 0.95
_MINUTE = timedelta(minutes=1)


class Kind(enum.StrEnum):
    """What was found."""

    REGRESSION = "regression"  # dearer per call than its baseline
    NEW = "new"  # no calls in a baseline the instance was monitored through, heavy now


@dataclass(frozen=True, slots=True)
class Rules:
    """When a change is reported (see the module's docstring for what each one guards)."""

    min_ratio: float = 2.0
    min_latency_change: float = 0.001
    alpha: float = 0.01
    min_load_share: float = 0.01
    min_active_sessions: float = 0.1
    # A new query is reported only with this load too: on a quiet server a connection's
    # `SET NAMES` carries a large share of almost nothing.
    min_new_load: float = 0.001
    seasonal_min_days: int = 3
    min_observed_fraction: float = 0.5
    slow_quantile: float = 0.9
    sustained_fraction: float = 0.5


@dataclass(frozen=True, slots=True)
class Windows:
    """The recent window (minutes) and the baseline before it (slots of ``baseline_width``).

    The baseline ends on a slot boundary at or before the recent window's start, so its
    slots are whole buckets of the store.
    """

    baseline_start: datetime
    baseline_end: datetime
    baseline_width: timedelta
    recent_start: datetime
    recent_end: datetime

    @classmethod
    def ending(
        cls,
        end: datetime,
        *,
        recent_minutes: int,
        baseline_minutes: int,
        baseline_resolution: Resolution,
    ) -> Windows:
        """The windows for a recent window of ``recent_minutes`` ending at ``end`` (a minute
        boundary) and a baseline of ``baseline_minutes`` before it."""
        recent_start = end - recent_minutes * _MINUTE
        baseline_end = floor_to(recent_start, baseline_resolution)
        return cls(
            baseline_start=baseline_end - baseline_minutes * _MINUTE,
            baseline_end=baseline_end,
            baseline_width=baseline_resolution.width,
            recent_start=recent_start,
            recent_end=end,
        )

    @property
    def recent_minutes(self) -> int:
        """Length of the recent window in minutes."""
        return (self.recent_end - self.recent_start) // _MINUTE

    def hours_of_day(self) -> set[int]:
        """The hours of day (UTC) the recent window covers."""
        hours, at = set(), self.recent_start
        while at < self.recent_end:
            hours.add(at.hour)
            at += _MINUTE
        return hours


def baseline_resolution(
    baseline_minutes: int, *, oldest_kept: Mapping[Resolution, datetime], start: datetime,
    max_slots: int,
) -> Resolution:  # fmt: skip
    """The finest resolution still kept at ``start`` that cuts the baseline into at most
    ``max_slots`` slots (minutes up to 6 hours at 360, hours beyond).

    Example:
        >>> from datetime import UTC, datetime
        >>> kept = {r: datetime(2000, 1, 1, tzinfo=UTC) for r in Resolution}
        >>> t = datetime(2026, 1, 1, tzinfo=UTC)
        >>> [baseline_resolution(m, oldest_kept=kept, start=t, max_slots=360).value
        ...  for m in (120, 10080, 60 * 24 * 30)]
        ['minute', 'hour', 'day']
    """
    for resolution in (Resolution.MINUTE, Resolution.HOUR):
        fits = baseline_minutes * _MINUTE // resolution.width <= max_slots
        if fits and oldest_kept[resolution] <= start:
            return resolution
    return Resolution.DAY


@dataclass(frozen=True, slots=True)
class MetricEvidence:
    """One per-call metric in the baseline and the recent window, and each test's outcome.

    ``slow_line`` is where a recent minute counts as slow (see ``_slow_line``);
    ``slow_minutes`` the recent minutes above it, out of ``minutes`` with a value.
    """

    before: float | None
    after: float | None
    ratio: float | None
    p_value: float | None
    slow_line: float | None
    slow_minutes: int
    minutes: int
    large: bool
    significant: bool
    sustained: bool
    since: datetime | None

    @property
    def regressed(self) -> bool:
        """Large, significant and sustained."""
        return self.large and self.significant and self.sustained


@dataclass(frozen=True, slots=True)
class Assessment:
    """What one query's windows say: ``kind`` None when there is nothing to report, with
    ``reason`` saying why (too few minutes, not heavy, no metric regressed, ...)."""

    kind: Kind | None
    reason: str
    metric: str | None = None
    since: datetime | None = None
    seasonal: bool = False
    load: float = 0.0
    load_share: float = 0.0
    observed_minutes: int = 0
    baseline_slots: int = 0
    calls_per_minute_before: float | None = None
    calls_per_minute_after: float | None = None
    metrics: dict[str, MetricEvidence] = field(default_factory=dict)

    def baseline_values(self) -> dict[str, float | None]:
        """Each metric's baseline value: what an open regression is measured against."""
        return {name: m.before for name, m in self.metrics.items()}


def assess(
    baseline: Mapping[datetime, Slot],
    recent: Mapping[datetime, Slot],
    *,
    windows: Windows,
    instance_query_time: float,
    rules: Rules,
    observed_since: datetime | None = None,
) -> Assessment:
    """Whether one query regressed (or is new and heavy) in the recent window.

    Args:
        baseline: The query's slots in the baseline, by start (``windows.baseline_width``).
        recent: The query's minute slots in the recent window, by start.
        windows: The two windows.
        instance_query_time: The instance's query time (seconds) in the recent window, all
            queries together: the denominator of the load share.
        rules: The thresholds.
        observed_since: When the instance was first monitored; a query is new only when
            this is at or before the baseline's start (None: it was).
    """
    minutes = [s for s in _in(recent, windows.recent_start, windows.recent_end) if s[1].count]
    query_time = sum(slot.query_time for _, slot in minutes)
    seconds = windows.recent_minutes * 60
    load = query_time / seconds if seconds else 0.0
    share = query_time / instance_query_time if instance_query_time > 0 else 0.0
    heavy = share >= rules.min_load_share or load >= rules.min_active_sessions
    none = Assessment(None, "", load=load, load_share=share, observed_minutes=len(minutes))
    needed = max(1, math.ceil(windows.recent_minutes * rules.min_observed_fraction))
    if len(minutes) < needed:
        return replace(none, reason=f"calls in {len(minutes)} recent minutes; {needed} needed")
    slots = [s for s in _in(baseline, windows.baseline_start, windows.baseline_end) if s[1].count]
    if not slots:
        monitored = observed_since is None or observed_since <= windows.baseline_start
        if heavy and monitored and load >= rules.min_new_load:
            reason = "no calls in the baseline, heavy now"
            return replace(none, kind=Kind.NEW, reason=reason, metric="load", since=minutes[0][0])
        return replace(none, reason="no calls in the baseline")
    slots, seasonal = _seasonal(slots, windows, rules)
    slot_minutes = windows.baseline_width // _MINUTE
    evidence = _compare([s for _, s in slots], minutes, rules)
    found = replace(
        none,
        seasonal=seasonal,
        baseline_slots=len(slots),
        calls_per_minute_before=sum(s.count for _, s in slots) / (len(slots) * slot_minutes),
        calls_per_minute_after=sum(s.count for _, s in minutes) / len(minutes),
        metrics=evidence,
    )
    regressed = [name for name in METRICS if evidence[name].regressed]
    if len(slots) * slot_minutes < needed:
        return replace(found, reason=f"baseline of {len(slots) * slot_minutes} minutes")
    if not regressed:
        return replace(found, reason="no per-call metric regressed")
    if not heavy:
        return replace(found, reason=f"{regressed[0]} regressed; not heavy")
    metric = regressed[0]
    since = _started(metric, evidence, minutes, baseline, windows, rules)
    if since is not None and since < windows.recent_start:
        # The slow minutes at the baseline's end are the regression, not its baseline.
        clean = [s for at, s in slots if at < since]
        evidence = _compare(clean, minutes, rules) if clean else evidence
        found = replace(found, baseline_slots=len(clean), metrics=evidence)
    return replace(
        found,
        kind=Kind.REGRESSION,
        reason=f"{metric} regressed",
        metric=metric,
        since=since,
    )


def recovered(
    recent: Mapping[datetime, Slot],
    *,
    windows: Windows,
    kind: Kind,
    metric: str,
    baseline_values: Mapping[str, float | None],
    instance_query_time: float,
    rules: Rules,
) -> bool | None:
    """Whether an open regression is back within its baseline over the recent window: its
    metric below ``min_ratio`` times the value stored when it was found, or (a latency)
    within ``min_latency_change`` of it; a new heavy query: no longer heavy. None when the
    window has too few minutes with calls (or no value of the metric) to say.

    Example:
        >>> from datetime import UTC, datetime, timedelta
        >>> end = datetime(2026, 3, 10, 14, 30, tzinfo=UTC)
        >>> w = Windows.ending(end, recent_minutes=15, baseline_minutes=120,
        ...                    baseline_resolution=Resolution.MINUTE)
        >>> now = {w.recent_start + timedelta(minutes=i): Slot(count=20, query_time=0.09)
        ...        for i in range(15)}
        >>> recovered(now, windows=w, kind=Kind.REGRESSION, metric="avg_latency",
        ...           baseline_values={"avg_latency": 0.004}, instance_query_time=3.0,
        ...           rules=Rules())
        True
    """
    minutes = [s for _, s in _in(recent, windows.recent_start, windows.recent_end) if s.count]
    if kind is Kind.NEW:
        query_time = sum(s.query_time for s in minutes)
        load = query_time / (windows.recent_minutes * 60)
        share = query_time / instance_query_time if instance_query_time > 0 else 0.0
        return share < rules.min_load_share and load < rules.min_active_sessions
    needed = max(1, math.ceil(windows.recent_minutes * rules.min_observed_fraction))
    if len(minutes) < needed:
        return None
    b, a = baseline_values.get(metric), per_call(minutes).get(metric)
    if b is None or a is None:
        return None
    # Back below the ratio, or (a latency) within the floor of the baseline: the metric that
    # regressed is back. (Not merely "no longer large": rows examined would then count as
    # back whenever the latency fell under the floor, with the rows still up.)
    floor = rules.min_latency_change if metric in ("avg_latency", "p95_latency") else 0.0
    return a < b * rules.min_ratio or a - b < floor


@dataclass(frozen=True, slots=True)
class Clues:
    """What Quanta knows around a regression's start, to name its likely cause.

    ``schema_statements``: (statement, when) of ALTER / CREATE INDEX / DROP INDEX and the like
    seen on the query's tables; ``annotations``: (text, when) of the instance's annotations;
    ``plan_before``/``plan_after``: the last stored plan before the start and a fresh one
    (one-line summaries; None when unknown); rows examined and calls from the assessment.
    """

    schema_statements: Sequence[tuple[str, datetime]] = ()
    annotations: Sequence[tuple[str, datetime]] = ()
    plan_before: str | None = None
    plan_after: str | None = None
    rows_before: float | None = None
    rows_after: float | None = None
    calls_before: float | None = None
    calls_after: float | None = None
    new_query: bool = False


def likely_cause(clues: Clues, *, min_ratio: float = 2.0) -> str:
    """The likely cause in a sentence: the strongest clue first, then the others.

    Schema statements on the query's tables come first (they change plans), then a changed
    plan, an annotation, rows examined per call growing with the same plan (data growth or
    skew), calls growing (load, not cost). Nothing: says so, and where to look.

    Example:
        >>> t = datetime(2026, 3, 10, 14, 3, 12)
        >>> likely_cause(Clues(schema_statements=[("drop index idx_phone on orders", t)],
        ...                    plan_before="orders ref on idx_phone", plan_after="orders ALL"))
        '“drop index idx_phone on orders” ran at 14:03:12 UTC on a table it reads; its plan changed from orders ref on idx_phone to orders ALL.'
    """  # noqa: E501
    parts = []
    if clues.new_query:
        parts.append("a query class not seen in the baseline")
    parts += [f"“{text}” ran at {_clock(at)} on a table it reads" for text, at in
              clues.schema_statements[-3:]]  # fmt: skip
    changed = clues.plan_before is not None and clues.plan_after is not None
    if changed and clues.plan_before != clues.plan_after:
        parts.append(f"its plan changed from {clues.plan_before} to {clues.plan_after}")
    parts += [f"“{text}” was annotated at {_clock(at)}" for text, at in clues.annotations[-3:]]
    rows = _grew(clues.rows_before, clues.rows_after, min_ratio)
    if rows:
        same = changed and clues.plan_before == clues.plan_after
        parts.append(
            f"rows examined per call rose from {rows}"
            + (" with the same plan: data growth or skew" if same else "")
        )
    calls = _grew(clues.calls_before, clues.calls_after, min_ratio)
    if calls:
        parts.append(f"calls rose from {calls} a minute: load, not the query's own cost")
    if not parts:
        return (
            "nothing Quanta saw explains it (no schema statement on its tables, annotation, "
            "plan change, or rise in rows examined or calls): look at the server itself "
            "(I/O, locks, other work)."
        )
    return "; ".join(parts) + "."


def _grew(before: float | None, after: float | None, ratio: float) -> str | None:
    if before is None or after is None or before <= 0 or after < before * ratio:
        return None
    return f"{before:,.0f} to {after:,.0f}"


def _clock(at: datetime) -> str:
    return at.strftime("%H:%M:%S UTC")


# --------------------------------------------------------------------------------- internals


def _in(
    slots: Mapping[datetime, Slot], start: datetime, end: datetime
) -> list[tuple[datetime, Slot]]:
    return sorted((at, slot) for at, slot in slots.items() if start <= at < end)


def _seasonal(
    slots: list[tuple[datetime, Slot]], windows: Windows, rules: Rules
) -> tuple[list[tuple[datetime, Slot]], bool]:
    """The baseline slots at the recent window's hours of day, when those hours have calls on
    enough days; else every slot."""
    hours = windows.hours_of_day()
    same_hours = [(at, slot) for at, slot in slots if at.hour in hours]
    days = {at.date() for at, _ in same_hours}
    if len(days) >= rules.seasonal_min_days:
        return same_hours, True
    return slots, False


def _value(slot: Slot, metric: str) -> float | None:
    """One slot's per-call value of ``metric`` (None: the slot does not give it)."""
    if metric == "avg_latency":
        return slot.query_time / slot.count if slot.count else None
    if metric == "p95_latency":
        return slot.histogram.quantile(P95) if slot.histogram is not None else None
    if slot.rows_examined is None or not slot.rows_examined_calls:
        return None
    return slot.rows_examined / slot.rows_examined_calls


def per_call(slots: Sequence[Slot]) -> dict[str, float | None]:
    """Each per-call metric over all the slots together (p95 of their merged histograms).

    Example:
        >>> per_call([Slot(count=2, query_time=0.5), Slot(count=3, query_time=0.5)])
        {'avg_latency': 0.2, 'p95_latency': None, 'rows_examined_per_call': None}
    """
    calls = sum(s.count for s in slots)
    merged: LatencyHistogram | None = None
    for s in slots:
        if s.histogram is not None:
            merged = merged or LatencyHistogram()
            merged.merge(s.histogram)
    rows = [s for s in slots if s.rows_examined is not None and s.rows_examined_calls]
    rows_calls = sum(s.rows_examined_calls for s in rows)
    return {
        "avg_latency": sum(s.query_time for s in slots) / calls if calls else None,
        "p95_latency": merged.quantile(P95) if merged is not None else None,
        "rows_examined_per_call": (
            sum(s.rows_examined or 0 for s in rows) / rows_calls if rows_calls else None
        ),
    }


def _large(
    metric: str,
    before: Mapping[str, float | None],
    after: Mapping[str, float | None],
    rules: Rules,
) -> bool:
    """At least ``min_ratio`` times the baseline, and dearer by ``min_latency_change`` per
    call (rows examined count only when the average latency rose that much too)."""
    b, a = before.get(metric), after.get(metric)
    if b is None or a is None or a < b * rules.min_ratio or a <= b:
        return False
    timed = metric if metric != "rows_examined_per_call" else "avg_latency"
    tb, ta = before.get(timed), after.get(timed)
    return tb is not None and ta is not None and ta - tb >= rules.min_latency_change


def _quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def _started(
    metric: str,
    evidence: Mapping[str, MetricEvidence],
    recent: Sequence[tuple[datetime, Slot]],
    baseline: Mapping[datetime, Slot],
    windows: Windows,
    rules: Rules,
) -> datetime | None:
    """The regression's first minute: the first recent minute large on its own (by the size
    rule, not merely slow: noise is slow one minute in ten), or earlier when such minutes
    run on into the end of a baseline read in minutes (a check that found it late)."""
    before = {name: m.before for name, m in evidence.items()}

    def large(slot: Slot) -> bool:
        return bool(slot.count) and _large(metric, before, per_call([slot]), rules)

    since = next((at for at, slot in recent if large(slot)), evidence[metric].since)
    if since != windows.recent_start or windows.baseline_width != _MINUTE:
        return since
    for at, slot in reversed(_in(baseline, windows.baseline_start, windows.baseline_end)):
        if not slot.count:
            continue  # a gap: missing, not fast
        if not large(slot):
            break
        since = at
    return since


def _slow_line(base: Sequence[float], before: float | None, rules: Rules) -> float | None:
    """Above this a recent minute is slow: the baseline slots' ``slow_quantile``, and at
    least halfway to ``min_ratio`` times the baseline (noise crosses a percentile alone one
    minute in ten)."""
    if not base or before is None:
        return None
    return max(_quantile(base, rules.slow_quantile), before * (1 + rules.min_ratio) / 2)


def _compare(
    baseline: Sequence[Slot], recent: Sequence[tuple[datetime, Slot]], rules: Rules
) -> dict[str, MetricEvidence]:
    before = per_call(baseline)
    after = per_call([s for _, s in recent])
    samples = {
        name: (
            [v for s in baseline if (v := _value(s, name)) is not None],
            [(at, v) for at, s in recent if (v := _value(s, name)) is not None],
        )
        for name in METRICS
    }
    p_values = [
        # No rank test can be surer than one arrangement of the ranks out of all of them
        # (the normal approximation, used from 9 recent minutes on, could claim more).
        None if p is None else max(p, 1 / math.comb(len(b) + len(a), len(a)))
        for p, (b, a) in zip(
            mann_whitney_many(
                [(b, [v for _, v in a]) for b, a in samples.values()],
                alternative="less",
                exact_with_ties=True,
            ),
            samples.values(),
            strict=True,
        )
    ]
    evidence = {}
    for (name, (base, now)), p in zip(samples.items(), p_values, strict=True):
        line = _slow_line(base, before[name], rules)
        slow = [at for at, v in now if line is not None and v > line]
        b, a = before[name], after[name]
        evidence[name] = MetricEvidence(
            before=b,
            after=a,
            ratio=a / b if a is not None and b else None,
            p_value=p,
            slow_line=line,
            slow_minutes=len(slow),
            minutes=len(now),
            large=_large(name, before, after, rules),
            significant=p is not None and p < rules.alpha,
            sustained=bool(now) and len(slow) >= rules.sustained_fraction * len(now),
            since=slow[0] if slow else None,
        )
    return evidence
