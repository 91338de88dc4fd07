"""Follow one slow log and cut its complete entries into batches, each exactly once.

Positions are byte offsets of entry boundaries. An entry is complete when the next one's
header has begun (the server writes an entry in several writes, so the last entry of a
growing file is held back), when the file has stayed unchanged for ``idle_grace``
seconds, or when the server has moved on to another file. A batch covers the entries
between two boundaries of one file and carries the checkpoint for its end; the tailer
never moves past an entry before the batch holding it has been handed to ``sink`` (which
spools it durably and then saves the checkpoint).

This is the first stage of the agent's slow-log pipeline (read -> fold -> spool -> ship): it
hands on parsed events (:class:`SlowLogBatch`) and knows nothing of the wire format; the
next stage (``quanta_agent.batcher``) folds or converts them.

The file is followed through:

* rotation by rename (logrotate, our own ``rotate_above_mb``): the open file is read to
  its end once the server writes to a new file at the path, then the new file from 0;
* deletion and re-creation, ``FLUSH SLOW LOGS``: the same;
* copytruncate: the file shrinks, or its first bytes change: read again from 0;
* a changed ``@@slow_query_log_file``: the old file is read to its end, the new one from
  the banner the server wrote when it opened it;
* agent restarts: the checkpoint names the file by device, inode and a hash of its first
  bytes, so it is found again even renamed, and a re-created file is not mistaken for it.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import os
import stat
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from quanta.analysis.slowlog import ParseStats, SlowLogEvent, parse_slow_log
from quanta_agent.checkpoint import HEAD_BYTES, Checkpoint, FileIdentity, identify, matches
from quanta_agent.config import MEGABYTE, BatchSettings, InstanceSettings
from quanta_agent.logsource import LogSourceError

log = logging.getLogger(__name__)

READ_BLOCK_BYTES = 1 << 20
# At most this much of a backlog is parsed per poll.
MAX_SCAN_BYTES = 32 << 20
# While the log's path is unknown (server unreachable), ask again this often.
LOCATE_RETRY_SECONDS = 5.0
# How far back from the end a newly named log file is searched for the server's banner.
BANNER_SCAN_BYTES = 16 << 20
BANNER_END = b" started with:\n"
# A character is at most this many bytes of UTF-8: lines are capped in bytes.
MAX_BYTES_PER_CHAR = 4
ROTATED_SUFFIX = ".old"
# How many finished files are remembered so that none is read twice.
FINISHED_FILES_KEPT = 64
# Server-written lines an entry can begin with (besides '#' header lines).
_ENTRY_OPENERS = (b"#", b"use ", b"SET ")
# Memory of one held entry besides its query text (JSON keys and numbers once on the wire).
ENTRY_OVERHEAD_BYTES = 250


def slowlog_batch_id(instance: str, file: FileIdentity, start: int, end: int) -> str:
    """The id of the batch holding the entries between two offsets of one file.

    The same range of the same file always gets the same id, so a batch sent again after a
    crash is recognised by the server as one it already has.

    Example:
        >>> file = FileIdentity(dev=2049, ino=131, head_len=0, head_sha="e3b0c442")
        >>> slowlog_batch_id("db1", file, 0, 100) == slowlog_batch_id("db1", file, 0, 100)
        True
    """
    key = f"{instance}\n{file.dev}:{file.ino}:{file.head_len}:{file.head_sha}\n{start}-{end}"
    return hashlib.sha256(key.encode()).hexdigest()[:32]


class PathSource(Protocol):
    """Where the slow log is (see :class:`quanta_agent.logsource.SlowLogSource`)."""

    @property
    def follows_server(self) -> bool:
        """Whether :meth:`locate` may answer differently over time."""
        ...

    def locate(self) -> Path:
        """The log's path now; LogSourceError if unknown."""
        ...

    def flush(self) -> None:
        """Make the server reopen its log; LogSourceError on failure."""
        ...


