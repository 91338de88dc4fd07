"""The pure impact statistics (quanta.analysis.impact): windows, comparisons, significance."""

import doctest
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from quanta.analysis import impact as impact_module
from quanta.analysis.histogram import LatencyHistogram
from quanta.analysis.impact import (
    NothingToCompare,
    Slot,
    Status,
    Thresholds,
    Verdict,
    compare_queries,
    compare_query,
    mann_whitney_many,
    mann_whitney_p,
    parse_window,
    plan_windows,
)
from quanta.analysis.resolution import Resolution
from tests.helpers import parse_yaml

T = datetime(2026, 11, 22, 3, 10, 27, tzinfo=UTC)
KEPT_ALL = {r: datetime(2000, 1, 1, tzinfo=UTC) for r in Resolution}
THRESHOLDS = Thresholds(alpha=0.01, min_relative_change=0.10)
DATA = Path(__file__).parent / "data"


def test_doctests() -> None:
    assert doctest.testmod(impact_module).failed == 0


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("5m", 300), ("15m", 900), ("1h", 3600), ("6h", 21600), ("1d", 86400), ("7d", 604800),
     ("1w", 604800), (" 90M ", 5400)],
)  # fmt: skip
def test_parse_window(text: str, seconds: int) -> None:
    assert parse_window(text).total_seconds() == seconds


