"""Ranked response-time profiles from the stages of several runs of a query.

A run is what one execution measured: its response time as the client saw it, and the time
of each stage the server reports (SHOW PROFILE, or performance_schema's stage events). The
profile of a query combines all its runs (of one example or several): one row a state with
its total time, share of the response time, number of calls and time per call, worst
first, and a last ``lost time`` row for the response time no stage accounts for (network,
client, the server's own bookkeeping).

Times are whole microseconds, so every sum is exact; percentages are rounded with the
largest-remainder method so that the rows always add up to exactly 100.

Example:
    >>> run = ProfileRun(response_us=1000, stages=(
    ...     Stage("Sending data", 600), Stage("Opening tables", 100)))
    >>> [(r.state, r.total_us, str(r.percent)) for r in rank_profile([run]).rows]
    [('Sending data', 600, '60.00'), ('Opening tables', 100, '10.00'), ('lost time', 300, '30.00')]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

__all__ = [
    "LOST_TIME",
    "Profile",
    "ProfileRow",
    "ProfileRun",
    "Stage",
    "combine_profiles",
    "rank_profile",
    "stage_state",
    "stages_from_performance_schema",
    "stages_from_show_profile",
]

LOST_TIME = "lost time"
PERCENT_DECIMALS = 2
_PERCENT_UNITS = 100 * 10**PERCENT_DECIMALS  # 100.00 % in hundredths of a percent
_PERCENT_QUANTUM = Decimal(1).scaleb(-PERCENT_DECIMALS)
MICROSECONDS_PER_SECOND = 1_000_000
PICOSECONDS_PER_MICROSECOND = 1_000_000
# performance_schema names stages "stage/<component>/<State as SHOW PROFILE says it>".
_STAGE_PREFIX_PARTS = 2


@dataclass(frozen=True, slots=True)
class Stage:
    """One stage of one execution: the server's state name and how long it lasted."""

    state: str
    duration_us: int


@dataclass(frozen=True, slots=True)
class ProfileRun:
    """One execution: the response time measured around it, and its stages in order."""

    response_us: int
    stages: tuple[Stage, ...]
    rows_sent: int | None = None

    @property
    def stage_us(self) -> int:
        """Time the stages account for."""
        return sum(stage.duration_us for stage in self.stages)


@dataclass(frozen=True, slots=True)
class ProfileRow:
    """One state of the ranked profile (or the lost-time row)."""

    state: str
    total_us: int
    percent: Decimal
    calls: int
    per_call_us: float

    @property
    def is_lost_time(self) -> bool:
        """Whether this is the row for time no stage accounts for."""
        return self.state == LOST_TIME

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (percent as a number with two decimals)."""
        return {
            "state": self.state,
            "total_us": self.total_us,
            "percent": float(self.percent),
            "calls": self.calls,
            "per_call_us": round(self.per_call_us, 3),
            "lost_time": self.is_lost_time,
        }


@dataclass(frozen=True, slots=True)
class Profile:
    """A ranked profile and the runs it was built from (to combine it with others)."""

    rows: tuple[ProfileRow, ...]
    runs: tuple[ProfileRun, ...]
    response_us: int

    @property
    def lost_us(self) -> int:
        """Response time that no stage accounts for."""
        return next((row.total_us for row in self.rows if row.is_lost_time), 0)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: totals, the ranked rows and each run's response time."""
        return {
            "runs": len(self.runs),
            "response_us": self.response_us,
            "lost_us": self.lost_us,
            "rows": [row.to_dict() for row in self.rows],
            "run_response_us": [run.response_us for run in self.runs],
        }


