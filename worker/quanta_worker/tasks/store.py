"""Store maintenance: the roll-up, retention, time partitions and ended sign-in sessions."""

import logging
import time

from quanta.auth.service import purge_ended_sessions
from quanta.core.config import get_settings
from quanta.core.db import session_scope, utcnow
from quanta.core.tasks import MAINTAIN_STORE_TASK, ROLLUP_STORE_TASK
from quanta.ingest.service import drop_processed_payloads
from quanta.queries import partitions, rollup
from quanta.stages import service as stages
from quanta.statistics import service as statistics
from quanta_worker.celery_app import app
from quanta_worker.tasks import session_factory

log = logging.getLogger(__name__)


@app.task(name=ROLLUP_STORE_TASK, acks_late=True)
def rollup_store() -> int:
    """Roll up the minutes of every due hour, a transaction per round, for at most one beat
    interval (the next run goes on); returns the pending entries rolled up."""
    settings = get_settings()
    deadline = time.monotonic() + settings.rollup_interval_seconds
    rolled = 0
    while time.monotonic() < deadline:
        with session_scope(session_factory()) as session:
            done = rollup.roll_up_due(
                session=session, now=utcnow(), grace_seconds=settings.rollup_grace_seconds
            )
        if not done:
            break
        rolled += done
    return rolled


@app.task(name=MAINTAIN_STORE_TASK, acks_late=True)
def maintain_store() -> dict[str, int]:
    """Apply retention to every resolution, create the partitions ahead of now, delete
    ended sign-in sessions and drop raw batch payloads no longer queued; returns the rows
    deleted per kind."""
    settings = get_settings()
    now = utcnow()
    with session_scope(session_factory()) as session:
        deleted = partitions.apply_retention(session=session, settings=settings, now=now)
    with session_scope(session_factory()) as session:
        deleted["statistics_buckets"] = statistics.apply_retention(
            session=session, settings=settings, now=now
        )
    with session_scope(session_factory()) as session:
        deleted["stage_profiles"] = stages.apply_retention(
            session=session, settings=settings, now=now
        )
    with session_scope(session_factory()) as session:
        partitions.maintain_partitions(session=session, settings=settings, now=now)
    with session_scope(session_factory()) as session:
        deleted["ended_sessions"] = purge_ended_sessions(session=session, now=now)
    with session_scope(session_factory()) as session:
        deleted["batch_payloads"] = drop_processed_payloads(session=session)
    log.info("retention: deleted %s", deleted)
    return deleted