@pytest.mark.parametrize(
    ("text", "message"),
    [("4m", "outside the accepted range"), ("8d", "outside the accepted range"),
     ("2w", "outside the accepted range"), ("0m", "outside the accepted range"),
     ("1h30m", "Cannot read window"), ("30s", "Cannot read window"), ("", "Cannot read"),
     ("-1h", "Cannot read window"), ("1.5h", "Cannot read window")],
)  # fmt: skip
def test_parse_window_refuses(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_window(text)


def plan(**overrides: object) -> impact_module.ImpactPlan:
    args: dict[str, object] = {
        "time": T,
        "end_time": None,
        "window": timedelta(hours=1),
        "now": T + timedelta(days=1),
        "retained_since": KEPT_ALL,
        "max_slots": 1440,
        **overrides,
    }
    return plan_windows(**args)  # type: ignore[arg-type]


def test_windows_skip_the_minute_of_the_change() -> None:
    p = plan()
    assert p.resolution is Resolution.MINUTE
    assert p.slots == 60
    assert p.window_seconds == 3600
    assert (p.before_start, p.before_end) == (T.replace(hour=2, second=0), T.replace(second=0))
    assert (p.after_start, p.after_end) == (
        T.replace(minute=11, second=0),
        T.replace(hour=4, minute=11, second=0),
    )
    assert p.slot_of(T.replace(hour=2, second=0)) == (False, 0)
    assert p.slot_of(T.replace(minute=9, second=0)) == (False, 59)
    assert p.slot_of(T.replace(second=0)) is None  # the minute of the change itself
    assert p.slot_of(T.replace(minute=11, second=0)) == (True, 0)
    assert p.slot_of(T.replace(hour=4, minute=11, second=0)) is None


def test_ranged_annotation_after_window_starts_at_its_end() -> None:
    end = T + timedelta(hours=2, minutes=3)
    p = plan(end_time=end)
    assert p.before_end == T.replace(second=0)
    assert p.after_start == end.replace(minute=14, second=0)
    assert p.after_end - p.after_start == p.before_end - p.before_start == timedelta(hours=1)


def test_an_after_window_still_running_is_cut_and_the_before_window_too() -> None:
    p = plan(now=T + timedelta(minutes=20, seconds=5))
    # Whole minutes elapsed after 03:11 by 03:30:32: 03:11 .. 03:30 (19).
    assert p.slots == 19
    assert p.after_end == T.replace(minute=30, second=0)
    assert p.before_start == T.replace(minute=10, second=0) - timedelta(minutes=19)
    with pytest.raises(NothingToCompare, match="ask again after 2026-11-22T03:12:00"):
        plan(now=T + timedelta(seconds=40))


def test_coarser_buckets_for_long_windows_or_expired_minutes() -> None:
    week = plan(window=timedelta(days=7), now=T + timedelta(days=8))
    assert week.resolution is Resolution.HOUR
    assert week.slots == 168
    assert week.before_end == T.replace(minute=0, second=0)
    assert week.after_start == T.replace(hour=4, minute=0, second=0)
    minutes_gone = {**KEPT_ALL, Resolution.MINUTE: T - timedelta(minutes=30)}
    older = plan(window=timedelta(hours=6), retained_since=minutes_gone)
    assert older.resolution is Resolution.HOUR
    assert older.slots == 6
    with pytest.raises(NothingToCompare, match="use a longer window"):
        plan(window=timedelta(minutes=30), retained_since=minutes_gone)


def busy(calls: int, seconds_each: float, rows_each: int = 10) -> Slot:
    slot = Slot()
    histogram = LatencyHistogram()
    histogram.add(seconds_each, calls)
    slot.add(
        count=calls,
        query_time=calls * seconds_each,
        rows_examined=calls * rows_each,
        histogram=histogram,
    )
    return slot


def compare(before: dict[int, Slot], after: dict[int, Slot], slots: int = 30):  # type: ignore[no-untyped-def]
    return compare_query(before, after, slots=slots, slot_seconds=60, thresholds=THRESHOLDS)


def test_an_index_makes_a_query_improved_on_every_metric() -> None:
    rng = random.Random(1)
    before = {i: busy(20, 0.050 * rng.uniform(0.8, 1.2), 50_000) for i in range(30)}
    after = {i: busy(20, 0.002 * rng.uniform(0.8, 1.2), 20) for i in range(30)}
    result = compare(before, after)
    assert result.status is Status.CHANGED
    assert result.verdict is Verdict.IMPROVED
    m = result.metrics
    for name in ("load", "avg_latency", "p95_latency", "rows_examined_per_call"):
        assert m[name].significant, name
        assert (m[name].change_pct or 0) < -0.9, name
        assert (m[name].p_value or 1) < 1e-6, name
    assert m["rows_examined_per_call"].before == 50_000
    assert m["rows_examined_per_call"].after == 20
    assert m["count"].before == m["count"].after == 600
    assert not m["count"].significant
    assert m["count"].p_value == 1.0
    assert m["load"].before == pytest.approx(sum(s.query_time for s in before.values()) / 1800)


def test_noise_is_not_flagged() -> None:
    rng = random.Random(7)

    def noisy() -> Slot:
        return busy(rng.randint(15, 25), 0.010 * rng.lognormvariate(0, 0.3))

    result = compare({i: noisy() for i in range(30)}, {i: noisy() for i in range(30)})
    assert result.status is Status.UNCHANGED
    assert result.verdict is Verdict.UNCHANGED
    assert not any(m.significant for m in result.metrics.values())


def test_a_real_but_tiny_shift_is_not_flagged() -> None:
    # 1,440 minutes make a 3% latency shift "statistically significant"; too small to matter.
    rng = random.Random(3)
    before = {i: busy(10, 0.0100 * rng.uniform(0.99, 1.01)) for i in range(1440)}
    after = {i: busy(10, 0.0103 * rng.uniform(0.99, 1.01)) for i in range(1440)}
    result = compare(before, after, slots=1440)
    avg = result.metrics["avg_latency"]
    assert avg.p_value is not None
    assert avg.p_value < 1e-10
    assert avg.change_pct == pytest.approx(0.03, abs=0.005)
    assert not avg.significant
    assert result.status is Status.UNCHANGED


def test_a_large_change_from_one_outlier_minute_is_not_flagged() -> None:
    # The mean load doubles because of one slow minute; the test says it is chance.
    before = {i: busy(10, 0.010) for i in range(30)}
    after = {i: busy(10, 0.010) for i in range(30)}
    after[12] = busy(10, 0.310)
    load = compare(before, after).metrics["load"]
    assert load.change_pct is not None
    assert load.change_pct > 0.9
    assert load.p_value is not None
    assert load.p_value > 0.1
    assert not load.significant


def test_new_and_gone_queries() -> None:
    some = {i: busy(5, 0.02) for i in range(30)}
    new = compare({}, some)
    assert (new.status, new.verdict) == (Status.NEW, Verdict.NEW)
    assert new.metrics["load"].before == 0.0
    assert new.metrics["load"].change_pct is None
    assert new.metrics["avg_latency"].before is None
    assert new.metrics["avg_latency"].change is None
    gone = compare(some, {})
    assert (gone.status, gone.verdict) == (Status.GONE, Verdict.GONE)
    assert gone.metrics["load"].after == 0.0
    assert gone.metrics["load"].change_pct == -1.0
    assert gone.metrics["load"].significant


def test_a_tiny_query_getting_faster_is_not_worth_a_flag() -> None:
    # What a PK lookup did on MariaDB once its neighbour stopped scanning a table: 96 us to
    # 36 us per call, clear to the test, worth 0.00002 active sessions to the server.
    rng = random.Random(9)
    before = {i: busy(20, 0.000096 * rng.uniform(0.8, 1.2), 1) for i in range(30)}
    after = {i: busy(20, 0.000036 * rng.uniform(0.8, 1.2), 1) for i in range(30)}
    result = compare(before, after)
    for name in ("load", "avg_latency", "p95_latency"):
        m = result.metrics[name]
        assert m.p_value is not None
        assert m.p_value < 1e-6
        assert (m.change_pct or 0) < -0.5
        assert not m.significant, name
    assert (result.status, result.verdict) == (Status.UNCHANGED, Verdict.UNCHANGED)
    # The same change with the floors at zero is flagged: the floors are what keep it out.
    no_floor = Thresholds(min_load_change=0, min_latency_change=0)
    flagged = compare_query(before, after, slots=30, slot_seconds=60, thresholds=no_floor)
    assert (flagged.status, flagged.verdict) == (Status.CHANGED, Verdict.IMPROVED)


def test_metrics_a_source_does_not_give_stay_unknown() -> None:
    slot = Slot()
    slot.add(count=10, query_time=0.5, rows_examined=None, histogram=None)
    result = compare(dict.fromkeys(range(30), slot), dict.fromkeys(range(30), slot))
    for name in ("p95_latency", "rows_examined_per_call"):
        m = result.metrics[name]
        assert (m.before, m.after, m.change, m.p_value, m.significant) == (
            None, None, None, None, False
        )  # fmt: skip


def test_many_tests_at_once_give_scipys_answer_for_each_pair() -> None:
    # Imported here, as quanta.analysis.impact does: scipy.stats takes 1.4 s to import, and
    # every pytest worker collects this module.
    from scipy.stats import mannwhitneyu

    rng = random.Random(4)
    pairs: list[tuple[list[float], list[float]]] = []
    for _ in range(200):
        n, m = rng.choice([3, 5, 8, 9, 30]), rng.choice([4, 5, 8, 30])
        # Some pairs with ties (rounded values), some without; shapes shared by many pairs.
        digits = rng.choice([1, 6])
        pairs.append(
            (
                [round(rng.random(), digits) for _ in range(n)],
                [round(rng.random() + rng.choice([0, 0.5]), digits) for _ in range(m)],
            )
        )
    expected = [float(mannwhitneyu(a, b, alternative="two-sided").pvalue) for a, b in pairs]
    assert mann_whitney_many(pairs) == pytest.approx(expected, rel=1e-9)


def test_mann_whitney_edges() -> None:
    assert mann_whitney_p([], [1.0]) is None
    assert mann_whitney_p([2.0, 2.0], [2.0]) == 1.0
    p = mann_whitney_p([1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0])
    assert p == pytest.approx(0.007937, rel=1e-3)  # the exact two-sided value, 2/252


VERDICT_CASES = parse_yaml((DATA / "impact_verdicts.yaml").read_text())


def window_slots(spec: dict[str, Any], slots: int, rng: random.Random) -> dict[int, Slot]:
    """The slots a case's window spec describes, with a seeded +-10 % jitter."""
    if not spec["calls"]:
        return {}
    return {
        i: busy(
            round(spec["calls"] * rng.uniform(0.9, 1.1)),
            spec["latency"] * rng.uniform(0.9, 1.1),
            spec.get("rows", 10),
        )
        for i in range(spec.get("from", 0), slots, spec.get("every", 1))
    }


@pytest.mark.parametrize("case", VERDICT_CASES, ids=[c["name"] for c in VERDICT_CASES])
def test_verdicts(case: dict[str, Any]) -> None:
    slots = case.get("slots", 30)
    rng = random.Random(case["name"])
    before = window_slots(case["before"], slots, rng)
    after = window_slots(case["after"], slots, rng)
    observed = {"q": tuple(case["observed_from"])} if "observed_from" in case else None
    result = compare_queries(
        {"q": (before, after)},
        slots=slots,
        slot_seconds=60,
        thresholds=THRESHOLDS,
        observed_from=observed,  # type: ignore[arg-type]
    )["q"]
    expect = case["expect"]
    significant = sorted(name for name, m in result.metrics.items() if m.significant)
    assert (result.status.value, result.verdict.value, significant) == (
        expect["status"], expect["verdict"], sorted(expect["significant"])
    )  # fmt: skip
    for side in ("before", "after"):
        for name, value in expect.get(side, {}).items():
            got = getattr(result.metrics[name], side)
            assert got == pytest.approx(value, rel=0.1, abs=1e-9), name
