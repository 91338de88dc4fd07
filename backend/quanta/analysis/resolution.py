"""Time resolutions of the metric store, and which of them answers a time range.

Buckets are kept at three resolutions: minutes (kept briefly), hours and days (kept long).
A read over ``[start, end)`` is answered by the coarsest buckets that fit: whole days from day
buckets, the whole hours at either side from hour buckets, the minutes left at the edges from
minute buckets. Where a finer resolution has already been deleted by retention, the edge is
answered by the finest one still kept (buckets *starting* in the edge), so a range never reads
a deleted resolution.

Example:
    >>> from datetime import UTC, datetime
    >>> kept = {r: datetime(2000, 1, 1, tzinfo=UTC) for r in Resolution}
    >>> start = datetime(2026, 1, 1, 23, 30, tzinfo=UTC)
    >>> end = datetime(2026, 1, 3, 1, 5, tzinfo=UTC)
    >>> [(s.resolution.value, s.start.strftime("%d %H:%M"), s.end.strftime("%d %H:%M"))
    ...  for s in plan_reads(start, end, kept)]  # doctest: +NORMALIZE_WHITESPACE
    [('minute', '01 23:30', '02 00:00'), ('day', '02 00:00', '03 00:00'),
     ('hour', '03 00:00', '03 01:00'), ('minute', '03 01:00', '03 01:05')]
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

__all__ = [
    "COARSE_TO_FINE",
    "Resolution",
    "Segment",
    "ceil_to",
    "floor_to",
    "plan_reads",
    "series_resolution",
    "width_at",
]


class Resolution(enum.StrEnum):
    """Width of a metric bucket."""

    MINUTE = "minute"
    HOUR = "hour"
    DAY = "day"

    @property
    def width(self) -> timedelta:
        """The bucket width."""
        return _WIDTHS[self]


_WIDTHS = {
    Resolution.MINUTE: timedelta(minutes=1),
    Resolution.HOUR: timedelta(hours=1),
    Resolution.DAY: timedelta(days=1),
}

COARSE_TO_FINE = (Resolution.DAY, Resolution.HOUR, Resolution.MINUTE)
_FINE_TO_COARSE = tuple(reversed(COARSE_TO_FINE))


def floor_to(ts: datetime, resolution: Resolution) -> datetime:
    """The start of the UTC bucket holding ``ts`` (an aware datetime).

    Example:
        >>> floor_to(datetime(2026, 1, 1, 10, 42, 7, tzinfo=UTC), Resolution.HOUR).hour
        10
    """
    ts = ts.astimezone(UTC)
    if resolution is Resolution.MINUTE:
        return ts.replace(second=0, microsecond=0)
    if resolution is Resolution.HOUR:
        return ts.replace(minute=0, second=0, microsecond=0)
    return ts.replace(hour=0, minute=0, second=0, microsecond=0)


def ceil_to(ts: datetime, resolution: Resolution) -> datetime:
    """The first bucket start at or after ``ts``.

    Example:
        >>> ceil_to(datetime(2026, 1, 1, 10, 42, tzinfo=UTC), Resolution.HOUR).hour
        11
    """
    start = floor_to(ts, resolution)
    return start if start == ts else start + resolution.width


@dataclass(frozen=True, slots=True)
class Segment:
    """Read buckets of ``resolution`` whose start lies in ``[start, end)``."""

    resolution: Resolution
    start: datetime
    end: datetime


def width_at(segments: Sequence[Segment]) -> Callable[[datetime], timedelta]:
    """The bucket width at a bucket start, from the segment that read it."""

    def width(start: datetime) -> timedelta:
        for segment in segments:
            if segment.start <= start < segment.end:
                return segment.resolution.width
        return Resolution.MINUTE.width

    return width


def plan_reads(
    start: datetime, end: datetime, retained_since: Mapping[Resolution, datetime]
) -> list[Segment]:
    """Split ``[start, end)`` into segments, each read at the coarsest resolution that fits.

    Args:
        start: Start of the range (aware).
        end: End of the range (aware), after ``start``.
        retained_since: Per resolution, the oldest bucket start retention still keeps.

    Returns:
        Segments in time order that together cover the range without overlap.

    Example:
        >>> kept = {Resolution.MINUTE: datetime(2026, 1, 2, tzinfo=UTC),
        ...         Resolution.HOUR: datetime(2000, 1, 1, tzinfo=UTC),
        ...         Resolution.DAY: datetime(2000, 1, 1, tzinfo=UTC)}
        >>> [s.resolution.value for s in plan_reads(datetime(2026, 1, 1, 10, 30, tzinfo=UTC),
        ...                                        datetime(2026, 1, 1, 12, tzinfo=UTC), kept)]
        ['hour']
    """

    def finest_kept(at: datetime) -> Resolution:
        for resolution in _FINE_TO_COARSE:
            if retained_since[resolution] <= at:
                return resolution
        return Resolution.DAY

    def plan(lo: datetime, hi: datetime, levels: tuple[Resolution, ...]) -> list[Segment]:
        if lo >= hi:
            return []
        resolution, finer = levels[0], levels[1:]
        if not finer or resolution is finest_kept(lo):
            return [Segment(resolution, lo, hi)]
        whole_start, whole_end = ceil_to(lo, resolution), floor_to(hi, resolution)
        if whole_start >= whole_end:
            return plan(lo, hi, finer)
        return [
            *plan(lo, whole_start, finer),
            Segment(resolution, whole_start, whole_end),
            *plan(whole_end, hi, finer),
        ]

    return plan(start, end, COARSE_TO_FINE)


def series_resolution(
    start: datetime, end: datetime, retained_since: Mapping[Resolution, datetime], max_points: int
) -> Resolution:
    """The finest resolution still kept at ``start`` giving at most ``max_points`` buckets.

    A chart reads one resolution over the whole range (buckets starting from the one holding
    ``start``); day buckets when nothing finer fits.

    Example:
        >>> kept = {r: datetime(2000, 1, 1, tzinfo=UTC) for r in Resolution}
        >>> start = datetime(2026, 1, 1, tzinfo=UTC)
        >>> series_resolution(start, start + timedelta(hours=6), kept, 360).value
        'minute'
        >>> series_resolution(start, start + timedelta(days=1), kept, 360).value
        'hour'
        >>> series_resolution(start, start + timedelta(days=30), kept, 360).value
        'day'
    """
    for resolution in _FINE_TO_COARSE:
        first = floor_to(start, resolution)
        if retained_since[resolution] <= first and (end - first) / resolution.width <= max_points:
            return resolution
    return Resolution.DAY
