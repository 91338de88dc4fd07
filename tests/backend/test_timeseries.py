"""Slot planning and load series shaping."""

from datetime import UTC, datetime, timedelta

import pytest

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
