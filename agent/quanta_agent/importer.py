"""Import slow-log files: parse, batch and ship every event once."""

import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from quanta.analysis.slowlog import AttributeValue, ParseStats, SlowLogEvent, read_slow_log
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


# Wire field <- the slow-log attribute names that give it, first present wins: Percona Server
# and MariaDB names first, then MySQL 8's log_slow_extra ones (MariaDB's innodb verbosity
# reports pages read and their time, the nearest to InnoDB_IO_r_ops/_wait).
_COUNTERS: dict[str, tuple[str, ...]] = {
    "bytes_sent": ("Bytes_sent",),
    "tmp_tables": ("Tmp_tables", "Created_tmp_tables"),
    "tmp_disk_tables": ("Tmp_disk_tables", "Created_tmp_disk_tables"),
    "merge_passes": ("Merge_passes", "Sort_merge_passes"),
    "innodb_io_r_ops": ("InnoDB_IO_r_ops", "Pages_read"),
    "innodb_io_r_bytes": ("InnoDB_IO_r_bytes",),
}
_SECONDS: dict[str, tuple[str, ...]] = {
    "innodb_io_r_wait": ("InnoDB_IO_r_wait", "Pages_read_time"),
    "innodb_rec_lock_wait": ("InnoDB_rec_lock_wait",),
    "innodb_queue_wait": ("InnoDB_queue_wait",),
}
_FLAGS: dict[str, tuple[str, ...]] = {
    "full_scan": ("Full_scan",),
    "full_join": ("Full_join",),
    "filesort": ("Filesort",),
    "filesort_on_disk": ("Filesort_on_disk",),
}
# Yes/No flags that stand in for a count where the count is not logged (MariaDB).
_FLAG_COUNTS = {"tmp_tables": "Tmp_table", "tmp_disk_tables": "Tmp_table_on_disk"}
# MySQL 8 logs the number of sorts rather than a Filesort flag.
_SORT_COUNTS = ("Sort_scan_count", "Sort_range_count")
_ERRNO = ("Errno", "Last_errno")


def event_to_wire(event: SlowLogEvent, fallback_ts: datetime) -> dict[str, Any]:
    """The ingest API's JSON form of an event; an undated event gets the file's time.

    Extended attributes are sent under one name whatever the server's flavour, and only when
    the log has them: an absent attribute is unknown (null), not 0.
    """
    wire: dict[str, Any] = {
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
    if event.rows_affected is not None:
        wire["rows_affected"] = _counter(event.rows_affected)
    attributes = event.attributes
    if not attributes:
        return wire
    for field_name, names in _COUNTERS.items():
        value = _first(attributes, names)
        if value is None and field_name in _FLAG_COUNTS:
            value = attributes.get(_FLAG_COUNTS[field_name])
        if isinstance(value, bool):
            wire[field_name] = int(value)
        elif isinstance(value, int):
            wire[field_name] = _counter(value)
    for field_name, names in _SECONDS.items():
        value = _first(attributes, names)
        if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
            wire[field_name] = float(value)
    for field_name, names in _FLAGS.items():
        value = _first(attributes, names)
        if isinstance(value, bool):
            wire[field_name] = value
    if "filesort" not in wire:
        sorts = [attributes.get(name) for name in _SORT_COUNTS]
        if any(isinstance(n, int) and not isinstance(n, bool) for n in sorts):
            wire["filesort"] = any(isinstance(n, int) and n > 0 for n in sorts)
    errno = _first(attributes, _ERRNO)
    if isinstance(errno, int) and not isinstance(errno, bool):
        wire["errors"] = int(errno != 0)
    warnings = attributes.get("warnings")
    if isinstance(warnings, str) and warnings:
        wire["warnings"] = warnings.count("\n") + 1
    return wire


def _first(attributes: dict[str, AttributeValue], names: tuple[str, ...]) -> AttributeValue | None:
    for name in names:
        value = attributes.get(name)
        if value is not None:
            return value
    return None


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
    """Parse one slow log and ship its events in batches of `batch_size`.

    One batch is shipped in a background thread while the next is parsed (the POST waits on
    the server, gzip releases the GIL), and never more than one: memory stays at two batches.
    """
    fallback_ts = datetime.fromtimestamp(os.stat(path).st_mtime, UTC)
    stats = ParseStats()
    batch: list[dict[str, Any]] = []
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ship") as pool:
        in_flight: Future[None] | None = None
        with path.open("rb") as handle:
            for event in read_slow_log(_CountingReader(handle, on_bytes), stats):
                batch.append(event_to_wire(event, fallback_ts))
                if len(batch) >= batch_size:
                    _wait(in_flight)
                    in_flight = pool.submit(_ship, shipper, batch, report)
                    batch = []
        _wait(in_flight)
        if batch:
            _ship(shipper, batch, report)
    report.skipped.extend((str(path), line, reason) for line, reason in stats.skipped)


def _wait(shipping: Future[None] | None) -> None:
    # .result() re-raises a batch the server refused for good, stopping the import there.
    if shipping is not None:
        shipping.result()


def _ship(shipper: Shipper, batch: list[dict[str, Any]], report: ImportReport) -> None:
    result = shipper.ship(batch)
    report.events += len(batch)
    report.batches += 1
    report.duplicate_batches += result.duplicate


class _CountingReader:
    """A binary file that reports how many bytes each read returned (for a progress bar)."""

    def __init__(self, handle: BinaryIO, on_bytes: Callable[[int], None]) -> None:
        self._handle = handle
        self._on_bytes = on_bytes

    def read(self, size: int) -> bytes:
        """Read up to ``size`` bytes."""
        data = self._handle.read(size)
        self._on_bytes(len(data))
        return data
