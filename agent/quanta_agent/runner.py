"""`quanta-agent run`: tail, poll, spool and ship for every configured instance.

Per instance, three threads share one spool:

* the tailer reads the slow log and hands each batch to the spool, then saves the
  checkpoint (so a checkpoint never runs ahead of what is durable);
* the collector polls performance_schema and statistics every ``poll_interval``;
* the shipper sends the spool's batches in order, oldest first, retrying with
  exponential backoff while the server is unreachable, and deletes each once answered;
  between batches it sends each source's status report every ``status_interval`` and
  logs the instance's progress at INFO every ``progress_log_interval`` (health.py).

SIGTERM (or SIGINT) stops reading, cuts and spools what was read, saves the checkpoints,
gives the shippers ``shutdown_timeout`` seconds to deliver the spool, and exits 0;
whatever is left waits in the spool for the next start.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

from quanta.analysis import native
from quanta_agent.batcher import MINUTE_MAX_BYTES, EventBatcher, MinuteBatcher
from quanta_agent.checkpoint import Checkpoint
from quanta_agent.collectors import Collector, batch_size, make_collectors, split_fields
from quanta_agent.config import AgentSettings, InstanceSettings, Source, Wire
from quanta_agent.events import SLOWLOG_SOURCE
from quanta_agent.health import InstanceHealth, progress_line
from quanta_agent.logsource import SlowLogSource
from quanta_agent.payload import encode_rows
from quanta_agent.shipper import REFUSED_FOR_GOOD, ShipError, Shipper
from quanta_agent.spool import Spool, SpoolEntry
from quanta_agent.tailer import SlowLogTailer

log = logging.getLogger(__name__)

LOCK_FILE = "lock"
# How long an idle shipper waits for a batch before it looks whether it should stop.
SHIPPER_IDLE_SECONDS = 0.5
# Rows of one list (digests, tables, ...) per collector batch: a performance_schema example
# is at most a few KB, so a batch stays far below the server's body limit.
MAX_ROWS_PER_COLLECTOR_BATCH = 500
# After an unexpected error, a thread waits this long before it tries again.
ERROR_PAUSE_SECONDS = 5.0


class AlreadyRunning(Exception):
    """Another agent holds an instance's spool directory."""


