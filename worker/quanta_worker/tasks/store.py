"""Metric store maintenance: retention and time partitions."""

import logging

from quanta.core.config import get_settings
from quanta.core.db import session_scope, utcnow
from quanta.core.tasks import MAINTAIN_STORE_TASK
from quanta.queries import service
from quanta_worker.celery_app import app
from quanta_worker.tasks import session_factory

log = logging.getLogger(__name__)


@app.task(name=MAINTAIN_STORE_TASK, acks_late=True)
def maintain_store() -> dict[str, int]:
    """Apply retention to every resolution, then create the partitions ahead of now."""
    settings = get_settings()
    now = utcnow()
    with session_scope(session_factory()) as session:
        deleted = service.apply_retention(session=session, settings=settings, now=now)
    with session_scope(session_factory()) as session:
        service.maintain_partitions(session=session, settings=settings, now=now)
    log.info("retention: deleted %s", deleted)
    return deleted
