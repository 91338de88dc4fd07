"""Import slow-log files: parse, fold per minute, and ship every statement once.

The pipeline of ``quanta-agent import`` in one process: read (quanta.analysis.slowlog) ->
fold (quanta.analysis.folder, built into wire models by quanta_agent.aggregates) -> ship
(quanta_agent.shipper); no spool, since the file itself can be imported again.
"""

import os
import random
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from quanta.analysis.fingerprinter import Fingerprinter
from quanta.analysis.folder import FoldedBatch, MinuteFolder
from quanta.analysis.metrics import MAX_COUNTER
from quanta.analysis.slowlog import ParseStats, read_slow_log
from quanta_agent.aggregates import (
    aggregates,
    attribute_metrics,
    extended_metrics,
)
from quanta_agent.policy import MAX_QUERY_LENGTH, ExamplePolicy
from quanta_agent.shipper import Shipper

# Events of the first batch (at most): measured on bench/ingest_pipeline.py, a first batch
# of 15,000 then 50,000 a batch took 3.4 s where 50,000 from the first took 3.6-3.8 s.
FIRST_BATCH_SIZE = 15_000
# Events between two sums of the attribute dicts the reader hands the folder (memory: about
# 1 kB per Percona Server entry until then).
ABSORB_EVERY = 2_000


@dataclass(slots=True)
class ImportReport:
    """What an import did, per file and in total."""

    events: int = 0
    batches: int = 0
    duplicate_batches: int = 0
    skipped: list[tuple[str, int, str]] = field(default_factory=list)


def import_file(
    path: Path,
    *,
    shipper: Shipper,
    batch_size: int,
    report: ImportReport,
    policy: ExamplePolicy = ExamplePolicy.FULL,
    on_bytes: Callable[[int], None] = lambda _n: None,
) -> None:
    """Parse one slow log, fold it per minute and ship a batch every ``batch_size`` events.

    The first batch is cut at FIRST_BATCH_SIZE events: the server starts storing it while
    the rest is parsed, rather than waiting for a whole batch. A batch ends before the
    minute of its newest event (whose events go with the next one), so that the batches of
    a log in time order share no minute bucket: a worker storing one never waits for the
    worker storing the one before. One batch is shipped in a background thread while the
    next is parsed (the POST waits on the server, gzip releases the GIL), and never more
    than one: memory stays at two batches (and a minute). The sampled examples are drawn
    with a fixed seed, so the same file gives the same batches, and importing it again is
    recognised.
    """
    fallback_ts = datetime.fromtimestamp(os.stat(path).st_mtime, UTC)
    stats = ParseStats()
    # The entries with attributes (Percona Server, MariaDB) reach the folder as columns too.
    folder = MinuteFolder(Fingerprinter(), random.Random(0), extended=attribute_metrics)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ship") as pool:
        in_flight: Future[None] | None = None

        def cut() -> int:
            """Ship the events before the newest one's minute; how many are kept."""
            nonlocal in_flight
            batch = folder.fold(before=folder.latest_minute())
            if batch.queries:
                _wait(in_flight)
                in_flight = pool.submit(_ship, shipper, batch, policy, report)
            return len(folder)

        sink = _BatchingSink(folder, min(batch_size, FIRST_BATCH_SIZE), batch_size, cut)
        with path.open("rb") as handle:
            for event in read_slow_log(_CountingReader(handle, on_bytes), stats, sink=sink):
                if event.ts is None:
                    event.ts = fallback_ts
                folder.add(event, extended_metrics(event, MAX_COUNTER))
                sink.filled(1)
        _wait(in_flight)
        if len(folder):
            _ship(shipper, folder.fold(), policy, report)
    report.skipped.extend((str(path), line, reason) for line, reason in stats.skipped)


class _BatchingSink:
    """The folder as the reader's sink, cutting the first batch at ``first`` events and the
    others every ``batch_size``."""

    def __init__(
        self, folder: MinuteFolder, first: int, batch_size: int, cut: Callable[[], int]
    ) -> None:
        self._folder = folder
        self._batch_size = first
        self._next_batch_size = batch_size
        self._cut = cut
        self.held = 0  # events in the folder
        self._unabsorbed = 0  # events taken since the folder last summed attribute dicts
        self.groups = folder.groups

    def classify(self, query: str) -> list[list[Any]]:
        """The folder's columns for the statement."""
        return self._folder.classify(query)

    def room(self) -> int:
        """Events until the batch is full (or, while one minute holds more than a batch,
        until the next look for a minute that ended)."""
        return self._batch_size - self.held if self.held < self._batch_size else self._batch_size

    def filled(self, count: int) -> None:
        """Count events added to the folder; cut a batch once it is full."""
        self.held += count
        self._unabsorbed += count
        if self._unabsorbed >= ABSORB_EVERY:
            self._folder.absorb()
            self._unabsorbed = 0
        if self.held >= self._batch_size:
            self.held = self._cut()
            self._batch_size = self._next_batch_size


def _wait(shipping: Future[None] | None) -> None:
    # .result() re-raises a batch the server refused for good, stopping the import there.
    if shipping is not None:
        shipping.result()


def _ship(
    shipper: Shipper, batch: FoldedBatch, policy: ExamplePolicy, report: ImportReport
) -> None:
    rows = aggregates(batch, policy=policy, max_length=MAX_QUERY_LENGTH)
    # The shipper derives the batch id from the rows (see Shipper.ship).
    result = shipper.ship(rows.batch(batch_id="", instance=shipper.instance, policy=policy))
    report.events += batch.statements
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
