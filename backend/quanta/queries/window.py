"""What a read of the metric store covers: the time window from the request, the retention
it can be read within, the segments (resolution, range) that answer it, and the filter of
the buckets it sums."""

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from quanta.analysis.resolution import (
    Resolution,
    Segment,
    floor_to,
    plan_reads,
)
from quanta.core import errors
from quanta.core.config import Settings
from quanta.core.db import utcnow

_RELATIVE_TIME = re.compile(r"now(?:(?P<sign>[-+])(?P<amount>\d+)(?P<unit>[smhdw]))?")

_RELATIVE_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


class InvalidRequest(errors.InvalidRequest):
    """A read whose parameters cannot be answered; the message says what to change."""


class InvalidRange(InvalidRequest):
    """A time range that cannot be read (unparseable bound, end before start)."""


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """A half-open UTC range [start, end)."""

    start: datetime
    end: datetime

    @property
    def seconds(self) -> float:
        """Length of the window in seconds."""
        return (self.end - self.start).total_seconds()


def parse_time(value: str | datetime, *, now: datetime) -> datetime:
    """An aware UTC time from ISO 8601 (naive is UTC) or ``now``, ``now-24h``, ``now-7d``...

    Units of relative times: s, m, h, d, w.
    """
    if isinstance(value, datetime):
        return _as_utc(value)
    text = value.strip()
    match = _RELATIVE_TIME.fullmatch(text)
    if match:
        amount = int(match["amount"] or 0) * _RELATIVE_UNITS.get(match["unit"] or "s", 1)
        return (
            now - timedelta(seconds=amount)
            if match["sign"] == "-"
            else now + timedelta(seconds=amount)
        )
    try:
        return _as_utc(datetime.fromisoformat(text.replace("Z", "+00:00")))
    except ValueError:
        raise InvalidRange(
            f"Cannot read time {value!r}: use ISO 8601 (2026-01-31T12:00:00Z) or a time "
            "relative to now (now, now-1h, now-24h, now-7d)."
        ) from None


def resolve_window(
    *, start: str | datetime | None, end: str | datetime | None, default_hours: int
) -> TimeWindow:
    """The window to read: given bounds (naive ones are UTC), else the last `default_hours`."""
    now = utcnow()
    end = parse_time(end, now=now) if end else now
    start = parse_time(start, now=now) if start else end - timedelta(hours=default_hours)
    if start >= end:
        raise InvalidRange(f"'from' ({start.isoformat()}) must be before 'to' ({end.isoformat()}).")
    return TimeWindow(start=start, end=end)


def retained_since(*, settings: Settings, now: datetime) -> dict[Resolution, datetime]:
    """Per resolution, the oldest bucket start that retention keeps at ``now``."""
    days = {
        Resolution.MINUTE: settings.retention_minute_days,
        Resolution.HOUR: settings.retention_hour_days,
        Resolution.DAY: settings.retention_day_days,
    }
    return {r: floor_to(now - timedelta(days=d), r) for r, d in days.items()}


def read_plan(*, settings: Settings, window: TimeWindow) -> list[Segment]:
    """The segments (resolution, range) that answer a window: the coarsest that fit."""
    return plan_reads(window.start, window.end, retained_since(settings=settings, now=utcnow()))


def _as_utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


# The bucket columns a breakdown or filter list can group by, by their API name.
DIMENSION_COLUMNS = {"schema": "schema_name", "user": "user_name", "host": "client_host"}


@dataclass(frozen=True, slots=True)
class BucketFilter:
    """Which buckets a read sums: instance names, dimension values, a search, one query."""

    instances: tuple[str, ...] = ()
    schema: str | None = None
    user: str | None = None
    host: str | None = None
    search: str | None = None
    query_id: str | None = None
    # Quanta's own statements (quanta.analysis.own) are left out unless this is set.
    include_own: bool = False
    # (key, value) pairs: a bucket's tags (quanta.analysis.tags), its instance's labels.
    # Pairs of one key are alternatives; different keys must all match.
    tags: tuple[tuple[str, str], ...] = ()
    labels: tuple[tuple[str, str], ...] = ()

    @property
    def has_dimension(self) -> bool:
        """Whether a schema, user, host or tag must match."""
        return bool(self.tags) or any(getattr(self, n) is not None for n in DIMENSION_COLUMNS)


def parse_pairs(values: list[str] | None, parameter: str) -> tuple[tuple[str, str], ...]:
    """``KEY:VALUE`` parameters as (key, value) pairs, keys lower-cased.

    Example:
        >>> parse_pairs(["team:payments", "Route:/a:b"], "tag")
        (('team', 'payments'), ('route', '/a:b'))
    """
    pairs = []
    for text in values or ():
        key, colon, value = text.partition(":")
        if not colon or not key.strip():
            raise InvalidRequest(f"{parameter}={text!r}: write it as KEY:VALUE (team:payments).")
        pairs.append((key.strip().lower(), value))
    return tuple(pairs)


def by_key(pairs: tuple[tuple[str, str], ...]) -> dict[str, list[str]]:
    """The values asked for per key (alternatives of one key, keys all required)."""
    out: dict[str, list[str]] = {}
    for key, value in pairs:
        out.setdefault(key, []).append(value)
    return out
