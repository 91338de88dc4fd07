"""Operations: Prometheus metrics shared by the API, worker and beat processes, and logs.

Metrics. The API, each Celery pool process and beat are separate processes; Prometheus
scrapes one URL (the API's ``/metrics``). They share their counters through
prometheus_client's multiprocess mode: every process writes its values to memory-mapped
files in one directory (``QUANTA_METRICS_DIR``, default ``data_dir/metrics``) and the API
sums them at scrape time. The directory must be named in ``PROMETHEUS_MULTIPROC_DIR``
before prometheus_client is first imported: :func:`metrics_environment` gives the variables
that ``quanta`` puts in the environment of the processes it starts. Queue depth and lag
are not counters of any one process: they are read from ``ingest_batches`` at scrape time.

Logs. structlog renders every record (structlog's own and the standard library's, which
Celery, uvicorn and our modules use) as one JSON object per line in production, or as
aligned console lines in development. Query text is never logged.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quanta.core.config import Settings

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry
    from prometheus_client.metrics_core import Metric

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
METRICS_SUBDIR = "metrics"
PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# Seconds: from a fast batch (a few ms) up to one that waits on locks or a slow store.
TASK_DURATION_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)
REQUEST_DURATION_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
# Loggers whose per-request lines duplicate our request metrics.
QUIET_LOGGERS = ("uvicorn.access", "httpx", "httpcore")


# --------------------------------------------------------------------------- metrics


def metrics_dir(settings: Settings) -> Path:
    """Where the processes of one deployment share their metric files."""
    return settings.metrics_dir or settings.data_dir / METRICS_SUBDIR


def metrics_environment(settings: Settings, *, fresh: bool) -> dict[str, str]:
    """Environment variables that put a process in multiprocess metrics mode.

    With ``fresh``, the directory is emptied first: the files of processes of an earlier
    run would otherwise be added to this run's counters.
    """
    if not settings.metrics_enabled:
        return {}
    directory = metrics_dir(settings)
    if fresh and directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True, exist_ok=True)
    return {MULTIPROC_ENV: str(directory.resolve())}


def enter_metrics_mode(settings: Settings, *, fresh: bool) -> None:
    """Put this process (and the children it starts) in multiprocess metrics mode."""
    os.environ.update(metrics_environment(settings, fresh=fresh))


def _multiprocess() -> bool:
    return bool(os.environ.get(MULTIPROC_ENV))


@cache
def _metrics() -> _Metrics:
    """The process's metric objects, created on first use (after the environment is set)."""
    _name_metric_files_by_host_and_pid()
    return _Metrics()


def _name_metric_files_by_host_and_pid() -> None:
    # Containers sharing the directory have their own pid namespaces: pid 7 of two worker
    # containers must not write the same file.
    if not _multiprocess():
        return
    from prometheus_client import values

    host = socket.gethostname().replace("_", "-")
    values.ValueClass = values.MultiProcessValue(lambda: f"{host}-{os.getpid()}")  # type: ignore[no-untyped-call]


class _Metrics:
    """Every metric Quanta's own processes record (the queue gauges are read at scrape)."""

    def __init__(self) -> None:
        from prometheus_client import Counter, Histogram

        self.ingest_batches = Counter(
            "quanta_ingest_batches",
            "Batches POSTed to /api/v1/ingest, by source and outcome (accepted, duplicate).",
            ["source", "outcome"],
        )
        self.ingest_events = Counter(
            "quanta_ingest_events",
            "Events in accepted (new) batches, by source.",
            ["source"],
        )
        self.batches_failed = Counter(
            "quanta_ingest_batches_failed",
            "Batches the worker gave up on (marked failed with their reason), by source.",
            ["source"],
        )
        self.events_counted = Counter(
            "quanta_events_counted",
            "Events workers folded into the metric store, by source.",
            ["source"],
        )
        self.classes_folded = Counter(
            "quanta_query_classes_folded",
            "New statement shapes a worker counted under 'other queries' because their "
            "instance was at a query-class cap, by instance (once per batch that brought one).",
            ["instance"],
        )
        self.events_folded = Counter(
            "quanta_query_events_folded",
            "Executions of those statement shapes, by instance.",
            ["instance"],
        )
        self.task_duration = Histogram(
            "quanta_task_duration_seconds",
            "Run time of Celery tasks, by task name.",
            ["task"],
            buckets=TASK_DURATION_BUCKETS,
        )
        self.task_failures = Counter(
            "quanta_task_failures",
            "Celery task runs that raised, by task name (retried or not).",
            ["task"],
        )
        self.task_retries = Counter(
            "quanta_task_retries", "Celery task runs that asked for a retry.", ["task"]
        )
        self.notification_attempts = Counter(
            "quanta_notification_attempts",
            "Chat delivery attempts, by channel type and outcome (sent, retry, failed).",
            ["channel_type", "outcome"],
        )
        self.http_requests = Counter(
            "quanta_http_requests",
            "API requests, by method, route template and status code.",
            ["method", "route", "status"],
        )
        self.http_duration = Histogram(
            "quanta_http_request_duration_seconds",
            "API request duration, by method and route template.",
            ["method", "route"],
            buckets=REQUEST_DURATION_BUCKETS,
        )


