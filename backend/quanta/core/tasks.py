"""The Celery application configuration shared by the API (to enqueue) and the worker."""

import logging
from typing import Any

from celery import Celery
from kombu.entity import Exchange, Queue
from sqlalchemy.orm import Session

from quanta.core.config import BROKER_FILE, Settings
from quanta.core.db import run_after_commit
from quanta.core.files import ensure_data_dir, private_sqlite_store

log = logging.getLogger(__name__)

INGEST_QUEUE = "ingest"
ANALYSIS_QUEUE = "analysis"
NOTIFY_QUEUE = "notify"

QUEUES = (INGEST_QUEUE, ANALYSIS_QUEUE, NOTIFY_QUEUE)

PROCESS_BATCH_TASK = "quanta.ingest.process_batch"
REQUEUE_STALE_BATCHES_TASK = "quanta.ingest.requeue_stale_batches"
MAINTAIN_STORE_TASK = "quanta.queries.maintain_store"
ROLLUP_STORE_TASK = "quanta.queries.rollup_store"
ADVISE_QUERY_TASK = "quanta.advice.advise_query"
REFRESH_ADVICE_TASK = "quanta.advice.refresh_advice"
ADVISE_HOT_TASK = "quanta.advice.advise_hot"
REFRESH_TABLES_TASK = "quanta.advice.refresh_tables"
PLAN_INDEXES_TASK = "quanta.advice.plan_indexes"
RUN_EXPLAIN_TASK = "quanta.diagnostics.run_explain"
RUN_PROFILE_TASK = "quanta.diagnostics.run_profile"
AUTO_DIAGNOSE_TASK = "quanta.diagnostics.auto_diagnose"
DELIVER_NOTIFICATION_TASK = "quanta.notify.deliver"
NOTIFY_TICK_TASK = "quanta.notify.tick"
ANNOUNCE_IMPACTS_TASK = "quanta.annotations.announce_impacts"
ANNOUNCE_INDEX_REVIEWS_TASK = "quanta.statistics.announce_index_reviews"
CHECK_REGRESSIONS_TASK = "quanta.regressions.check"

TASK_ROUTES = {
    DELIVER_NOTIFICATION_TASK: {"queue": NOTIFY_QUEUE},
    NOTIFY_TICK_TASK: {"queue": NOTIFY_QUEUE},
    PROCESS_BATCH_TASK: {"queue": INGEST_QUEUE},
    REQUEUE_STALE_BATCHES_TASK: {"queue": INGEST_QUEUE},
    MAINTAIN_STORE_TASK: {"queue": ANALYSIS_QUEUE},
    # The roll-up is the ingest's second half: it waits its turn with the batches.
    ROLLUP_STORE_TASK: {"queue": INGEST_QUEUE},
    ADVISE_QUERY_TASK: {"queue": ANALYSIS_QUEUE},
    REFRESH_ADVICE_TASK: {"queue": ANALYSIS_QUEUE},
    ADVISE_HOT_TASK: {"queue": ANALYSIS_QUEUE},
    REFRESH_TABLES_TASK: {"queue": ANALYSIS_QUEUE},
    PLAN_INDEXES_TASK: {"queue": ANALYSIS_QUEUE},
    RUN_EXPLAIN_TASK: {"queue": ANALYSIS_QUEUE},
    RUN_PROFILE_TASK: {"queue": ANALYSIS_QUEUE},
    AUTO_DIAGNOSE_TASK: {"queue": ANALYSIS_QUEUE},
    ANNOUNCE_IMPACTS_TASK: {"queue": ANALYSIS_QUEUE},
    ANNOUNCE_INDEX_REVIEWS_TASK: {"queue": ANALYSIS_QUEUE},
    CHECK_REGRESSIONS_TASK: {"queue": ANALYSIS_QUEUE},
}

_clients: dict[str, Celery] = {}


def create_celery(settings: Settings) -> Celery:
    """A Celery app with explicit queues and routes; the worker adds its tasks and schedule."""
    if not settings.redis_url:
        ensure_data_dir(settings)
        private_sqlite_store(settings.data_dir / BROKER_FILE)
    app = Celery("quanta", broker=settings.broker_url, set_as_current=False)
    app.conf.update(
        # Each queue gets its own exchange and key: with Celery's defaults every queue is bound
        # to the default exchange with the same key, and a message would reach all of them.
        task_queues=[Queue(q, Exchange(q), routing_key=q) for q in QUEUES],
        task_default_queue=INGEST_QUEUE,
        task_create_missing_queues=False,
        task_routes=TASK_ROUTES,
        task_serializer="json",
        accept_content=["json"],
        task_ignore_result=True,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        broker_connection_retry_on_startup=True,
        timezone="UTC",
    )
    return app


def celery_client(settings: Settings) -> Celery:
    """The producer-side app used to enqueue tasks by name, one per broker URL."""
    client = _clients.get(settings.broker_url)
    if client is None:
        client = _clients[settings.broker_url] = create_celery(settings)
    return client


def enqueue(
    settings: Settings,
    task: str,
    *arg_lists: list[Any],
    countdown: float | None = None,
    otherwise: str,
) -> bool:
    """Send ``task`` once per argument list; False when the broker is down.

    A failure is logged with ``otherwise`` (what picks the work up instead) and not raised:
    the caller's rows stay and a periodic job or the next request queues them again. The
    first failure stops the rest, so a broker that is down is waited on once, not per task.
    """
    if not arg_lists:
        return True
    try:
        client = celery_client(settings)
        for args in arg_lists:
            client.send_task(task, args=args, countdown=countdown)
    except Exception:
        log.exception("could not enqueue %s %s; %s", task, list(arg_lists), otherwise)
        return False
    return True


def enqueue_after_commit(
    session: Session,
    settings: Settings,
    task: str,
    *arg_lists: list[Any],
    countdown: float | None = None,
    otherwise: str,
) -> None:
    """``enqueue`` once this session's transaction has committed, never before.

    Convention: a task is queued only after the commit that created its input, or a worker
    could look for a row that is not visible yet. Nothing is registered for no argument lists.
    """
    if not arg_lists:
        return
    lists = [list(args) for args in arg_lists]  # the caller's lists may change before the commit

    def send() -> None:
        enqueue(settings, task, *lists, countdown=countdown, otherwise=otherwise)

    run_after_commit(session, send)
