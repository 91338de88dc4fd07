"""Ranked profiles: exact sums in microseconds, percentages that add up to 100.00."""

from __future__ import annotations

from decimal import Decimal
from itertools import product

import pytest

from quanta.analysis.profile import (
    LOST_TIME,
    Profile,
    ProfileRow,
    ProfileRun,
    Stage,
    combine_profiles,
    rank_profile,
    stages_from_performance_schema,
    stages_from_show_profile,
)

HUNDRED = Decimal("100.00")
# SHOW PROFILE FOR QUERY n of `SELECT COUNT(*) FROM orders WHERE amount > 3` (20,000 rows),
# captured from MariaDB 10.11.
MARIADB_SHOW_PROFILE = [
    ("Starting", "0.000048"), ("checking permissions", "0.000003"),
    ("Opening tables", "0.000010"), ("After opening tables", "0.000003"),
    ("System lock", "0.000003"), ("table lock", "0.000005"), ("init", "0.000018"),
    ("Optimizing", "0.000013"), ("Statistics", "0.000019"), ("Preparing", "0.000018"),
    ("Executing", "0.000002"), ("Sending data", "0.005894"),
    ("End of update loop", "0.000016"), ("Query end", "0.000006"), ("Commit", "0.000005"),
    ("Query end", "0.000003"), ("closing tables", "0.000003"),
    ("Unlocking tables", "0.000002"), ("closing tables", "0.000005"),
    ("Query end", "0.000002"), ("Starting cleanup", "0.000002"), ("Freeing items", "0.000005"),
    ("Updating status", "0.000373"), ("Logging slow query", "0.000076"),
    ("Reset for next command", "0.000040"),
]  # fmt: skip
# SHOW PROFILES said 0.00657565 s; the stages, each rounded to the microsecond, add to this.
MARIADB_STAGE_US = 6574


def show_profile_rows() -> list[dict[str, str]]:
    return [{"Status": s, "Duration": d} for s, d in MARIADB_SHOW_PROFILE]


def row(profile: Profile, state: str) -> ProfileRow:
    return next(r for r in profile.rows if r.state == state)


def test_show_profile_rows_become_exact_microseconds() -> None:
    stages = stages_from_show_profile(show_profile_rows())
    assert len(stages) == len(MARIADB_SHOW_PROFILE)
    assert stages[11] == Stage("Sending data", 5894)
    assert sum(stage.duration_us for stage in stages) == MARIADB_STAGE_US


def test_three_runs_of_a_real_profile() -> None:
    stages = stages_from_show_profile(show_profile_rows())
    runs = [ProfileRun(response_us, stages) for response_us in (7000, 7500, 6575)]
    profile = rank_profile(runs)

    assert profile.response_us == 7000 + 7500 + 6575
    assert profile.lost_us == 426 + 926 + 1
    assert sum(r.total_us for r in profile.rows) == profile.response_us
    assert sum(r.percent for r in profile.rows) == HUNDRED
    first = profile.rows[0]
    assert (first.state, first.total_us, first.calls, first.per_call_us) == (
        "Sending data", 3 * 5894, 3, 5894.0)  # fmt: skip
    # Sending data: 17682 of 21075 us = 83.900...%
    assert first.percent == Decimal("83.90")
    query_end = row(profile, "Query end")  # three calls a run, 11 us a run
    assert (query_end.total_us, query_end.calls) == (33, 9)
    assert query_end.per_call_us == pytest.approx(33 / 9)
    assert profile.rows[-1].state == LOST_TIME
    assert (profile.rows[-1].total_us, profile.rows[-1].calls) == (1353, 3)
    assert profile.rows[-1].per_call_us == 451.0


def test_rows_are_worst_first_then_by_name_and_lost_time_is_last() -> None:
    run = ProfileRun(
        10_000,
        (Stage("b", 100), Stage("a", 100), Stage("c", 5000), Stage("d", 1)),
    )
    assert [r.state for r in rank_profile([run]).rows] == ["c", "a", "b", "d", LOST_TIME]


