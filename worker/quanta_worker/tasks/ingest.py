"""Ingest tasks."""

import logging

from sqlalchemy.exc import OperationalError

from quanta.core.config import get_settings
from quanta.core.db import session_scope
from quanta.core.memory import cycle_collection_paused
from quanta.core.tasks import PROCESS_BATCH_TASK, REQUEUE_STALE_BATCHES_TASK
from quanta.ingest import service
from quanta.ingest.models import BatchStatus
from quanta_worker.celery_app import app
from quanta_worker.tasks import fingerprinter, session_factory

log = logging.getLogger(__name__)


@app.task(
    name=PROCESS_BATCH_TASK,
    acks_late=True,
    reject_on_worker_lost=True,
    # A locked or briefly unreachable store is worth retrying; the batch stays queued meanwhile.
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_backoff_max=60,
    max_retries=10,
)
def process_batch(batch_pk: int) -> int:
    """Fold stored batch `batch_pk` into the metric store; returns the events counted.

    A batch that fails because of what it holds is marked failed with its reason at once;
    any other failure is retried (here, or by beat's re-queue) until the batch has had
    ``ingest_max_attempts``, then it is marked failed too.
    """
    settings = get_settings()
    with session_scope(session_factory()) as session:
        if not service.begin_attempt(session=session, settings=settings, batch_pk=batch_pk):
            return 0
    try:
        with cycle_collection_paused(), session_scope(session_factory()) as session:
            counted = service.process_batch(
                session=session,
                settings=settings,
                batch_pk=batch_pk,
                fingerprinter=fingerprinter(),
            )
    except Exception as exc:
        if _record_failure(batch_pk, exc) == BatchStatus.FAILED:
            return 0  # logged in one line with its reason; nothing to retry
        raise
    log.info("batch %s: %s events counted", batch_pk, counted)
    return counted


def _record_failure(batch_pk: int, error: Exception) -> BatchStatus | None:
    try:
        with session_scope(session_factory()) as session:
            return service.record_failure(
                session=session, settings=get_settings(), batch_pk=batch_pk, error=error
            )
    except Exception:
        # The store is down too: the attempt is counted, the batch stays queued for a retry.
        log.warning("could not record the failure of batch %s", batch_pk, exc_info=True)
        return None


@app.task(name=REQUEUE_STALE_BATCHES_TASK)
def requeue_stale_batches() -> int:
    """Re-enqueue batches whose processing task was lost; returns how many."""
    with session_scope(session_factory()) as session:
        stale = service.requeue_stale_batches(session=session, settings=get_settings())
    if stale:
        log.warning("re-enqueued %d stale batches", len(stale))
    return len(stale)
