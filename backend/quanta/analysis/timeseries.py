"""Shape sparse per-minute sums into evenly spaced series for charts."""

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

MINUTE = timedelta(minutes=1)


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
    sums = [0.0] * slots.count
    for ts, query_time in points:
        width = bucket_width(ts)
        if width <= slots.width:
            slot = slots.index(ts)
            if slot is not None:
                sums[slot] += query_time
            continue
        end = ts + width
        first = max(0, (ts - slots.start) // slots.width)
        for slot in range(first, slots.count):
            low = max(ts, slots.start + slot * slots.width)
            high = min(end, slots.start + (slot + 1) * slots.width)
            if high <= low:
                break
            sums[slot] += query_time * ((high - low) / width)
    seconds = slots.width.total_seconds()
    return [(ts, total / seconds) for ts, total in zip(slots.starts(), sums, strict=True)]
