"""Slow-log events in the ingest wire format, and the batch they wait in until it is cut."""

from __future__ import annotations

import hashlib
import random
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from quanta.analysis.fingerprint import fingerprint
from quanta.analysis.fingerprinter import Fingerprinter
from quanta.analysis.folder import MinuteFolder
from quanta.analysis.metrics import MAX_COUNTER
from quanta.analysis.redact import redact
from quanta.analysis.slowlog import SlowLogEvent
from quanta_agent.aggregates import aggregates, extended_metrics
from quanta_agent.checkpoint import Checkpoint, FileIdentity
from quanta_agent.config import BatchSettings
from quanta_agent.importer import event_to_wire
from quanta_agent.policy import ExamplePolicy
from quanta_agent.shipper import encode_batch

if TYPE_CHECKING:
    from quanta_agent.tailer import SlowLogBatch

SLOWLOG_SOURCE = "slowlog"
# JSON keys, numbers and punctuation of one wire event, besides its query text.
EVENT_OVERHEAD_BYTES = 250
# Memory a statement waiting in a minute folder takes besides its text (91 bytes measured).
FOLDED_OVERHEAD_BYTES = 100
# Memory the statements of the minutes held may take before they are shipped (in parts).
MINUTE_MAX_BYTES = 64_000_000
# Query text sent in place of a statement whose masked form is empty.
EMPTY_MASKED_TEXT = "?"
_MINUTE = timedelta(minutes=1)


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


def wire_event(
    event: SlowLogEvent,
    *,
    policy: ExamplePolicy,
    max_length: int,
    truncated: bool,
    fallback_ts: datetime,
) -> dict[str, Any]:
    """One event as the ingest API takes it, its text shaped by the example policy.

    ``full`` sends the statement as logged but for the secret of a credential-bearing
    statement (``IDENTIFIED BY '<redacted>'``); ``masked`` and ``off`` send its fingerprint
    (literals replaced), which the server needs to group it; the batch then says which
    policy applies (see :func:`slowlog_batch`). Text longer than ``max_length`` is cut
    and the event marked ``truncated``, as is an event whose lines were cut while read.
    """
    wire = event_to_wire(event, fallback_ts)
    text = redact(event.query) if policy == ExamplePolicy.FULL else fingerprint(event.query)
    if len(text) > max_length:
        text, truncated = text[:max_length], True
    wire["query"] = text or EMPTY_MASKED_TEXT
    if truncated:
        wire["truncated"] = True
    return wire


def slowlog_batch(
    *, batch_id: str, instance: str, events: list[dict[str, Any]], policy: ExamplePolicy
) -> dict[str, Any]:
    """The body of a slow-log batch; ``examples`` is present unless the policy is full."""
    batch: dict[str, Any] = {
        "batch_id": batch_id,
        "instance": instance,
        "source": SLOWLOG_SOURCE,
        "events": events,
    }
    if policy != ExamplePolicy.FULL:
        batch["examples"] = policy.value
    return batch


class PendingBatch:
    """Events waiting to be cut into a batch by count, size or age."""

    def __init__(self, limits: BatchSettings, clock: Callable[[], float]) -> None:
        """Start empty."""
        self._limits = limits
        self._clock = clock
        self.events: list[dict[str, Any]] = []
        self._bytes = 0
        self._opened = 0.0

    def __len__(self) -> int:
        return len(self.events)

    def add(self, event: dict[str, Any]) -> None:
        """Append one wire event."""
        if not self.events:
            self._opened = self._clock()
        self.events.append(event)
        self._bytes += len(event["query"]) + EVENT_OVERHEAD_BYTES

    @property
    def full(self) -> bool:
        """Whether the count or size limit is reached."""
        return len(self.events) >= self._limits.max_events or self._bytes >= self._limits.max_bytes

    @property
    def due(self) -> bool:
        """Whether the oldest event has waited long enough."""
        return bool(self.events) and self._clock() - self._opened >= self._limits.max_age

    def take(self) -> list[dict[str, Any]]:
        """The events, leaving the batch empty."""
        events, self.events, self._bytes = self.events, [], 0
        return events


@dataclass(slots=True)
class _Minute:
    """Consecutive tailer batches of one minute (in file order), folded."""

    minute: datetime
    folder: MinuteFolder
    opened: float  # wall time of its first statement's arrival here
    batch_ids: list[str] = field(default_factory=list)
    checkpoint: Checkpoint | None = None
    size: int = 0  # bytes of statement text held, and FOLDED_OVERHEAD_BYTES a statement
    spooled: tuple[str, bytes, int] | None = None  # folded, in case spooling must be retried


