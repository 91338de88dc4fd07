"""Shape sparse per-minute sums into evenly spaced series for charts."""

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

MINUTE = timedelta(minutes=1)
_MICROSECOND = timedelta(microseconds=1)


@dataclass(frozen=True, slots=True)
class Slots:
    """`count` equal slots of `width` covering [start, start + count * width)."""

    start: datetime
    width: timedelta
    count: int

    def index(self, ts: datetime) -> int | None:
        """The slot holding `ts`, or None when it lies outside."""
        position = (ts - self.start) // self.width
        return position if 0 <= position < self.count else None

    def starts(self) -> list[datetime]:
        """The start time of every slot."""
        return [self.start + i * self.width for i in range(self.count)]


def plan_slots(start: datetime, end: datetime, max_points: int) -> Slots:
    """At most `max_points` slots over [start, end), each a whole number of minutes.

    Example:
        >>> s = plan_slots(datetime(2026, 1, 1), datetime(2026, 1, 2), 60)
        >>> (s.width, s.count)
        (datetime.timedelta(seconds=1440), 60)
    """
    span = end - start
    minutes = max(1, -(-span // (MINUTE * max_points)))  # ceiling division
    width = MINUTE * minutes
    count = max(1, -(-span // width))
    return Slots(start=start, width=width, count=count)


def load_series(
    points: Iterable[tuple[datetime, float]],
    slots: Slots,
    bucket_width: Callable[[datetime], timedelta] = lambda _start: MINUTE,
) -> list[tuple[datetime, float]]:
    """Average active sessions per slot from (bucket start, query time sum) points; gaps are 0.

    A bucket wider than a slot (an hour bucket under 24-minute slots) is spread evenly over
    the slots it covers: what it holds is known only at its own resolution, and putting it
    all in one slot would draw a spike followed by empty slots.

    Example:
        >>> s = Slots(datetime(2026, 1, 1), timedelta(minutes=2), 2)
        >>> load_series([(datetime(2026, 1, 1, 0, 1), 60.0)], s)[0][1]
        0.5
        >>> [load for _, load in load_series(
        ...     [(datetime(2026, 1, 1), 240.0)], s, lambda _start: timedelta(minutes=4))]
        [1.0, 1.0]
    """
    # In whole microseconds from the first slot (exact, as timedelta arithmetic): a 30-day
    # overview's 50 series of day buckets spread over 12-hour slots took 475 us each with
    # datetimes, a tenth of the request.
    origin, count = slots.start, slots.count
    slot = slots.width // _MICROSECOND
    sums = [0.0] * count
    for ts, query_time in points:
        width = bucket_width(ts)
        offset = (ts - origin) // _MICROSECOND
        if width <= slots.width:
            index = offset // slot
            if 0 <= index < count:
                sums[index] += query_time
            continue
        span = width // _MICROSECOND
        end = offset + span
        for index in range(max(0, offset // slot), count):
            low = max(offset, index * slot)
            high = min(end, (index + 1) * slot)
            if high <= low:
                break
            sums[index] += query_time * ((high - low) / span)
    seconds = slots.width.total_seconds()
    return [(ts, total / seconds) for ts, total in zip(slots.starts(), sums, strict=True)]