@dataclass(frozen=True, slots=True)
class ParserState:
    """What the parser carries from one entry to the next, at one offset of a file."""

    time_line: str | None = None
    db: str | None = None

    def prelude(self) -> list[bytes]:
        """Lines that put a fresh parser in this state before it reads on."""
        lines = [self.time_line.encode()] if self.time_line else []
        if self.db:
            lines.append(f"use {self.db};".encode())
        return lines


@dataclass(frozen=True, slots=True)
class SlowLogEntry:
    """One complete entry as parsed (dated: an undated one gets the time it was read), and
    whether its lines were cut while read."""

    event: SlowLogEvent
    truncated: bool


@dataclass(frozen=True, slots=True)
class SlowLogBatch:
    """Complete entries of one file and the checkpoint after them.

    ``entries`` is empty when only the position moves (a new file is being followed).
    """

    batch_id: str
    entries: tuple[SlowLogEntry, ...]
    checkpoint: Checkpoint


class PendingBatch:
    """Entries waiting to be cut into a batch by count, size or age."""

    def __init__(self, limits: BatchSettings, clock: Callable[[], float]) -> None:
        """Start empty."""
        self._limits = limits
        self._clock = clock
        self.entries: list[SlowLogEntry] = []
        self._bytes = 0
        self._opened = 0.0

    def __len__(self) -> int:
        return len(self.entries)

    def add(self, entry: SlowLogEntry) -> None:
        """Append one entry."""
        if not self.entries:
            self._opened = self._clock()
        self.entries.append(entry)
        self._bytes += len(entry.event.query) + ENTRY_OVERHEAD_BYTES

    @property
    def full(self) -> bool:
        """Whether the count or size limit is reached."""
        return len(self.entries) >= self._limits.max_events or self._bytes >= self._limits.max_bytes

    @property
    def due(self) -> bool:
        """Whether the oldest entry has waited long enough."""
        return bool(self.entries) and self._clock() - self._opened >= self._limits.max_age

    def take(self) -> tuple[SlowLogEntry, ...]:
        """The entries, leaving the batch empty."""
        entries, self.entries, self._bytes = tuple(self.entries), [], 0
        return entries


@dataclass(frozen=True, slots=True)
class _Held:
    """The last event of a scan: complete only once something follows it."""

    event: SlowLogEvent
    start: int
    state: ParserState


