"""How long an instance's statistics cover without a break: the window an "unused index"
finding needs.

Pure functions over plain values. An index is unused only if nothing read it over a whole
window of statistics; a break loses reads, so the window starts again after it:

* ``restart``: the server restarted (its counters start from zero, and whatever was read
  between the agent's last poll and the restart is gone);
* ``flush``: FLUSH TABLE_STATISTICS / INDEX_STATISTICS (or performance_schema's TRUNCATE)
  emptied the counters the same way;
* ``gap``: an interval was never received (the agent was stopped, its spool dropped a batch);
* ``source``: the agent moved between userstat and performance_schema, which count
  differently.

Example:
    >>> from datetime import UTC, datetime, timedelta
    >>> t0 = datetime(2026, 1, 1, tzinfo=UTC)
    >>> minute = timedelta(minutes=1)
    >>> w = advance(None, Observation("userstat", t0, t0 + minute))
    >>> w = advance(w, Observation("userstat", t0 + minute, t0 + 2 * minute))
    >>> (w.since == t0, w.until == t0 + 2 * minute)
    (True, True)
    >>> w = advance(w, Observation("userstat", t0 + 2 * minute, t0 + 3 * minute, "restart"))
    >>> (w.since == t0 + 3 * minute, w.break_reason)
    (True, 'restart')
"""

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Literal

BreakReason = Literal["restart", "flush", "gap", "source"]
BREAKS: dict[str, str] = {
    "restart": "the server restarted, which reset its counters",
    "flush": "the statistics were flushed (their counters reset)",
    "gap": "no statistics were received for a while (agent stopped or a batch lost)",
    "source": "the agent changed its source of statistics",
}
# Consecutive polls share their boundary exactly; this absorbs rounding to microseconds.
CONTIGUOUS = timedelta(seconds=1)


@dataclass(frozen=True, slots=True)
class Observation:
    """One poll's interval of statistics, and whether the counters were reset in it."""

    origin: str
    start: datetime
    end: datetime
    reset: Literal["restart", "flush"] | None = None


@dataclass(frozen=True, slots=True)
class Window:
    """The statistics seen so far: since when without a break, and the last break."""

    origin: str
    first_seen: datetime
    since: datetime
    until: datetime
    broken_at: datetime | None = None
    break_reason: str | None = None

    def covers(self, length: timedelta, *, since: datetime | None = None) -> bool:
        """Whether the window (from ``since`` when later, e.g. a table's own reset) is at
        least ``length`` long."""
        start = max(self.since, since) if since is not None else self.since
        return self.until - start >= length


def advance(window: Window | None, observed: Observation) -> Window:
    """The window once ``observed`` is added to it.

    An interval that ends before the window does (a batch delivered twice, or late) changes
    nothing: a late one was already counted as a gap, which errs on the side of caution.
    """
    if window is None:
        start = observed.end if observed.reset else observed.start
        return Window(observed.origin, observed.start, start, observed.end)
    if observed.end <= window.until:
        return window
    reason: BreakReason | None = observed.reset
    restart_at = observed.end
    if observed.origin != window.origin:
        reason, restart_at = "source", observed.start
    elif observed.start > window.until + CONTIGUOUS:
        reason, restart_at = "gap", observed.start
        if observed.reset:  # the counters went too: nothing of this interval can be trusted
            restart_at = observed.end
    if reason is None:
        return replace(window, until=observed.end)
    return Window(observed.origin, window.first_seen, restart_at, observed.end, restart_at, reason)
