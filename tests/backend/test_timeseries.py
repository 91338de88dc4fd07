"""Slot planning and load series shaping."""

from datetime import UTC, datetime, timedelta

import pytest

from quanta.analysis.resolution import Resolution, Segment, width_at
from quanta.analysis.timeseries import Slots, load_series, plan_slots

T0 = datetime(2026, 11, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("span", "max_points", "width", "count"),
    [
        (timedelta(hours=24), 60, timedelta(minutes=24), 60),
        (timedelta(hours=1), 60, timedelta(minutes=1), 60),
        (timedelta(minutes=10), 60, timedelta(minutes=1), 10),
        (timedelta(seconds=30), 60, timedelta(minutes=1), 1),
        (timedelta(hours=1, seconds=1), 60, timedelta(minutes=2), 31),
        (timedelta(days=30), 60, timedelta(hours=12), 60),
    ],
)
def test_plan_slots(span: timedelta, max_points: int, width: timedelta, count: int) -> None:
    slots = plan_slots(T0, T0 + span, max_points)
    assert (slots.width, slots.count) == (width, count)
    assert slots.count <= max_points
    assert slots.start + slots.width * slots.count >= T0 + span


def test_load_series_fills_gaps_and_divides_by_slot_seconds() -> None:
    slots = Slots(start=T0, width=timedelta(minutes=2), count=3)
    series = load_series(
        [
            (T0, 30.0),
            (T0 + timedelta(minutes=1), 90.0),
            (T0 + timedelta(minutes=4), 12.0),
            (T0 + timedelta(minutes=6), 99.0),  # outside the slots: ignored
            (T0 - timedelta(minutes=1), 99.0),
        ],
        slots,
    )
    assert series == [
        (T0, 1.0),
        (T0 + timedelta(minutes=2), 0.0),
        (T0 + timedelta(minutes=4), 0.1),
    ]


def test_buckets_wider_than_a_slot_are_spread_over_the_slots_they_cover() -> None:
    # 24-minute slots from 00:50 over hour buckets: 01:00-02:00 covers slot 0 from 01:00
    # (14 of its 24 minutes), slot 1 whole, slot 2 for 22 minutes; the window cuts nothing.
    start = T0 + timedelta(minutes=50)
    slots = Slots(start=start, width=timedelta(minutes=24), count=4)
    hour = timedelta(hours=1)
    series = load_series([(T0 + hour, 3600.0)], slots, lambda _start: hour)
    shares = [load * 24 * 60 for _, load in series]  # query seconds per slot
    assert shares == pytest.approx([14 * 60, 24 * 60, 22 * 60, 0.0])
    assert sum(shares) == pytest.approx(3600.0)


def test_width_at_follows_the_segment_a_bucket_came_from() -> None:
    segments = [
        Segment(Resolution.HOUR, T0, T0 + timedelta(hours=2)),
        Segment(Resolution.MINUTE, T0 + timedelta(hours=2), T0 + timedelta(hours=3)),
    ]
    width = width_at(segments)
    assert width(T0 + timedelta(hours=1)) == timedelta(hours=1)
    assert width(T0 + timedelta(hours=2, minutes=5)) == timedelta(minutes=1)