class _Scan:
    """Lines of a file between two offsets for the parser, remembering where they start.

    Lines are cut to ``max_line_bytes`` and, in a run of statement lines, those past
    ``max_line_bytes`` in total are left out: a statement of many megabytes costs little
    memory and is sent truncated. Offsets are kept only for lines an entry can begin with,
    and only until the parser has moved past them.
    """

    def __init__(
        self,
        fd: int,
        *,
        start: int,
        stop: int,
        first_line: int,
        time_line: str | None,
        max_line_bytes: int,
        take_partial: bool,
    ) -> None:
        self.position = start  # just after the last line handed out
        self.last_time_line = time_line
        self._fd, self._start, self._stop = fd, start, stop
        self._first_line = first_line
        self._number = first_line - 1
        self._max = max_line_bytes
        self._take_partial = take_partial
        self._run = 0  # bytes of statement lines since the last '#' line
        self._marks: deque[tuple[int, int, str | None]] = deque()  # line, offset, '# Time:'
        self._cuts: deque[int] = deque()  # lines that were cut, or after which some were left out
        self._time_before = time_line

    def lines(self) -> Iterator[bytes]:
        """The complete lines from ``start`` (and the partial last one if asked)."""
        pos = line_start = self._start
        pieces: list[bytes] = []  # the line being assembled across blocks, capped
        kept = length = 0  # bytes in pieces; its true length so far
        while pos < self._stop:
            block = os.pread(self._fd, min(READ_BLOCK_BYTES, self._stop - pos), pos)
            if not block:
                break
            pos += len(block)
            *complete, tail = block.split(b"\n")
            for part in complete:
                if length:
                    pieces.append(part[: self._max - kept])
                    data, length = b"".join(pieces), length + len(part)
                    pieces, kept = [], 0
                else:
                    data, length = part, len(part)
                line = self._line(line_start, data, length > self._max)
                line_start += length + 1
                length = 0
                self.position = line_start
                if line is not None:
                    yield line
            if tail:
                piece = tail[: self._max - kept]
                pieces.append(piece)
                kept += len(piece)
                length += len(tail)
        if self._take_partial and length:
            line = self._line(line_start, b"".join(pieces), length > self._max)
            self.position = line_start + length
            if line is not None:
                yield line

    def _line(self, offset: int, data: bytes, cut: bool) -> bytes | None:
        """Account for one line; return what the parser gets, or None to leave it out."""
        if data[:1] == b"#":
            self._run = 0
        else:
            if self._run >= self._max:
                if not self._cuts or self._cuts[-1] != self._number:
                    self._cuts.append(self._number)  # belongs to the entry being read
                return None
            self._run += len(data) + 1
        self._number += 1
        if cut:
            data = data[: self._max]
            self._cuts.append(self._number)
        if data.startswith(_ENTRY_OPENERS) or self._number == self._first_line:
            time_text = None
            if data.startswith(b"# Time:"):
                time_text = self.last_time_line = data.decode("utf-8", "replace").rstrip("\r")
            self._marks.append((self._number, offset, time_text))
        return data

    def entry_start(self, number: int) -> tuple[int, bool, str | None]:
        """Where parser line ``number`` starts, and about the lines before it (since the
        last call): whether one was cut, and the last ``# Time:`` line."""
        if number < self._first_line:  # the entry began in the prelude: it starts here
            return self._start, False, self._time_before
        cut = False
        while self._cuts and self._cuts[0] < number:
            self._cuts.popleft()
            cut = True
        while self._marks and self._marks[0][0] < number:
            time_text = self._marks.popleft()[2]
            if time_text is not None:
                self._time_before = time_text
        if self._marks and self._marks[0][0] == number:
            return self._marks[0][1], cut, self._time_before
        # The parser began an entry at an unusual line. Taking the last known position
        # instead re-reads a little after a restart, never skips anything.
        log.debug("entry at line %d starts at no known offset", number)
        return self._start if not self._marks else self._marks[0][1], cut, self._time_before

    def cut_in_rest(self) -> bool:
        """Whether a line was cut after the last :meth:`entry_start`."""
        return bool(self._cuts)


def last_banner_offset(fd: int) -> int:
    """Where the last server banner of a log file begins (0 if the file has none)."""
    size = os.fstat(fd).st_size
    low = max(0, size - BANNER_SCAN_BYTES)
    data = os.pread(fd, size - low, low)
    end = data.rfind(BANNER_END)
    if end < 0:
        return low
    return low + data.rfind(b"\n", 0, end) + 1


def find_file(identity: FileIdentity, candidates: Iterable[Path]) -> tuple[int, Path] | None:
    """Open the file ``identity`` names, looking at ``candidates`` and their neighbours.

    A log rotated by rename keeps its inode, so after a restart the checkpointed file is
    usually found next to its old path (``slow.log.1``, ``slow.log.old``). A log rotated by
    copytruncate lives on in the copy: a file with the same first HEAD_BYTES is taken for
    it when no inode matches.
    """
    paths = list(dict.fromkeys(candidates))
    for directory in dict.fromkeys(p.parent for p in paths):
        try:
            paths.extend(sorted(p for p in directory.iterdir() if p not in paths))
        except OSError:
            continue
    stats = {path: _stat(path) for path in paths}
    same_inode = [
        p
        for p, st in stats.items()
        if st and (st.st_dev, st.st_ino) == (identity.dev, identity.ino)
    ]
    copies = [p for p in paths if p not in same_inode and identity.head_len == HEAD_BYTES]
    for path in same_inode + copies:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        if _same_head(fd, identity):
            return fd, path
        os.close(fd)
    return None