def rank_profile(runs: Iterable[ProfileRun]) -> Profile:
    """Combine runs into a ranked profile.

    A run whose stages add up to more than its measured response time (clocks of client
    and server differ by a few microseconds) counts its stage time as its response time,
    so lost time is never negative and the rows always add up to the response time.

    Args:
        runs: Executions of the query, of one example or several.

    Returns:
        Rows worst first (ties by state name), the lost-time row last; percentages of the
        total response time that add up to exactly 100.00 (all 0 if nothing was measured).

    Example:
        >>> runs = [ProfileRun(500, (Stage("Sending data", 400),)),
        ...         ProfileRun(700, (Stage("Sending data", 500), Stage("Sending data", 100)))]
        >>> row = rank_profile(runs).rows[0]
        >>> row.state, row.total_us, row.calls, row.per_call_us
        ('Sending data', 1000, 3, 333.3333333333333)
    """
    runs = tuple(runs)
    totals: dict[str, int] = {}
    calls: dict[str, int] = {}
    for run in runs:
        for stage in run.stages:
            totals[stage.state] = totals.get(stage.state, 0) + stage.duration_us
            calls[stage.state] = calls.get(stage.state, 0) + 1
    lost = sum(max(run.response_us - run.stage_us, 0) for run in runs)
    response = sum(totals.values()) + lost
    ranked = sorted(totals, key=lambda state: (-totals[state], state))
    entries = [(state, totals[state], calls[state]) for state in ranked]
    entries.append((LOST_TIME, lost, len(runs)))
    percents = _percentages([total for _, total, _ in entries], response)
    rows = tuple(
        ProfileRow(state, total, percent, count, total / count if count else 0.0)
        for (state, total, count), percent in zip(entries, percents, strict=True)
    )
    return Profile(rows, runs, response)


def combine_profiles(profiles: Iterable[Profile]) -> Profile:
    """The profile of a query from the profiles of its examples: all their runs together.

    Example:
        >>> a = rank_profile([ProfileRun(100, (Stage("init", 100),))])
        >>> b = rank_profile([ProfileRun(300, (Stage("init", 100),))])
        >>> combined = combine_profiles([a, b])
        >>> combined.response_us, combined.lost_us, len(combined.runs)
        (400, 200, 2)
    """
    return rank_profile(run for profile in profiles for run in profile.runs)


def stages_from_show_profile(rows: Iterable[Mapping[str, Any]]) -> tuple[Stage, ...]:
    """Stages from ``SHOW PROFILE`` rows (Status, Duration in seconds as a decimal string).

    Example:
        >>> stages_from_show_profile([{"Status": "Sending data", "Duration": "0.005894"}])
        (Stage(state='Sending data', duration_us=5894),)
    """
    return tuple(Stage(str(row["Status"]), _seconds_to_us(row["Duration"])) for row in rows)


def stages_from_performance_schema(rows: Iterable[Mapping[str, Any]]) -> tuple[Stage, ...]:
    """Stages from ``events_stages_history_long`` rows (EVENT_NAME, TIMER_WAIT in ps).

    Example:
        >>> stages_from_performance_schema(
        ...     [{"EVENT_NAME": "stage/sql/Sending data", "TIMER_WAIT": 5_894_000_000}])
        (Stage(state='Sending data', duration_us=5894),)
    """
    stages = []
    for row in rows:
        wait = int(row["TIMER_WAIT"] or 0)
        stage = Stage(
            stage_state(row["EVENT_NAME"]), round(Fraction(wait, PICOSECONDS_PER_MICROSECOND))
        )
        stages.append(stage)
    return tuple(stages)


def stage_state(event_name: object) -> str:
    """A performance_schema stage's EVENT_NAME as SHOW PROFILE names the state.

    Example:
        >>> stage_state("stage/sql/Creating sort index")
        'Creating sort index'
    """
    return str(event_name).split("/", _STAGE_PREFIX_PARTS)[-1]


def _seconds_to_us(value: Any) -> int:
    # Decimal, not float: "0.000003" must be 3 µs, not 2.9999999.
    return int((Decimal(str(value)) * MICROSECONDS_PER_SECOND).to_integral_value())


def _percentages(totals: list[int], response: int) -> list[Decimal]:
    """Shares of ``response`` rounded so they add up to exactly 100 (largest remainder)."""
    if response <= 0:
        return [Decimal(0).quantize(_PERCENT_QUANTUM) for _ in totals]
    exact = [Fraction(total * _PERCENT_UNITS, response) for total in totals]
    units = [int(share) for share in exact]  # floor: shares are never negative
    missing = _PERCENT_UNITS - sum(units)
    by_remainder = sorted(range(len(exact)), key=lambda i: (-(exact[i] - units[i]), i))
    for index in by_remainder[:missing]:
        units[index] += 1
    return [Decimal(unit).scaleb(-PERCENT_DECIMALS).quantize(_PERCENT_QUANTUM) for unit in units]