class InstanceRunner:
    """The tailer, collector and shipper threads of one instance."""

    def __init__(
        self, settings: AgentSettings, instance: InstanceSettings, stop: threading.Event
    ) -> None:
        """Open the instance's spool and recover its checkpoint; start nothing yet."""
        self.instance = instance
        self._settings = settings
        self._stop = stop
        self.give_up = threading.Event()  # set when the shipper must stop retrying
        self.directory = settings.spool_path(instance)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._lock_fd = _lock(self.directory)
        self.spool = Spool(self.directory, max_bytes=settings.spool_cap_bytes(instance))
        self.health = InstanceHealth([source.value for source in instance.sources])
        self._producers: list[threading.Thread] = []
        self._shipper_thread: threading.Thread | None = None
        self._reports_refused = False

    def start(self) -> None:
        """Start the threads."""
        name = self.instance.name
        if Source.SLOWLOG in self.instance.sources:
            self._producers.append(_thread(f"tail-{name}", self._tail))
        if any(s != Source.SLOWLOG for s in self.instance.sources):
            self._producers.append(_thread(f"collect-{name}", self._collect))
        self._shipper_thread = _thread(f"ship-{name}", self._ship)

    def join_producers(self) -> None:
        """Wait for the tailer and collector to stop (after ``stop`` is set)."""
        for thread in self._producers:
            thread.join()

    def join_shipper(self, timeout: float | None) -> None:
        """Wait for the shipper to empty the spool, at most ``timeout`` seconds."""
        if self._shipper_thread is not None:
            self._shipper_thread.join(timeout)

    def close(self) -> None:
        """Stop the shipper for good and release the spool."""
        self.give_up.set()
        self.join_shipper(None)
        os.close(self._lock_fd)
        pending, size = self.spool.pending()
        log.info(
            "%s: shipped %d batches (%d events); %d batches (%d bytes) left in the spool; "
            "dropped %d batches (%d events) for lack of spool space",
            self.instance.name, self.health.shipped_batches, self.health.shipped_events,
            pending, size, self.spool.dropped_batches, self.spool.dropped_events,
        )  # fmt: skip

    # ------------------------------------------------------------------ slow log

    def _tail(self) -> None:
        """The slow-log pipeline: read (tailer) -> fold (batcher) -> spool; the shipper
        thread ships."""
        source = SlowLogSource(self.instance)
        batcher = self._batcher()
        tailer = SlowLogTailer(
            instance=self.instance,
            limits=self._settings.batch,
            source=source,
            sink=batcher.take,
            resume_from=self.spool.checkpoint,
            minute_batches=isinstance(batcher, MinuteBatcher),
        )
        interval = self.instance.slowlog.check_interval
        name = self.instance.name
        log.info(
            "%s: tailing the slow log %s", name,
            self.instance.slowlog.path or "named by the server's @@slow_query_log_file",
        )  # fmt: skip
        try:
            while not self._stop.is_set():
                error = _guarded(f"{name}: slow log", tailer.poll)
                if error is None:
                    error = _guarded(f"{name}: minute buckets", batcher.tick)
                self.health.read(SLOWLOG_SOURCE, error)
                self._stop.wait(interval if error is None else ERROR_PAUSE_SECONDS)
        finally:
            _guarded(f"{name}: final slow-log batch", tailer.flush)
            _guarded(f"{name}: final minute buckets", batcher.flush)
            tailer.close()
            source.close()

    def _batcher(self) -> MinuteBatcher | EventBatcher:
        batch = self._settings.batch
        if batch.wire != Wire.BUCKETS:
            return EventBatcher(
                instance=self.instance.name, policy=self.instance.examples,
                max_length=self.instance.slowlog.max_query_length,
                spool=self._spool_slowlog, save_position=self.spool.save_position,
            )  # fmt: skip
        return MinuteBatcher(
            instance=self.instance.name, policy=self.instance.examples,
            max_length=self.instance.slowlog.max_query_length, grace=batch.minute_grace,
            max_statements=batch.max_events, max_bytes=MINUTE_MAX_BYTES,
            spool=self._spool_slowlog,
            save_position=self.spool.save_position,
            tag_keys=frozenset(self._settings.tag_keys),
        )  # fmt: skip

    def _spool_slowlog(
        self, batch_id: str, body: bytes, statements: int, checkpoint: Checkpoint
    ) -> None:
        """Spool a slow-log batch durably and move the checkpoint past its statements."""
        self.spool.put(
            batch_id=batch_id, source=SLOWLOG_SOURCE, events=statements, body=body,
            checkpoint=checkpoint,
        )  # fmt: skip

    # ------------------------------------------------------------------ collectors

    def _collect(self) -> None:
        collectors = make_collectors(self.instance)
        if collectors:
            log.info(
                "%s: polling %s every %g s", self.instance.name,
                ", ".join(c.source for c in collectors), self.instance.poll_interval,
            )  # fmt: skip
        while collectors:
            for collector in collectors:
                error = _guarded(f"{self.instance.name}: {collector.source}", self._poll, collector)
                self.health.read(collector.source, error)
            if self._stop.wait(self.instance.poll_interval):
                return

    def _poll(self, collector: Collector) -> None:
        fields = collector.poll()
        for part in split_fields(fields, MAX_ROWS_PER_COLLECTOR_BATCH):
            batch_id = f"{collector.source}-{uuid.uuid4().hex}"
            body: dict[str, Any] = {
                "batch_id": batch_id,
                "instance": self.instance.name,
                "source": collector.source,
                **part,
            }
            self.spool.put(
                batch_id=batch_id, source=collector.source, events=batch_size(part),
                body=encode_rows(body),
            )  # fmt: skip

    # ------------------------------------------------------------------ shipping

    def _ship(self) -> None:
        shipper = Shipper(
            server=self._settings.server,
            token=self._settings.token,
            instance=self.instance.name,
            on_error=self.health.delivery_failed,
        )
        reports = _Every(self._settings.status_interval)
        progress = _Every(self._settings.progress_log_interval, at_once=False)
        try:
            while not self.give_up.is_set():
                if reports.due():
                    self._report(shipper)
                if progress.due():
                    self._log_progress()
                entry = self.spool.take(SHIPPER_IDLE_SECONDS)
                if entry is None:
                    if self._stop.is_set() and not any(t.is_alive() for t in self._producers):
                        return  # stopping, and everything spooled is delivered
                    continue
                self._deliver(shipper, entry)
        finally:
            shipper.close()

    def _report(self, shipper: Shipper) -> None:
        """Send each source's status report, once; a failure waits for the next round."""
        if self._reports_refused:
            return
        for source in self.instance.sources:
            status = self.health.status(
                source.value,
                interval=self._settings.status_interval,
                spooled=self.spool.pending(),
                dropped=self.spool.dropped_batches,
            )
            if self.instance.labels:
                status.labels = dict(self.instance.labels)
            try:
                taken = shipper.report(source.value, status)
            except Exception as exc:  # unreachable: the data batches' retries say so
                log.debug("%s: status report not sent: %s", self.instance.name, exc)
                return
            if not taken:
                self._reports_refused = True
                log.info(
                    "%s: the server does not take agent status reports (it is older than "
                    "this agent); its health page shows the batches only",
                    self.instance.name,
                )
                return

    def _log_progress(self) -> None:
        progress = self.health.progress(
            spooled=self.spool.pending(), dropped=self.spool.dropped_batches
        )
        log.info(
            "%s",
            progress_line(
                self.instance.name,
                progress,
                seconds=self._settings.progress_log_interval,
                now=datetime.now(UTC),
            ),
        )

    def _deliver(self, shipper: Shipper, entry: SpoolEntry) -> None:
        try:
            body = self.spool.read_body(entry)
        except FileNotFoundError:  # dropped for space while we were busy
            self.spool.done(entry)
            return
        try:
            shipper.deliver(body, batch_id=entry.batch_id, give_up=self.give_up)
        except ShipError as exc:
            if exc.status_code in REFUSED_FOR_GOOD:
                self.spool.reject(entry, str(exc))
                self.health.refused(str(exc))
            else:
                self.spool.release(entry)
            return
        except Exception as exc:  # giving up (shutdown) or an unexpected client error
            if not self.give_up.is_set():
                log.error("%s: cannot send batch %s: %s", self.instance.name, entry.batch_id, exc)
                self.give_up.wait(ERROR_PAUSE_SECONDS)
            self.spool.release(entry)
            return
        self.spool.done(entry)
        self.health.shipped(entry.events)