def missed_rotations(
    path: Path,
    finished: os.stat_result,
    successor: os.stat_result,
    already_read: set[tuple[int, int]],
) -> list[tuple[int, Path]]:
    """Files the server wrote after ``finished`` and before ``successor``, oldest first.

    When the log is rotated twice between two polls, the file in between was never open
    here: it is the one next to the log (its name starts with the log's), not read yet,
    and last written no earlier than the finished file, which the server had left. File
    times tick in jiffies, so "no earlier" and not "later": a file rotated at once has
    the same time as the one before it.
    """
    known = {(finished.st_dev, finished.st_ino), (successor.st_dev, successor.st_ino)}
    known |= already_read
    found: list[tuple[int, Path]] = []
    try:
        names = sorted(p for p in path.parent.iterdir() if p.name.startswith(path.name))
    except OSError:
        return []
    for candidate in names:
        st = _stat(candidate)
        if st is None or (st.st_dev, st.st_ino) in known:
            continue
        if not finished.st_mtime_ns <= st.st_mtime_ns <= successor.st_mtime_ns:
            continue
        try:
            found.append((os.open(candidate, os.O_RDONLY), candidate))
        except OSError:
            continue
    return sorted(found, key=lambda item: os.fstat(item[0]).st_mtime_ns)


def _stat(path: Path) -> os.stat_result | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def _same_head(fd: int, identity: FileIdentity) -> bool:
    st = os.fstat(fd)
    return matches(fd, FileIdentity(st.st_dev, st.st_ino, identity.head_len, identity.head_sha))


