"""Import slow-log files: parse, batch and ship every event once."""

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from quanta.analysis.slowlog import ParseStats, SlowLogEvent, parse_slow_log
from quanta_agent.shipper import Shipper

# The ingest API refuses larger counters (quanta.ingest.schemas.MAX_COUNTER); the agent
# keeps its own copy so it does not import the server's dependencies.
MAX_COUNTER = 2**53


@dataclass(slots=True)
class ImportReport:
    """What an import did, per file and in total."""

    events: int = 0
    batches: int = 0
    duplicate_batches: int = 0
    skipped: list[tuple[str, int, str]] = field(default_factory=list)


def event_to_wire(event: SlowLogEvent, fallback_ts: datetime) -> dict[str, Any]:
    """The ingest API's JSON form of an event; an undated event gets the file's time."""
    return {
        "ts": (event.ts or fallback_ts).isoformat(),
        "query": event.query,
        "query_time": event.query_time,
        "lock_time": event.lock_time,
        "rows_sent": _counter(event.rows_sent),
        "rows_examined": _counter(event.rows_examined),
        "db": event.db,
        "user": event.user,
        "host": event.host,
    }


def _counter(value: int | None) -> int | None:
    # A wrapped server counter (2**64 - n) is noise, not a measurement: send it as unknown.
    return value if value is None or value <= MAX_COUNTER else None


def import_file(
    path: Path,
    *,
    shipper: Shipper,
    batch_size: int,
    report: ImportReport,
    on_bytes: Callable[[int], None] = lambda _n: None,
) -> None:
    """Parse one slow log and ship its events in batches of `batch_size`."""
    fallback_ts = datetime.fromtimestamp(os.stat(path).st_mtime, UTC)
    stats = ParseStats()
    batch: list[dict[str, Any]] = []
    with path.open("rb") as handle:
        for event in parse_slow_log(_counting_lines(handle, on_bytes), stats):
            batch.append(event_to_wire(event, fallback_ts))
            if len(batch) >= batch_size:
                _ship(shipper, batch, report)
                batch = []
    if batch:
        _ship(shipper, batch, report)
    report.skipped.extend((str(path), line, reason) for line, reason in stats.skipped)


def _ship(shipper: Shipper, batch: list[dict[str, Any]], report: ImportReport) -> None:
    result = shipper.ship(batch)
    report.events += len(batch)
    report.batches += 1
    report.duplicate_batches += result.duplicate


def _counting_lines(handle: BinaryIO, on_bytes: Callable[[int], None]) -> Iterator[bytes]:
    for line in handle:
        on_bytes(len(line))
        yield line
