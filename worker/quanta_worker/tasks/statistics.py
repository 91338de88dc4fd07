"""Announcing index review findings to chat."""

from quanta.core.config import get_settings
from quanta.core.db import session_scope, utcnow
from quanta.core.tasks import ANNOUNCE_INDEX_REVIEWS_TASK
from quanta.statistics import review
from quanta_worker.celery_app import app
from quanta_worker.tasks import session_factory


@app.task(name=ANNOUNCE_INDEX_REVIEWS_TASK, acks_late=True)
def announce_index_reviews() -> list[int]:
    """Post each instance's index review findings not announced before (weekly)."""
    with session_scope(session_factory()) as session:
        return review.announce_index_reviews(session=session, settings=get_settings(), now=utcnow())