class MinuteBatcher:
    """Folds the tailer's batches per minute and spools a minute's buckets when it closes.

    The tailer cuts its batches at each new minute of the log (see its ``fold`` option), so
    the batches held here form runs of one minute each, in file order. A run is spooled,
    as one bucket batch with the checkpoint of its last tailer batch, once its minute has
    ended ``grace`` seconds ago (late entries of it, written after the next minute began,
    go with a later run and merge on the server: buckets add up), or at once when the runs
    held reach ``max_statements`` or ``max_bytes`` together (the statements' texts wait here
    until then; checked before each tailer batch is folded, so one batch more at most).
    Runs are spooled in order, so a checkpoint never moves past a statement whose bucket
    is not spooled; a crash loses only what is in memory here, and the tailer reads it
    again from the last checkpoint.

    Example:
        >>> batcher = MinuteBatcher(instance="db1", policy=ExamplePolicy.FULL, ...)
        >>> batcher.take(tailer_batch)  # for each batch the tailer cuts
        >>> batcher.tick()  # every poll: spools the minutes that closed
    """

    def __init__(
        self,
        *,
        instance: str,
        policy: ExamplePolicy,
        max_length: int,
        grace: float,
        max_statements: int,
        max_bytes: int,
        spool: Callable[[str, bytes, int, Checkpoint], None],
        save_position: Callable[[Checkpoint], None],
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        """Hold nothing yet; ``spool(batch_id, body, statements, checkpoint)`` stores one."""
        self._instance = instance
        self._policy = policy
        self._max_length = max_length
        self._grace = grace
        self._max_statements = max_statements
        self._max_bytes = max_bytes
        self._spool = spool
        self._save_position = save_position
        self._wall_clock = wall_clock
        self._fingerprinter = Fingerprinter()
        self._rng = random.Random()
        self._runs: deque[_Minute] = deque()

    @property
    def statements(self) -> int:
        """Statements held, not spooled yet."""
        return sum(len(run.folder) for run in self._runs)

    def take(self, batch: SlowLogBatch) -> None:
        """Fold one tailer batch (or hold its position change until what precedes is spooled)."""
        if not batch.raw:
            if self._runs:
                self._runs[-1].checkpoint = batch.checkpoint
            else:
                self._save_position(batch.checkpoint)
            return
        first = batch.raw[0][0].ts
        assert first is not None  # the tailer dates every folded event
        minute = first.replace(second=0, microsecond=0)
        # Spooling comes before this batch is folded: should it fail (disk full), the batch
        # is left unfolded, for the tailer to offer again, and never folded twice.
        if self._full:
            self.flush()
        if not self._runs or minute > self._runs[-1].minute:
            # A backlog read in one poll (up to 32 MB: 18 minutes of bench/agent_memory.py's
            # log, 65,000 statements: 46 MB of peak RSS) is not held here whole until the
            # next tick: the minutes that closed go as the next one begins.
            self.tick()
            folder = MinuteFolder(self._fingerprinter, self._rng)
            self._runs.append(_Minute(minute, folder, self._wall_clock()))
        run = self._runs[-1]
        for event, truncated in batch.raw:
            run.folder.add(event, extended_metrics(event, MAX_COUNTER), truncated)
            run.size += len(event.query) + FOLDED_OVERHEAD_BYTES
        run.batch_ids.append(batch.batch_id)
        run.checkpoint = batch.checkpoint

    def tick(self) -> None:
        """Spool the runs whose minute ended ``grace`` seconds ago, oldest first.

        A run held a minute and the grace is spooled too, whatever its statements' time
        says: a log whose clock runs ahead of the agent's must not hold statements back.
        Every run is spooled when those held reach ``max_statements`` or ``max_bytes``.
        """
        if self._full:
            self.flush()
            return
        wall = self._wall_clock()
        now = datetime.fromtimestamp(wall, UTC)
        held_for = _MINUTE.total_seconds() + self._grace
        while self._runs and (
            self._runs[0].minute + _MINUTE + timedelta(seconds=self._grace) <= now
            or wall - self._runs[0].opened >= held_for
        ):
            self._spool_run(self._runs[0])
            self._runs.popleft()

    @property
    def _full(self) -> bool:
        """Whether the runs held reach ``max_statements`` or ``max_bytes`` together."""
        size = sum(run.size for run in self._runs)
        return self.statements >= self._max_statements or size >= self._max_bytes

    def flush(self) -> None:
        """Spool every run held, in order (size bound reached, or stopping)."""
        while self._runs:
            self._spool_run(self._runs[0])
            self._runs.popleft()

    def _spool_run(self, run: _Minute) -> None:
        """Spool one run; if the spool fails (disk full), it is offered again next time."""
        assert run.checkpoint is not None
        if run.spooled is None:
            run.spooled = self._encode(run)
        batch_id, body, statements = run.spooled
        if not statements:
            self._save_position(run.checkpoint)
        else:
            self._spool(batch_id, body, statements, run.checkpoint)

    def _encode(self, run: _Minute) -> tuple[str, bytes, int]:
        folded = run.folder.fold()
        # The same tailer batches (the same byte ranges) give the same id.
        batch_id = hashlib.sha256("\n".join(run.batch_ids).encode()).hexdigest()[:32]
        if not folded.queries:
            return batch_id, b"", 0
        body = {
            "batch_id": batch_id,
            "instance": self._instance,
            "source": SLOWLOG_SOURCE,
            "examples": self._policy.value,
            **aggregates(folded, policy=self._policy, max_length=self._max_length),
        }
        return batch_id, encode_batch(body), folded.statements
