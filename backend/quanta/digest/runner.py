"""Read slow-log files into one :class:`~quanta.analysis.digest.Digest`, in parallel.

A large file is cut into parts at entry boundaries (lines starting ``# Time:``, so that every
part begins with its own time) and the parts are parsed and aggregated by a pool of
processes; their digests are merged in file order. What one part needs from the part before,
the database in effect (MySQL writes ``use db;`` only when it changes) and the line numbers,
is fixed up while merging: a part starts with a placeholder database that is renamed to the
previous part's last one.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from itertools import repeat
from pathlib import Path
from typing import BinaryIO

from quanta.analysis.digest import Digest
from quanta.analysis.fingerprinter import Fingerprinter
from quanta.analysis.grouping import parse_rules
from quanta.analysis.slowlog import ParseStats, read_slow_log
from quanta.core.memory import cycle_collection_paused

# A file smaller than this is read in this process: starting workers would cost more.
PARALLEL_MIN_BYTES = 8 << 20
# Parts are at most about this big, and as many per process: every process keeps busy to
# the end. Each part costs a pickled digest and a merge (a 6 MB part lost a fifth of its
# time to that), so parts are few: one per process up to this size.
PART_BYTES = 64 << 20
_ENTRY_START = b"\n# Time:"
_SCAN_BYTES = 1 << 20
# The database of a part's first events until the part says otherwise (never a real name).
_INHERITED_DATABASE = "\x00inherited"


@dataclass(frozen=True, slots=True)
class DigestOptions:
    """What to read and how.

    Attributes:
        rules: Grouping rules as ``PATTERN=REPLACEMENT`` texts.
        since: Only events at or after this time (events without a time are left out).
        until: Only events before this time.
        jobs: Processes reading parts of large files in parallel.
    """

    rules: tuple[str, ...] = ()
    since: datetime | None = None
    until: datetime | None = None
    jobs: int = field(default_factory=lambda: os.cpu_count() or 1)


@dataclass(slots=True)
class DigestRun:
    """A digest and what reading the files found."""

    digest: Digest = field(default_factory=Digest)
    skipped: list[tuple[str, int, str]] = field(default_factory=list)
    filtered_out: int = 0


@dataclass(frozen=True, slots=True)
class _Part:
    path: str
    start: int
    end: int


@dataclass(slots=True)
class _PartResult:
    digest: Digest
    skipped: list[tuple[int, str]]
    lines: int
    database: str | None
    filtered_out: int
    size: int


def digest_files(
    paths: Sequence[Path],
    options: DigestOptions,
    on_bytes: Callable[[int], None] = lambda _n: None,
) -> DigestRun:
    """Parse and aggregate slow-log files, as one log, in the order given.

    Args:
        paths: Slow-log files.
        options: Filters, grouping rules and parallelism.
        on_bytes: Called with the number of bytes of each part read, for a progress bar.

    Raises:
        ValueError: A grouping rule is invalid.
    """
    parse_rules(options.rules)  # fail on a bad rule before any work starts
    run = DigestRun()
    parts = [part for path in paths for part in _split(path, options.jobs)]
    database: str | None = None
    lines_before: dict[str, int] = {}
    results = _digest_parts(parts, options)
    for part, result in zip(parts, results, strict=True):
        if part.start == 0:
            database, lines_before[part.path] = None, 0
        result.digest.rename_database(_INHERITED_DATABASE, database or "")
        if result.database != _INHERITED_DATABASE:
            database = result.database
        offset = lines_before[part.path]
        run.skipped.extend((part.path, offset + line, why) for line, why in result.skipped)
        lines_before[part.path] = offset + result.lines
        run.digest.merge(result.digest)
        run.filtered_out += result.filtered_out
        on_bytes(result.size)
    return run


def _digest_parts(parts: Sequence[_Part], options: DigestOptions) -> Iterator[_PartResult]:
    """Results of the parts in order: from a process pool, or in this process when one part
    or one job makes a pool cost more than it saves."""
    if options.jobs <= 1 or len(parts) <= 1:
        yield from map(_digest_part, parts, repeat(options))
        return
    with ProcessPoolExecutor(max_workers=min(options.jobs, len(parts))) as pool:
        yield from pool.map(_digest_part, parts, repeat(options))


def _split(path: Path, jobs: int) -> list[_Part]:
    """Cut a file into parts that each begin at a '# Time:' line (or at the file's start)."""
    size = path.stat().st_size
    if jobs <= 1 or size < PARALLEL_MIN_BYTES:
        return [_Part(str(path), 0, size)]
    count = jobs * math.ceil(size / (PART_BYTES * jobs))
    starts = [0]
    with path.open("rb") as handle:
        for n in range(1, count):
            start = _next_entry_start(handle, max(n * size // count, starts[-1]), size)
            if start is not None and start > starts[-1]:
                starts.append(start)
    ends = [*starts[1:], size]
    return [_Part(str(path), start, end) for start, end in zip(starts, ends, strict=True)]


def _next_entry_start(handle: BinaryIO, offset: int, size: int) -> int | None:
    """Offset of the first line starting '# Time:' after ``offset``, None if there is none."""
    handle.seek(offset)
    carry = b""
    position = offset
    while position < size:
        block = handle.read(_SCAN_BYTES)
        if not block:
            return None
        data = carry + block
        found = data.find(_ENTRY_START)
        if found >= 0:
            return position - len(carry) + found + 1
        carry = data[-len(_ENTRY_START) :]
        position += len(block)
    return None


@cache
def _fingerprinter(rules: tuple[str, ...]) -> Fingerprinter:
    """One fingerprint cache per process and rule set, kept across the parts it reads."""
    return Fingerprinter(parse_rules(rules))


def _digest_part(part: _Part, options: DigestOptions) -> _PartResult:
    """Parse and aggregate one part of a file (runs in a worker process)."""
    with cycle_collection_paused():
        return _read_part(part, options)


def _read_part(part: _Part, options: DigestOptions) -> _PartResult:
    fingerprinter = _fingerprinter(options.rules)
    since, until = options.since, options.until
    digest = Digest()
    stats = ParseStats()
    filtered_out = 0
    filtering = since is not None or until is not None
    # Without a time filter the C reader adds the usual entries to the digest itself.
    sink = None if filtering else digest.sink(fingerprinter)
    with open(part.path, "rb") as handle:
        handle.seek(part.start)
        reader = _PartReader(handle, part.end - part.start)
        database = None if part.start == 0 else _INHERITED_DATABASE
        for event in read_slow_log(reader, stats, database=database, sink=sink):
            if filtering and not _in_range(event.ts, since, until):
                filtered_out += 1
                continue
            fingerprint, query_id = fingerprinter(event.query)
            digest.add(event, fingerprint, query_id)
    digest.flush()  # pending events must not travel back to the parent process
    return _PartResult(
        digest, stats.skipped, stats.lines, stats.database, filtered_out, part.end - part.start
    )


def _in_range(ts: datetime | None, since: datetime | None, until: datetime | None) -> bool:
    if ts is None:
        return False
    return (since is None or ts >= since) and (until is None or ts < until)


class _PartReader:
    """A file seen from its current position for ``length`` bytes."""

    def __init__(self, handle: BinaryIO, length: int) -> None:
        self._handle = handle
        self._left = length

    def read(self, size: int) -> bytes:
        """Read up to ``size`` bytes, never past the part's end."""
        data = self._handle.read(min(size, self._left))
        self._left -= len(data)
        return data
