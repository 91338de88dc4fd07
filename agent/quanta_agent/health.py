"""What the agent knows about its own health, per instance: reported to the server and logged.

The tailer and the collector say after each pass over a source whether it worked; the
shipper counts what it delivers and notes the errors reaching the server. From that come

* the status report of each source, sent every ``status_interval`` seconds as a batch with
  no rows (so the server tells a quiet source from one that stopped), and
* one progress line per instance at INFO every ``progress_log_interval`` seconds.
"""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass
from datetime import UTC, datetime

import quanta_agent
from quanta.wire import AgentStatusIn

# The server keeps this much of an error (ingest's AgentStatusIn.last_error).
MAX_ERROR_CHARS = 500


@dataclass
class _SourceState:
    read_at: datetime | None = None
    read_failing: bool = False


@dataclass(frozen=True, slots=True)
class Progress:
    """What an instance did since the previous progress line."""

    batches: int
    events: int
    spooled: int
    spooled_bytes: int
    dropped: int
    rejected: int
    read_at: dict[str, datetime | None]


class InstanceHealth:
    """The health of one instance's sources and of its delivery; safe from several threads."""

    def __init__(self, sources: list[str], host: str | None = None) -> None:
        """Start with nothing read, nothing shipped and no error."""
        self.host = host or socket.gethostname()
        self._lock = threading.Lock()
        self._sources = {source: _SourceState() for source in sources}
        self._last_error: str | None = None
        self._last_error_at: datetime | None = None
        self.rejected = 0
        self.shipped_batches = 0
        self.shipped_events = 0
        self._logged_batches = 0
        self._logged_events = 0

    def read(self, source: str, error: BaseException | None) -> None:
        """Note a pass over a source: it worked (``error`` None) or failed with ``error``."""
        now = datetime.now(UTC)
        with self._lock:
            state = self._sources.setdefault(source, _SourceState())
            state.read_failing = error is not None
            if error is None:
                state.read_at = now
            else:
                self._note(f"reading {source}: {error}", now)

    def delivery_failed(self, error: BaseException | str) -> None:
        """Note an error reaching the server (it is retried; the batch stays spooled)."""
        with self._lock:
            self._note(f"sending to the server: {error}", datetime.now(UTC))

    def shipped(self, events: int) -> None:
        """Count a batch the server acknowledged."""
        with self._lock:
            self.shipped_batches += 1
            self.shipped_events += events

    def refused(self, reason: str) -> None:
        """Count a batch the server refused for good."""
        with self._lock:
            self.rejected += 1
            self._note(f"the server refused a batch: {reason}", datetime.now(UTC))

    def status(
        self, source: str, *, interval: float, spooled: tuple[int, int], dropped: int
    ) -> AgentStatusIn:
        """The ``agent`` member of a status report for ``source``."""
        batches, size = spooled
        with self._lock:
            state = self._sources.get(source, _SourceState())
            return AgentStatusIn.model_construct(
                version=quanta_agent.__version__,
                host=self.host[:255],
                interval=interval,
                read_at=state.read_at,
                read_failing=state.read_failing,
                spooled=batches,
                spooled_bytes=size,
                dropped=dropped,
                rejected=self.rejected,
                last_error=self._last_error,
                last_error_at=self._last_error_at,
            )

    def progress(self, *, spooled: tuple[int, int], dropped: int) -> Progress:
        """What happened since the previous call (batches and events shipped), and now."""
        with self._lock:
            progress = Progress(
                batches=self.shipped_batches - self._logged_batches,
                events=self.shipped_events - self._logged_events,
                spooled=spooled[0],
                spooled_bytes=spooled[1],
                dropped=dropped,
                rejected=self.rejected,
                read_at={name: state.read_at for name, state in self._sources.items()},
            )
            self._logged_batches = self.shipped_batches
            self._logged_events = self.shipped_events
            return progress

    def _note(self, error: str, at: datetime) -> None:
        self._last_error = error[:MAX_ERROR_CHARS]
        self._last_error_at = at


def progress_line(instance: str, progress: Progress, *, seconds: float, now: datetime) -> str:
    """The INFO line for an instance's progress over the last ``seconds``.

    Example:
        >>> at = datetime(2026, 1, 1, 12, 0, 30, tzinfo=UTC)
        >>> p = Progress(4, 1200, 0, 0, 0, 0, {"slowlog": at.replace(second=28)})
        >>> print(progress_line("db1", p, seconds=300, now=at))  # doctest: +NORMALIZE_WHITESPACE
        db1: shipped 4 batches (1200 statements/rows) in the last 5 min;
        spool: 0 batches (0 KB); slowlog read 2 s ago
    """
    reads = "; ".join(
        f"{source} read {_ago(read_at, now)}" for source, read_at in progress.read_at.items()
    )
    span = f"{seconds / 60:g} min" if seconds >= 60 else f"{seconds:g} s"
    line = (
        f"{instance}: shipped {progress.batches} batches ({progress.events} statements/rows) "
        f"in the last {span}; spool: {progress.spooled} batches "
        f"({progress.spooled_bytes // 1024} KB)"
    )
    if progress.dropped or progress.rejected:
        line += f", {progress.dropped} dropped, {progress.rejected} refused by the server"
    if reads:
        line += f"; {reads}"
    return line


def _ago(moment: datetime | None, now: datetime) -> str:
    if moment is None:
        return "never"
    return f"{max(0, round((now - moment).total_seconds()))} s ago"
