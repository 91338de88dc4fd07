"""Announcing the regressions after annotations to chat."""

from quanta.annotations import service
from quanta.core.config import get_settings
from quanta.core.db import session_scope, utcnow
from quanta.core.tasks import ANNOUNCE_IMPACTS_TASK
from quanta_worker.celery_app import app
from quanta_worker.tasks import session_factory


@app.task(name=ANNOUNCE_IMPACTS_TASK, acks_late=True)
def announce_impacts() -> list[int]:
    """Publish the regressions of annotations whose window after has just ended."""
    with session_scope(session_factory()) as session:
        return service.announce_impacts(session=session, settings=get_settings(), now=utcnow())
