"""The fold stage of the slow-log pipeline (read -> fold -> spool -> ship): the tailer's
batches of parsed entries become wire batches (quanta.wire models, encoded) for the spool.

``batch.wire: buckets`` (the default): :class:`MinuteBatcher` folds them per minute into
bucket batches; ``batch.wire: events``: :class:`EventBatcher` sends each entry as an event.
Both take a :class:`~quanta_agent.tailer.SlowLogBatch`, and hand ``spool(batch_id, body,
statements, checkpoint)`` what is to be stored, or ``save_position(checkpoint)`` when only
the position moves. Imports only the read stage (tailer) and the wire leaves.
"""

from __future__ import annotations

import hashlib
import random
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from quanta.analysis.fingerprinter import Fingerprinter
from quanta.analysis.folder import MinuteFolder
from quanta.analysis.metrics import MAX_COUNTER
from quanta_agent.aggregates import aggregates, extended_metrics
from quanta_agent.checkpoint import Checkpoint
from quanta_agent.events import slowlog_batch, wire_event
from quanta_agent.payload import encode_batch
from quanta_agent.policy import ExamplePolicy
from quanta_agent.tailer import SlowLogBatch

# Memory a statement waiting in a minute folder takes besides its text (91 bytes measured).
FOLDED_OVERHEAD_BYTES = 100
# Memory the statements of the minutes held may take before they are shipped (in parts).
MINUTE_MAX_BYTES = 64_000_000
_MINUTE = timedelta(minutes=1)

SpoolBatch = Callable[[str, bytes, int, Checkpoint], None]
"""Stores one encoded batch durably: (batch_id, body, statements, checkpoint after it)."""


class EventBatcher:
    """Sends each tailer batch as one batch of wire events (``batch.wire: events``).

    The batch keeps the tailer's id (a byte range of the file), so a batch sent again after
    a crash is recognised.
    """

    def __init__(
        self,
        *,
        instance: str,
        policy: ExamplePolicy,
        max_length: int,
        spool: SpoolBatch,
        save_position: Callable[[Checkpoint], None],
    ) -> None:
        """Describe the instance's batches; ``spool`` stores one, as MinuteBatcher's."""
        self._instance = instance
        self._policy = policy
        self._max_length = max_length
        self._spool = spool
        self._save_position = save_position

    def take(self, batch: SlowLogBatch) -> None:
        """Spool one tailer batch as wire events (or move the position alone)."""
        if not batch.entries:
            self._save_position(batch.checkpoint)
            return
        now = datetime.now(UTC)  # the tailer dates every entry: never used
        events = [
            wire_event(
                entry.event,
                policy=self._policy,
                max_length=self._max_length,
                truncated=entry.truncated,
                fallback_ts=now,
            )
            for entry in batch.entries
        ]
        body = slowlog_batch(
            batch_id=batch.batch_id, instance=self._instance, events=events, policy=self._policy
        )
        self._spool(batch.batch_id, encode_batch(body), len(events), batch.checkpoint)

    def tick(self) -> None:
        """Nothing is held between batches."""

    def flush(self) -> None:
        """Nothing is held between batches."""


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

    The tailer cuts its batches at each new minute of the log (its ``minute_batches``), so
    the batches held here form runs of one minute each, in file order. A run is spooled,
    as one bucket batch with the checkpoint of its last tailer batch, once its minute has
    ended ``grace`` seconds ago (late entries of it, written after the next minute began,
    go with a later run and merge on the server: buckets add up), or at once when the runs
    held reach ``max_statements`` or ``max_bytes`` together (the statements' texts wait here
    until then; checked before each tailer batch is folded, so one batch more at most).
    Runs are spooled in order, so a checkpoint never moves past a statement whose bucket
    is not spooled; a crash loses only what is in memory here, and the tailer reads it
    again from the last checkpoint. Statements are folded by the tags of ``tag_keys`` only
    (None: every key; see quanta_agent.config's ``tag_keys``).

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
        spool: SpoolBatch,
        save_position: Callable[[Checkpoint], None],
        wall_clock: Callable[[], float] = time.time,
        tag_keys: frozenset[str] | None = None,
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
        self._tag_keys = tag_keys
        self._fingerprinter = Fingerprinter()
        self._rng = random.Random()
        self._runs: deque[_Minute] = deque()

    @property
    def statements(self) -> int:
        """Statements held, not spooled yet."""
        return sum(len(run.folder) for run in self._runs)

    def take(self, batch: SlowLogBatch) -> None:
        """Fold one tailer batch (or hold its position change until what precedes is spooled)."""
        if not batch.entries:
            if self._runs:
                self._runs[-1].checkpoint = batch.checkpoint
            else:
                self._save_position(batch.checkpoint)
            return
        first = batch.entries[0].event.ts
        assert first is not None  # the tailer dates every entry
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
            folder = MinuteFolder(self._fingerprinter, self._rng, tag_keys=self._tag_keys)
            self._runs.append(_Minute(minute, folder, self._wall_clock()))
        run = self._runs[-1]
        for entry in batch.entries:
            event = entry.event
            run.folder.add(event, extended_metrics(event, MAX_COUNTER), entry.truncated)
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
        rows = aggregates(folded, policy=self._policy, max_length=self._max_length)
        body = rows.batch(batch_id=batch_id, instance=self._instance, policy=self._policy)
        return batch_id, encode_batch(body), folded.statements
