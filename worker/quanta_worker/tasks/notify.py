"""Chat notification tasks: one delivery attempt per run, and the periodic tick."""

import logging

from sqlalchemy.exc import OperationalError

from quanta.core.config import get_settings
from quanta.core.db import session_scope, utcnow
from quanta.core.tasks import DELIVER_NOTIFICATION_TASK, NOTIFY_TICK_TASK
from quanta.notify import digests, dispatch, publish
from quanta_worker.celery_app import app
from quanta_worker.tasks import session_factory

log = logging.getLogger(__name__)


@app.task(
    name=DELIVER_NOTIFICATION_TASK,
    acks_late=True,
    reject_on_worker_lost=True,
    # Only a locked or unreachable store is retried here; HTTP retries are the service's
    # policy (recorded attempts, Retry-After), scheduled below by re-enqueueing.
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_backoff_max=60,
    max_retries=10,
)
def deliver(delivery_id: int) -> str | None:
    """Attempt delivery `delivery_id` once; re-enqueue it for its next attempt if one is due."""
    now = utcnow()
    with session_scope(session_factory()) as session:
        next_at = dispatch.attempt_delivery(session, get_settings(), delivery_id, now)
    if next_at is None:
        return None
    # After the commit, so the next run sees this attempt recorded.
    countdown = max((next_at - utcnow()).total_seconds(), 0.0)
    deliver.apply_async(args=[delivery_id], countdown=countdown)
    log.info("delivery %s: next attempt in %.1f s", delivery_id, countdown)
    return next_at.isoformat()


@app.task(name=NOTIFY_TICK_TASK)
def notify_tick() -> int:
    """Flush digests whose hour has freed up and re-enqueue lost deliveries; returns how many."""
    settings = get_settings()
    with session_scope(session_factory()) as session:
        ready = digests.notify_tick(session=session, settings=settings, now=utcnow())
    if ready:
        publish.enqueue_deliveries(settings=settings, delivery_ids=ready)
    return len(ready)
