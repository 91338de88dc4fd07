"""Diagnostics tasks: EXPLAIN and profile runs on monitored servers, and the daily job."""

import logging

from quanta.core.config import get_settings
from quanta.core.db import session_scope, utcnow
from quanta.core.tasks import AUTO_DIAGNOSE_TASK, RUN_EXPLAIN_TASK, RUN_PROFILE_TASK
from quanta.diagnostics import service
from quanta_worker.celery_app import app
from quanta_worker.tasks import session_factory

log = logging.getLogger(__name__)


# No automatic retry: what fails on the monitored server is stored on the run with the
# server's message, and a person (or tomorrow's beat) asks again.
@app.task(name=RUN_EXPLAIN_TASK, acks_late=True)
def run_explain(run_id: int) -> str | None:
    """Carry out queued EXPLAIN run `run_id`; returns its status."""
    with session_scope(session_factory()) as session:
        run = service.execute_explain(session=session, settings=get_settings(), run_id=run_id)
        status = run.status if run is not None else None
    log.info("explain run %s: %s", run_id, status)
    return status


@app.task(name=RUN_PROFILE_TASK, acks_late=True)
def run_profile(run_id: int) -> str | None:
    """Carry out queued profile run `run_id`; returns its status."""
    with session_scope(session_factory()) as session:
        run = service.execute_profile(session=session, settings=get_settings(), run_id=run_id)
        status = run.status if run is not None else None
    log.info("profile run %s: %s", run_id, status)
    return status


@app.task(name=AUTO_DIAGNOSE_TASK, acks_late=True)
def auto_diagnose() -> dict[str, int]:
    """Queue EXPLAIN/profiles of each instance's top queries that have none this recent."""
    with session_scope(session_factory()) as session:
        queued = service.auto_diagnose(session=session, settings=get_settings(), now=utcnow())
    counts = {"explain": len(queued.explain_run_ids), "profile": len(queued.profile_run_ids)}
    log.info("automatic diagnostics queued %s", counts)
    return counts
