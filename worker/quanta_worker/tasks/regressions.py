"""Finding regressions, announcing them and their resolution."""

from quanta.core.config import get_settings
from quanta.core.db import session_scope, utcnow
from quanta.core.tasks import CHECK_REGRESSIONS_TASK
from quanta.regressions import service
from quanta_worker.celery_app import app
from quanta_worker.tasks import session_factory


@app.task(name=CHECK_REGRESSIONS_TASK, acks_late=True)
def check_regressions() -> dict[str, list[int]]:
    """Beat's check (see quanta.regressions.service.check_regressions); not retried: the
    next check, a minute later, looks again."""
    with session_scope(session_factory()) as session:
        result = service.check_regressions(session=session, settings=get_settings(), now=utcnow())
    return {"found": result.found, "announced": result.announced, "resolved": result.resolved}