def test_largest_remainder_rounding() -> None:
    """Three equal thirds round to 33.33 each; the missing 0.01 goes to the first."""
    run = ProfileRun(3, (Stage("a", 1), Stage("b", 1), Stage("c", 1)))
    percents = [r.percent for r in rank_profile([run]).rows]
    assert percents == [Decimal("33.34"), Decimal("33.33"), Decimal("33.33"), Decimal("0.00")]
    assert sum(percents) == HUNDRED


@pytest.mark.parametrize(
    ("durations", "response"),
    [
        (durations, response)
        for durations, response in product(
            [(1, 1, 1), (2, 3, 5, 7), (1, 999_999), (333, 333, 333, 1), (7, 7, 7, 7, 7, 7)],
            [0, 1, 7, 1000, 1_000_001],
        )
    ],
)
def test_percentages_always_sum_to_100(durations: tuple[int, ...], response: int) -> None:
    run = ProfileRun(response, tuple(Stage(f"s{i}", d) for i, d in enumerate(durations)))
    profile = rank_profile([run])
    assert sum(r.percent for r in profile.rows) == HUNDRED
    assert profile.response_us == max(response, sum(durations))
    assert sum(r.total_us for r in profile.rows) == profile.response_us


def test_stages_longer_than_the_response_leave_no_negative_lost_time() -> None:
    profile = rank_profile([ProfileRun(90, (Stage("a", 100),))])
    assert (profile.response_us, profile.lost_us) == (100, 0)
    assert [(r.state, r.percent) for r in profile.rows] == [
        ("a", HUNDRED),
        (LOST_TIME, Decimal("0.00")),
    ]


def test_nothing_measured_gives_zero_percentages() -> None:
    profile = rank_profile([])
    assert profile.response_us == 0
    assert [(r.state, r.total_us, r.percent, r.calls, r.per_call_us) for r in profile.rows] == [
        (LOST_TIME, 0, Decimal("0.00"), 0, 0.0)
    ]


def test_combining_profiles_of_examples_is_ranking_all_their_runs() -> None:
    one = rank_profile([ProfileRun(1000, (Stage("Sending data", 900),))])
    two = rank_profile(
        [
            ProfileRun(3000, (Stage("Sending data", 1000), Stage("Creating sort index", 1500))),
            ProfileRun(2000, (Stage("Creating sort index", 1900),)),
        ]
    )
    combined = combine_profiles([one, two])
    assert combined == rank_profile([*one.runs, *two.runs])
    assert combined.response_us == 6000
    assert [(r.state, r.total_us, r.calls, r.percent) for r in combined.rows] == [
        ("Creating sort index", 3400, 2, Decimal("56.67")),
        ("Sending data", 1900, 2, Decimal("31.67")),
        (LOST_TIME, 700, 3, Decimal("11.66")),
    ]


def test_performance_schema_stages() -> None:
    rows = [
        {"EVENT_NAME": "stage/sql/starting", "TIMER_WAIT": 48_400_000},
        {"EVENT_NAME": "stage/sql/Sending data", "TIMER_WAIT": 5_894_499_999},
        {"EVENT_NAME": "stage/innodb/alter table (end)", "TIMER_WAIT": None},
    ]
    assert stages_from_performance_schema(rows) == (
        Stage("starting", 48),
        Stage("Sending data", 5894),
        Stage("alter table (end)", 0),
    )


def test_to_dict() -> None:
    profile = rank_profile([ProfileRun(1000, (Stage("Sending data", 750),), rows_sent=3)])
    assert profile.to_dict() == {
        "runs": 1,
        "response_us": 1000,
        "lost_us": 250,
        "rows": [
            {"state": "Sending data", "total_us": 750, "percent": 75.0, "calls": 1,
             "per_call_us": 750.0, "lost_time": False},
            {"state": LOST_TIME, "total_us": 250, "percent": 25.0, "calls": 1,
             "per_call_us": 250.0, "lost_time": True},
        ],
        "run_response_us": [1000],
    }  # fmt: skip