class AgentRunner:
    """All instances of one configuration, until SIGTERM or SIGINT."""

    def __init__(self, settings: AgentSettings) -> None:
        """Prepare every instance (spools opened, checkpoints recovered)."""
        self.settings = settings
        self.stop = threading.Event()
        self.instances = [
            InstanceRunner(settings, instance, self.stop)
            for instance in settings.instances.values()
        ]

    def run(self) -> None:
        """Run until a stop signal; then flush, checkpoint and deliver what time allows."""
        with _stop_on_signals(self.stop):
            for runner in self.instances:
                runner.start()
            log.info("quanta-agent running for %s, shipping to %s; %s",
                     ", ".join(r.instance.name for r in self.instances),
                     self.settings.server, native.summary())  # fmt: skip
            self.stop.wait()
            log.info("stopping: flushing slow logs, delivering the spool")
            for runner in self.instances:
                runner.join_producers()
            deadline = time.monotonic() + self.settings.shutdown_timeout
            for runner in self.instances:  # the shippers drain in parallel
                runner.join_shipper(max(0.0, deadline - time.monotonic()))
            for runner in self.instances:
                runner.close()


def _lock(directory: Path) -> int:
    fd = os.open(directory / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError as exc:
        os.close(fd)
        raise AlreadyRunning(f"another quanta-agent is using {directory}") from exc
    return fd


def _thread(name: str, target: Callable[[], None]) -> threading.Thread:
    thread = threading.Thread(target=target, name=name, daemon=True)
    thread.start()
    return thread


def _guarded(what: str, action: Callable[..., None], *args: Any) -> Exception | None:
    """Run one step; log an unexpected error instead of killing the thread, and return it."""
    try:
        action(*args)
    except Exception as exc:
        # Mostly a server that cannot be reached: one line; the traceback at debug level.
        debug = log.isEnabledFor(logging.DEBUG)
        log.warning("%s failed, trying again later: %s", what, exc, exc_info=debug)
        return exc
    return None


class _Every:
    """Due every ``seconds`` (never when ``seconds`` is 0), the first time at once or not."""

    def __init__(self, seconds: float, *, at_once: bool = True) -> None:
        self._seconds = seconds
        self._next = time.monotonic() + (0.0 if at_once else seconds)

    def due(self) -> bool:
        if self._seconds <= 0 or time.monotonic() < self._next:
            return False
        self._next = time.monotonic() + self._seconds
        return True


@contextlib.contextmanager
def _stop_on_signals(stop: threading.Event) -> Iterator[None]:
    def handler(signum: int, frame: FrameType | None) -> None:
        log.info("received %s", signal.Signals(signum).name)
        stop.set()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