def record_ingest_batch(*, source: str, events: int, accepted: bool) -> None:
    """Count one POSTed batch: new (its events counted too) or a duplicate."""
    metrics = _metrics()
    metrics.ingest_batches.labels(source, "accepted" if accepted else "duplicate").inc()
    if accepted:
        metrics.ingest_events.labels(source).inc(events)


def record_events_counted(*, source: str, events: int) -> None:
    """Count the events a worker folded into the metric store."""
    if events:
        _metrics().events_counted.labels(source).inc(events)


def record_classes_folded(*, instance: str, classes: int, events: int) -> None:
    """Count statement shapes (and their executions) folded into "other queries"."""
    metrics = _metrics()
    metrics.classes_folded.labels(instance).inc(classes)
    metrics.events_folded.labels(instance).inc(events)


def record_batch_failed(*, source: str) -> None:
    """Count a batch marked failed."""
    _metrics().batches_failed.labels(source).inc()


def record_notification_attempt(*, channel_type: str, outcome: str) -> None:
    """Count one attempt to deliver a chat message."""
    _metrics().notification_attempts.labels(channel_type, outcome).inc()


def record_request(*, method: str, route: str, status: int, seconds: float) -> None:
    """Count one API request and its duration."""
    metrics = _metrics()
    metrics.http_requests.labels(method, route, str(status)).inc()
    metrics.http_duration.labels(method, route).observe(seconds)


def instrument_celery_tasks() -> None:
    """Record every task's duration, failures and retries (Celery signals; call once)."""
    from celery import signals

    started: dict[str, float] = {}

    def prerun(task_id: str, **_kwargs: Any) -> None:
        started[task_id] = time.perf_counter()

    def postrun(task_id: str, task: Any, **_kwargs: Any) -> None:
        begun = started.pop(task_id, None)
        if begun is not None:
            _metrics().task_duration.labels(task.name).observe(time.perf_counter() - begun)

    def failure(sender: Any, **_kwargs: Any) -> None:
        _metrics().task_failures.labels(getattr(sender, "name", "unknown")).inc()

    def retry(sender: Any, **_kwargs: Any) -> None:
        _metrics().task_retries.labels(getattr(sender, "name", "unknown")).inc()

    signals.task_prerun.connect(prerun, weak=False)
    signals.task_postrun.connect(postrun, weak=False)
    signals.task_failure.connect(failure, weak=False)
    signals.task_retry.connect(retry, weak=False)


@dataclass(frozen=True, slots=True)
class QueueState:
    """Batches waiting for a worker: how many, and how long the oldest has waited."""

    depth: int
    oldest_age_seconds: float
    failed: int = 0
    # Minute rows waiting for their roll-up into hours, days and totals (quanta.queries.rollup):
    # pending entries, and how long the oldest due one has waited.
    rollup_pending: int = 0
    rollup_lag_seconds: float = 0.0


