"""An on-disk queue of batches waiting for the server, bounded in size, delivered in order.

Every batch goes through the spool, which also keeps the slow-log checkpoint, so that the
checkpoint moves exactly when a batch becomes durable. Each batch is one file,
``<seq>.batch``: a JSON header line (batch id, source, event count, the checkpoint it moves
to) and then the gzip body exactly as it is POSTed. Files are written to a temporary name,
fsynced and renamed, so a crash leaves whole batches only. A batch is offered to the
shipper only once the checkpoint after it is saved: were it delivered and deleted before,
a crash in between would make the tailer read its entries again.

When the spool grows past its cap, the oldest batches are dropped, each with an error in
the log and a running count: losing data must never be silent.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from pathlib import Path

from quanta_agent.checkpoint import (
    Checkpoint,
    fsync_directory,
    load_checkpoint,
    save_checkpoint,
    write_atomically,
)

log = logging.getLogger(__name__)

BATCH_SUFFIX = ".batch"
REJECTED_DIR = "rejected"
# Batches the server refused are kept for inspection, the newest this many.
MAX_REJECTED = 100
_SEQ_DIGITS = 12


@dataclass(frozen=True, slots=True)
class SpoolEntry:
    """One spooled batch (its body stays on disk until it is read)."""

    seq: int
    path: Path
    batch_id: str
    source: str
    events: int
    size: int


class Spool:
    """The spool directory of one instance; safe to use from several threads."""

    def __init__(self, directory: Path, *, max_bytes: int) -> None:
        """Open (or create) a spool and recover its checkpoint.

        Raises:
            CheckpointError: The checkpoint file is unreadable.
        """
        self.directory = directory
        self.max_bytes = max_bytes
        self.dropped_batches = 0
        self.dropped_events = 0
        self._lock = threading.Condition()
        self._entries: OrderedDict[int, SpoolEntry] = OrderedDict()
        self._in_flight: int | None = None
        self._bytes = 0
        directory.mkdir(parents=True, exist_ok=True)
        saved = load_checkpoint(directory)
        spooled = self._load()
        self.last_seq = max([saved.seq if saved else 0, *self._entries])
        self.checkpoint = _newest(saved, spooled)

    # ------------------------------------------------------------------ producers

    def put(
        self,
        *,
        batch_id: str,
        source: str,
        events: int,
        body: bytes,
        checkpoint: Checkpoint | None = None,
    ) -> int:
        """Store one batch durably, then the checkpoint after it; return its sequence number.

        ``checkpoint`` (slow-log batches) is also written into the batch's header, so that a
        crash between the two writes loses nothing: the spooled one is newer.
        """
        with self._lock:
            seq = self.last_seq + 1
            header = {
                "batch_id": batch_id,
                "source": source,
                "events": events,
                "checkpoint": replace(checkpoint, seq=seq).to_json() if checkpoint else None,
            }
            path = self.directory / f"{seq:0{_SEQ_DIGITS}d}{BATCH_SUFFIX}"
            write_atomically(path, json.dumps(header).encode() + b"\n" + body)
            size = path.stat().st_size
            self.last_seq = seq
            if checkpoint is not None:
                self.checkpoint = replace(checkpoint, seq=seq)
                save_checkpoint(self.directory, self.checkpoint)
            self._entries[seq] = SpoolEntry(seq, path, batch_id, source, events, size)
            self._bytes += size
            self._enforce_cap()
            self._lock.notify_all()
            return seq

    def save_position(self, checkpoint: Checkpoint) -> None:
        """Save a checkpoint that no batch goes with (a new file is followed)."""
        with self._lock:
            self.checkpoint = replace(checkpoint, seq=self.last_seq)
            save_checkpoint(self.directory, self.checkpoint)

    # ------------------------------------------------------------------ the shipper

    def take(self, timeout: float) -> SpoolEntry | None:
        """The oldest batch, marked in flight (never dropped); None if none came in time."""
        with self._lock:
            if not self._entries:
                self._lock.wait(timeout)
            if not self._entries:
                return None
            entry = next(iter(self._entries.values()))
            self._in_flight = entry.seq
            return entry

    def read_body(self, entry: SpoolEntry) -> bytes:
        """The gzip body of a spooled batch."""
        data = entry.path.read_bytes()
        return data[data.index(b"\n") + 1 :]

    def done(self, entry: SpoolEntry) -> None:
        """Forget a batch the server has acknowledged."""
        with self._lock:
            self._forget(entry)
            with contextlib.suppress(FileNotFoundError):
                entry.path.unlink()

    def release(self, entry: SpoolEntry) -> None:
        """Give a batch back (not delivered yet; it stays first in line)."""
        with self._lock:
            if self._in_flight == entry.seq:
                self._in_flight = None

    def reject(self, entry: SpoolEntry, reason: str) -> None:
        """Move a batch the server refused for good out of the queue, keeping the file."""
        rejected = self.directory / REJECTED_DIR
        rejected.mkdir(exist_ok=True)
        with self._lock:
            self._forget(entry)
            with contextlib.suppress(FileNotFoundError):
                entry.path.rename(rejected / entry.path.name)
        log.error(
            "server refused batch %s (%d %s events) for good: %s; kept in %s",
            entry.batch_id, entry.events, entry.source, reason, rejected,
        )  # fmt: skip
        for old in sorted(rejected.glob(f"*{BATCH_SUFFIX}"))[:-MAX_REJECTED]:
            old.unlink(missing_ok=True)

    def pending(self) -> tuple[int, int]:
        """Batches and bytes waiting."""
        with self._lock:
            return len(self._entries), self._bytes

    # ------------------------------------------------------------------ internals

    def _forget(self, entry: SpoolEntry) -> None:
        if self._entries.pop(entry.seq, None) is not None:
            self._bytes -= entry.size
        if self._in_flight == entry.seq:
            self._in_flight = None

    def _enforce_cap(self) -> None:
        while self._bytes > self.max_bytes:
            victim = next((e for s, e in self._entries.items() if s != self._in_flight), None)
            if victim is None or victim.seq == self.last_seq:
                return  # the newest batch alone is over the cap: keep it
            self._forget(victim)
            victim.path.unlink(missing_ok=True)
            self.dropped_batches += 1
            self.dropped_events += victim.events
            log.error(
                "SPOOL FULL (%s over %d bytes): dropped the oldest batch %s (%d %s events); "
                "dropped so far: %d batches, %d events",
                self.directory, self.max_bytes, victim.batch_id, victim.events, victim.source,
                self.dropped_batches, self.dropped_events,
            )  # fmt: skip

    def _load(self) -> Checkpoint | None:
        """Index the batches on disk; return the newest slow-log checkpoint among them."""
        for tmp in self.directory.glob(".*.tmp"):
            tmp.unlink(missing_ok=True)  # a write cut short by a crash
        latest: Checkpoint | None = None
        for path in sorted(self.directory.glob(f"*{BATCH_SUFFIX}")):
            try:
                seq = int(path.name.removesuffix(BATCH_SUFFIX))
                with path.open("rb") as handle:
                    header = json.loads(handle.readline())
                entry = SpoolEntry(
                    seq, path, header["batch_id"], header["source"], header["events"],
                    path.stat().st_size,
                )  # fmt: skip
            except (OSError, ValueError, KeyError) as exc:
                log.error("ignoring unreadable spool file %s: %s", path, exc)
                continue
            self._entries[seq] = entry
            self._bytes += entry.size
            if header.get("checkpoint"):
                latest = Checkpoint.from_json(header["checkpoint"])
        fsync_directory(self.directory)
        return latest


def _newest(saved: Checkpoint | None, spooled: Checkpoint | None) -> Checkpoint | None:
    # A spooled batch newer than the checkpoint file means a crash came between spooling
    # it and saving the checkpoint: its checkpoint is the true one.
    if spooled is not None and (saved is None or spooled.seq > saved.seq):
        return spooled
    return saved