class SlowLogTailer:
    """Follows one instance's slow log; call :meth:`poll` every ``check_interval``."""

    def __init__(
        self,
        *,
        instance: InstanceSettings,
        limits: BatchSettings,
        source: PathSource,
        sink: Callable[[SlowLogBatch], None],
        resume_from: Checkpoint | None,
        clock: Callable[[], float] = time.monotonic,
        minute_batches: bool = False,
    ) -> None:
        """Describe the tailer; the file is opened by the first :meth:`poll` that finds it.

        Args:
            instance: The instance and its slow-log options.
            limits: When to cut a batch.
            source: Where the log is; also rotates it.
            sink: Takes each batch (or position change) and makes it durable in order.
            resume_from: The last checkpoint, or None to start afresh.
            clock: Monotonic seconds (tests pass a fake clock).
            minute_batches: Cut a batch at each new minute of the log too: a batch then
                never holds two minutes of the log in file order (only late entries of an
                earlier minute), so that a minute's buckets can be folded and spooled alone.
        """
        self._instance = instance
        self._options = instance.slowlog
        self._source = source
        self._sink = sink
        self._clock = clock
        self._pending = PendingBatch(limits, clock)
        self._minute_batches = minute_batches
        self._pending_minute: datetime | None = None
        self._resume_from = resume_from
        self._start_at_zero = False  # the file did not exist at start: all of it is new
        self._path: Path | None = None  # where the server writes
        self._new_path: Path | None = None  # where it writes since @@slow_query_log_file changed
        # Files read to their end (device, inode): a rotated file is never read twice.
        self._finished: deque[tuple[int, int]] = deque(maxlen=FINISHED_FILES_KEPT)
        self._next_locate = clock()
        self._rotation = self._options.rotate_above_mb > 0
        self._fd: int | None = None
        self._follow_state(Path(), None, 0, ParserState())

    # ------------------------------------------------------------------ public

    def poll(self) -> None:
        """Read what is new, follow rotations, cut the batches that are due."""
        self._locate()
        if self._fd is None:
            self._open()
            if self._fd is None:
                return
        self._check_in_place_rewrite()
        self._read()
        successor = self._successor()
        if successor is not None:
            self._switch(*successor)
        self._maybe_rotate()
        if self._pending.due:
            self._cut()

    def flush(self) -> None:
        """Cut the complete entries read so far into a batch now (on shutdown)."""
        self._cut()

    def close(self) -> None:
        """Close the file."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    @property
    def position(self) -> tuple[Path, int]:
        """The file being read and the offset up to which entries were handed on."""
        return self._file_path, self._committed

    # ------------------------------------------------------------------ opening

    def _follow_state(
        self, path: Path, identity: FileIdentity | None, offset: int, state: ParserState
    ) -> None:
        self._file_path = path  # where the open file was found
        self._identity = identity or FileIdentity(0, 0, 0, "")
        self._committed = self._parsed_to = self._scanned_to = offset
        self._state = state
        self._tentative: _Held | None = None
        self._scanned_size = -1
        self._seen_size = -1
        self._grew_at = self._clock()

    def _locate(self) -> None:
        now = self._clock()
        if now < self._next_locate:
            return
        self._next_locate = now + self._options.refresh_interval
        try:
            path = self._source.locate()
        except LogSourceError as exc:
            if self._path is None:
                self._next_locate = now + min(LOCATE_RETRY_SECONDS, self._options.refresh_interval)
            log.warning("%s: %s; asking again in %.0fs", self._instance.name, exc,
                        self._next_locate - now)  # fmt: skip
            return
        if self._path is None:
            self._path = path
        elif path != self._path:
            log.info("%s: the slow log is now %s (was %s)", self._instance.name, path, self._path)
            self._new_path = path

    def _open(self) -> None:
        resume = self._resume_from
        if resume is not None:
            self._resume_from = None
            if self._resume(resume):
                return
        if self._path is None:
            return
        try:
            fd = os.open(self._path, os.O_RDONLY)
        except FileNotFoundError:
            self._start_at_zero = True  # whatever appears there later is new
            return
        size = os.fstat(fd).st_size
        offset = 0 if self._options.from_start or self._start_at_zero else size
        self._fd = fd
        self._follow_state(self._path, identify(fd), offset, ParserState())
        log.info("%s: reading %s from offset %d", self._instance.name, self._path, offset)
        self._commit_position()

    def _resume(self, checkpoint: Checkpoint) -> bool:
        candidates = [Path(checkpoint.path), *([self._path] if self._path else [])]
        found = find_file(checkpoint.file, candidates)
        if found is not None:
            fd, where = found
            st = os.fstat(fd)
            if st.st_size >= checkpoint.offset:
                self._fd = fd
                state = ParserState(checkpoint.time_line, checkpoint.db)
                # The same first bytes, maybe in a copy (copytruncate) with another inode.
                identity = replace(checkpoint.file, dev=st.st_dev, ino=st.st_ino)
                self._follow_state(where, identity, checkpoint.offset, state)
                self._path = self._path or where
                log.info("%s: resuming %s at offset %d", self._instance.name, where,
                         checkpoint.offset)  # fmt: skip
                return True
            os.close(fd)
        log.warning(
            "%s: the file of the checkpoint (%s, offset %d) is gone or was truncated; entries "
            "written to it after that offset are lost. Reading the current log from its start.",
            self._instance.name, checkpoint.path, checkpoint.offset,
        )  # fmt: skip
        self._start_at_zero = True
        return False

    # ------------------------------------------------------------------ reading

    def _check_in_place_rewrite(self) -> None:
        """Copytruncate (or any rewrite in place): start the file again from 0."""
        assert self._fd is not None
        size = os.fstat(self._fd).st_size
        if size >= self._scanned_to and matches(self._fd, self._identity):
            return
        log.info("%s: %s was truncated or rewritten; reading it from the start",
                 self._instance.name, self._file_path)  # fmt: skip
        held = self._tentative
        if held is not None:  # read before the truncation: the best there is of it
            self._add(held.event, end=self._scanned_to, truncated=False, state=held.state)
        self._cut()
        self._follow_state(self._file_path, identify(self._fd), 0, self._state)
        self._commit_position()

    def _read(self, *, drain: bool = False) -> None:
        assert self._fd is not None
        now = self._clock()
        size = os.fstat(self._fd).st_size
        if size != self._seen_size:
            self._seen_size, self._grew_at = size, now
        # A long backlog is read a slice per poll, so that a stop request is not kept waiting;
        # each slice ends further than the last (an entry may be longer than a slice).
        reached = max(self._scanned_size, self._scanned_to)
        stop = size if drain else min(size, reached + MAX_SCAN_BYTES)
        idle = stop == size and now - self._grew_at >= self._options.idle_grace
        final = drain or idle
        if (
            stop != self._scanned_size
            or (final and self._tentative is not None)
            or (drain and self._parsed_to < size)
        ):
            self._scan(stop, final=final, drain=drain)

    def _scan(self, stop: int, *, final: bool, drain: bool) -> None:
        assert self._fd is not None
        prelude = self._state.prelude()
        scan = _Scan(
            self._fd, start=self._parsed_to, stop=stop, first_line=len(prelude) + 1,
            time_line=self._state.time_line, take_partial=drain,
            max_line_bytes=self._options.max_query_length * MAX_BYTES_PER_CHAR,
        )  # fmt: skip
        stats = ParseStats()
        held: _Held | None = None
        for event in parse_slow_log(itertools.chain(prelude, scan.lines()), stats):
            start, cut, time_line = scan.entry_start(event.line)
            state = ParserState(time_line, event.db)
            if held is not None:
                self._add(held.event, end=start, truncated=cut, state=state)
            held = _Held(event, start, state)
        self._scanned_size, self._scanned_to = stop, scan.position
        self._tentative = None
        for line, reason in stats.skipped:
            if line > len(prelude):
                log.debug("%s: skipped an entry after offset %d: %s", self._file_path,
                          self._parsed_to, reason)  # fmt: skip
        if held is None:
            if final:
                self._parsed_to = scan.position
                self._state = ParserState(scan.last_time_line, self._state.db)
            return
        if not final:
            self._parsed_to, self._state, self._tentative = held.start, held.state, held
            return
        state = ParserState(scan.last_time_line, held.event.db)
        self._add(held.event, end=scan.position, truncated=scan.cut_in_rest(), state=state)
        self._parsed_to, self._state = scan.position, state

    def _add(self, event: SlowLogEvent, *, end: int, truncated: bool, state: ParserState) -> None:
        if event.ts is None:
            event.ts = datetime.now(UTC)
        if self._minute_batches:
            minute = event.ts.replace(second=0, microsecond=0)
            if self._pending_minute is not None and minute > self._pending_minute:
                self._cut()  # a new minute in file order starts a new batch
            if not len(self._pending):
                self._pending_minute = minute
        self._pending.add(SlowLogEntry(event, truncated))
        self._pending_end, self._pending_state = end, state
        if self._pending.full:
            self._cut()

    def _cut(self) -> None:
        if not len(self._pending):
            return
        self._grow_identity()
        end, state = self._pending_end, self._pending_state
        batch_id = slowlog_batch_id(self._instance.name, self._identity, self._committed, end)
        # Taken from the pending batch only once the sink has it: if the sink fails (disk
        # full), the same entries are offered again with the next cut.
        checkpoint = self._checkpoint(end, state)
        self._sink(SlowLogBatch(batch_id, tuple(self._pending.entries), checkpoint))
        log.debug("%s: handed on %d entries of %s, up to offset %d", self._instance.name,
                  len(self._pending), self._file_path, end)  # fmt: skip
        self._pending.take()
        self._pending_minute = None
        self._committed = end

    def _commit_position(self) -> None:
        """Record the position alone (a new file, nothing to send yet)."""
        self._cut()
        checkpoint = self._checkpoint(self._committed, self._state)
        self._sink(SlowLogBatch("", (), checkpoint))

    def _checkpoint(self, offset: int, state: ParserState) -> Checkpoint:
        return Checkpoint(
            path=str(self._file_path), file=self._identity, offset=offset,
            time_line=state.time_line, db=state.db, seq=0,
        )  # fmt: skip

    def _grow_identity(self) -> None:
        # A file first seen nearly empty is identified by few bytes; take more once it has
        # them (a copytruncate is recognised by those bytes changing), unless they changed.
        assert self._fd is not None
        known = self._identity.head_len
        grown = known < HEAD_BYTES and known < os.fstat(self._fd).st_size
        if grown and matches(self._fd, self._identity):
            self._identity = identify(self._fd)

    # ------------------------------------------------------------------ rotation

    def _successor(self) -> tuple[int, Path, int] | None:
        """The file the server writes to now, if not the open one: (fd, path, start)."""
        if self._new_path is not None:
            return self._open_new_path(self._new_path)
        if self._path is None:
            return None
        try:
            st = os.stat(self._path)
        except FileNotFoundError:
            return None  # renamed or deleted: the server still writes to the open file
        if (st.st_dev, st.st_ino) == (self._identity.dev, self._identity.ino):
            return None
        if st.st_size == 0:
            return None  # created by logrotate, not written to by the server yet
        try:
            return os.open(self._path, os.O_RDONLY), self._path, 0
        except FileNotFoundError:
            return None

    def _open_new_path(self, path: Path) -> tuple[int, Path, int] | None:
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        self._path, self._new_path = path, None
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) == (self._identity.dev, self._identity.ino):
            os.close(fd)  # the same file under another name
            return None
        # The file may hold older logs: what the server wrote since it opened it starts
        # with the banner it wrote then.
        return fd, path, last_banner_offset(fd)

    def _switch(self, fd: int, path: Path, start: int) -> None:
        """Read the open file to its end, any file the server wrote between it and ``fd``
        (rotated again before a poll saw it), then follow ``fd`` from ``start``."""
        assert self._fd is not None
        finished = os.fstat(self._fd)
        self._read(drain=True)
        self._cut()
        self.close()
        self._finished.append((finished.st_dev, finished.st_ino))
        if path == self._file_path:  # rotated at the same path, not a newly named log
            missed = missed_rotations(path, finished, os.fstat(fd), set(self._finished))
            for missed_fd, missed_path in missed:
                log.warning("%s: %s was rotated away before it was read; reading it now",
                            self._instance.name, missed_path)  # fmt: skip
                self._read_whole(missed_fd, missed_path)
        self._fd = fd
        log.info("%s: following %s from offset %d", self._instance.name, path, start)
        self._follow_state(path, identify(fd), start, self._state)
        self._commit_position()

    def _read_whole(self, fd: int, path: Path) -> None:
        self._fd = fd
        self._follow_state(path, identify(fd), 0, self._state)
        self._commit_position()
        self._read(drain=True)
        self._cut()
        st = os.fstat(fd)
        self._finished.append((st.st_dev, st.st_ino))
        self.close()

    def _maybe_rotate(self) -> None:
        """Rename the log to ``.old`` and have the server reopen it, above the set size."""
        limit = self._options.rotate_above_mb * MEGABYTE
        if not self._rotation or self._path is None or self._seen_size < limit:
            return
        try:
            st = os.stat(self._path)
        except FileNotFoundError:
            return  # rotated already; the server has not reopened it yet
        if (st.st_dev, st.st_ino) != (self._identity.dev, self._identity.ino):
            return
        rotated = self._path.with_name(self._path.name + ROTATED_SUFFIX)
        os.replace(self._path, rotated)
        try:
            self._source.flush()
        except LogSourceError as exc:
            if not self._path.exists():
                os.replace(rotated, self._path)
            self._rotation = False
            log.error("%s: cannot rotate the slow log, rotation is off until restart: %s",
                      self._instance.name, exc)  # fmt: skip
            return
        log.info("%s: rotated %s (%d bytes) to %s", self._instance.name, self._path,
                 self._seen_size, rotated)  # fmt: skip
