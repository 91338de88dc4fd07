"""Slow-log events in the ingest wire format, and the batch they wait in until it is cut."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime
from typing import Any

from quanta.analysis.fingerprint import fingerprint
from quanta.analysis.redact import redact
from quanta.analysis.slowlog import SlowLogEvent
from quanta_agent.checkpoint import FileIdentity
from quanta_agent.config import BatchSettings
from quanta_agent.importer import event_to_wire
from quanta_agent.policy import ExamplePolicy

SLOWLOG_SOURCE = "slowlog"
# JSON keys, numbers and punctuation of one wire event, besides its query text.
EVENT_OVERHEAD_BYTES = 250
# Query text sent in place of a statement whose masked form is empty.
EMPTY_MASKED_TEXT = "?"


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