class _QueueCollector:
    """Queue depth and lag, read from the store at each scrape."""

    def __init__(self, read: Callable[[], QueueState]) -> None:
        self._read = read

    def describe(self) -> Iterable[Metric]:
        return ()  # unknown until collected: the registry must not call collect() early

    def collect(self) -> Iterator[Metric]:
        from prometheus_client.core import GaugeMetricFamily

        up = GaugeMetricFamily("quanta_store_up", "1 when the metric store answered the scrape.")
        try:
            state = self._read()
        except Exception as exc:  # the scrape must still answer: the store being down is news
            logging.getLogger(__name__).warning("queue metrics unavailable: %s", exc)
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        yield GaugeMetricFamily(
            "quanta_ingest_queue_depth", "Stored batches not processed yet.", value=state.depth
        )
        yield GaugeMetricFamily(
            "quanta_ingest_queue_lag_seconds",
            "Age of the oldest batch not processed yet (0 when none waits).",
            value=state.oldest_age_seconds,
        )
        yield GaugeMetricFamily(
            "quanta_store_rollup_pending",
            "Writes whose minutes are not rolled up into hours, days and totals yet.",
            value=state.rollup_pending,
        )
        yield GaugeMetricFamily(
            "quanta_store_rollup_lag_seconds",
            "How long the oldest due roll-up has waited (0 when none is due); reads stay "
            "exact meanwhile, only slower.",
            value=state.rollup_lag_seconds,
        )
        yield GaugeMetricFamily(
            "quanta_ingest_failed_batches",
            "Stored batches the worker gave up on (GET /ingest/{batch_id} says why).",
            value=state.failed,
        )


class _NativeCollector:
    """Which C extensions the process answering the scrape has loaded (1) or not (0).

    The API's own state: workers and beat run the same installation, and each logs its own
    at start (``native code: ...``).
    """

    def describe(self) -> Iterable[Metric]:
        return ()

    def collect(self) -> Iterator[Metric]:
        from prometheus_client.core import GaugeMetricFamily

        from quanta.analysis import native

        gauge = GaugeMetricFamily(
            "quanta_native_extension_loaded",
            "1 when the C extension is in use, 0 when its pure-Python fallback runs "
            "(not built, or QUANTA_NATIVE=0).",
            labels=["name"],
        )
        for name, loaded in native.loaded().items():
            gauge.add_metric([name], 1 if loaded else 0)
        yield gauge


def build_registry(read_queue: Callable[[], QueueState]) -> CollectorRegistry:
    """A registry with every process's metrics (multiprocess) or this one's, the queue and
    the loaded C extensions."""
    from prometheus_client import REGISTRY, CollectorRegistry
    from prometheus_client import multiprocess as mp

    _metrics()  # the families exist (at zero) before the first event
    registry = CollectorRegistry()
    if _multiprocess():
        mp.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    else:
        registry.register(_Delegate(REGISTRY))
    registry.register(_QueueCollector(read_queue))
    registry.register(_NativeCollector())
    return registry


class _Delegate:
    """Another registry's metrics, collected when this one is (one process, no files)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._registry = registry

    def describe(self) -> Iterable[Metric]:
        return ()

    def collect(self) -> Iterator[Metric]:
        return iter(self._registry.collect())


def render_metrics(registry: CollectorRegistry) -> bytes:
    """The registry in Prometheus' text exposition format."""
    from prometheus_client import generate_latest

    return generate_latest(registry)


# --------------------------------------------------------------------------- logs


def log_format(settings: Settings) -> str:
    """json or console: the setting, else json in production and console elsewhere."""
    if settings.log_format:
        return settings.log_format
    return "json" if settings.env == "production" else "console"


def configure_logging(settings: Settings) -> None:
    """Route standard-library and structlog records through one structlog renderer."""
    import structlog

    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer: Any
    if log_format(settings) == "json":
        shared.append(structlog.processors.format_exc_info)
        renderer = structlog.processors.JSONRenderer()
    else:
        # Not rich's traceback, the default when rich is installed: it prints every frame's
        # local variables (query text, connection settings: sensitive data) and took 5.3 s
        # of CPU for one broker error (106 KB of text) where a plain traceback takes 9 ms.
        renderer = structlog.dev.ConsoleRenderer(
            colors=sys.stderr.isatty(), exception_formatter=structlog.dev.plain_traceback
        )
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=shared,
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(settings.log_level)
    for name in ("uvicorn", "uvicorn.error", "celery"):
        # Their own handlers would print each line a second time, unformatted.
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(max(logging.WARNING, root.level))


def uvicorn_log_config(settings: Settings) -> dict[str, Any] | None:
    """uvicorn's log_config: None (keep ours) for JSON, its own colourful one for console."""
    if log_format(settings) == "json":
        return None
    from uvicorn.config import LOGGING_CONFIG

    return LOGGING_CONFIG


def take_over_celery_logging(settings: Settings) -> None:
    """Have Celery processes log through :func:`configure_logging` instead of its own setup."""
    from celery import signals

    def setup(**_kwargs: Any) -> None:
        configure_logging(settings)

    signals.setup_logging.connect(setup, weak=False)
