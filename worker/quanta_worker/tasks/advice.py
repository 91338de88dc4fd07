"""Index advice tasks: advise one query, the frequent pass over queries that just became heavy,
the daily refresh of snapshots and advice, and an instance's workload index plan."""

import logging

from sqlalchemy.exc import IntegrityError, OperationalError

from quanta.advice import service, work
from quanta.audit.service import Actor
from quanta.core.config import get_settings
from quanta.core.db import session_scope, utcnow
from quanta.core.tasks import (
    ADVISE_HOT_TASK,
    ADVISE_QUERY_TASK,
    PLAN_INDEXES_TASK,
    REFRESH_ADVICE_TASK,
    REFRESH_TABLES_TASK,
)
from quanta.indexplan import service as indexplan_service
from quanta.monitored import MonitoredError
from quanta_worker.celery_app import app
from quanta_worker.tasks import session_factory

log = logging.getLogger(__name__)

# What makes one unit of work fail without failing the others: the query, instance or
# server is not in a state to be advised; the message says why.
EXPECTED_FAILURES = (
    service.AdviceUnavailable,
    service.InstanceNotFound,
    service.NoConnection,
    service.QueryNotFound,
    service.InstanceUnreachable,
    MonitoredError,
)


@app.task(
    name=ADVISE_QUERY_TASK,
    acks_late=True,
    reject_on_worker_lost=True,
    # A locked store is worth retrying, and so is losing a race with a concurrent run for
    # the same query (IntegrityError: the retry sees its rows); a server that refuses us is
    # not (logged below).
    autoretry_for=(OperationalError, IntegrityError),
    retry_backoff=True,
    retry_backoff_max=60,
    max_retries=5,
)
def advise_query(
    query_id: str,
    instance_id: int,
    requested_by: str | None = None,
    requested_by_token_id: int | None = None,
) -> int:
    """Advise a query on an instance; returns the number of suggestions stored (-1: failed).

    ``requested_by`` names who asked (the audit entry's actor); None is beat's daily run.
    A suggestion this run found applied queues a new plan of the instance.
    """
    actor = Actor(requested_by, requested_by_token_id) if requested_by else None
    settings = get_settings()
    started = utcnow()
    try:
        with session_scope(session_factory()) as session:
            run = service.advise_query(
                session=session,
                settings=settings,
                query_id=query_id,
                instance_id=instance_id,
                actor=actor,
            )
            stored = len(run.suggestions)
            applied = service.newly_applied(session=session, instance_id=instance_id, since=started)
    except EXPECTED_FAILURES as exc:
        log.warning("advice for query %s on instance %s: %s", query_id, instance_id, exc)
        return -1
    log.info("query %s on instance %s: %d suggestions", query_id, instance_id, stored)
    if applied:  # after the commit: the plan reads the applied suggestions
        indexplan_service.replan(settings=settings, instance_id=instance_id)
    return stored


@app.task(name=REFRESH_ADVICE_TASK, acks_late=True)
def refresh_advice() -> dict[str, int]:
    """Per reachable instance: refresh the snapshots of tables with suggestions (re-evaluating
    on change), advise its top queries by load, then compute its workload index plan. Each
    unit commits on its own, so one unreachable server or bad query does not hold back the
    rest."""
    settings = get_settings()
    with session_scope(session_factory()) as session:
        units = work.daily_work(session=session, settings=settings)
    counts = {"instances": len(units), "advised": 0, "failed": 0, "planned": 0}
    for unit in units:
        try:
            with session_scope(session_factory()) as session:
                service.refresh_suggested_tables(
                    session=session, settings=settings, instance_id=unit.instance_id
                )
        except EXPECTED_FAILURES as exc:
            log.warning("snapshots of instance %s: %s", unit.instance, exc)
            counts["failed"] += 1
            continue
        for query_id in unit.top_queries:
            try:
                with session_scope(session_factory()) as session:
                    service.advise_query(
                        session=session,
                        settings=settings,
                        query_id=query_id,
                        instance_id=unit.instance_id,
                    )
                counts["advised"] += 1
            except EXPECTED_FAILURES as exc:
                log.warning("advice for query %s on %s: %s", query_id, unit.instance, exc)
                counts["failed"] += 1
        # The workload plan after the per-query advice: the snapshots are fresh by now. A
        # planner failure on one instance is logged and the other instances still run.
        try:
            planned = plan_indexes(unit.instance_id)
        except Exception:
            log.exception("index plan of instance %s", unit.instance)
            planned = -1
        counts["planned" if planned >= 0 else "failed"] += 1
    return counts


@app.task(name=ADVISE_HOT_TASK, acks_late=True)
def advise_hot() -> int:
    """Queue EXPLAIN and advice of the queries that crossed a channel's load share (see
    quanta.advice.work.hot_work); returns how many. Each is advised by its own task, so
    one slow server does not hold back the others."""
    settings = get_settings()
    with session_scope(session_factory()) as session:
        units = work.hot_work(session=session, settings=settings)
    queued = 0
    for unit in units:
        for query_id in unit.top_queries:
            advise_query.delay(query_id, unit.instance_id)
            queued += 1
    if queued:
        log.info("queued advice of %d queries that became heavy", queued)
    return queued


@app.task(
    name=REFRESH_TABLES_TASK,
    acks_late=True,
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    max_retries=5,
)
def refresh_tables(instance_id: int, tables: list[str]) -> list[str]:
    """Read these tables' snapshots again now (a DDL statement on them was just seen, or an
    EXPLAIN used an index their snapshot lacks) and re-evaluate the suggestions on those that
    changed: an applied index makes its suggestion ``applied``, and queues a new plan of the
    instance. Returns the changed tables."""
    settings = get_settings()
    started = utcnow()
    try:
        with session_scope(session_factory()) as session:
            refresh = service.refresh_changed_tables(
                session=session, settings=settings, instance_id=instance_id, tables=tables
            )
            applied = service.newly_applied(session=session, instance_id=instance_id, since=started)
    except EXPECTED_FAILURES as exc:
        log.warning("refreshing %s on instance %s: %s", tables, instance_id, exc)
        return []
    log.info("tables %s on instance %s: %s changed", tables, instance_id, refresh.changed)
    if applied:  # after the commit: the plan reads the applied suggestions
        indexplan_service.replan(settings=settings, instance_id=instance_id)
    return list(refresh.changed)


@app.task(
    name=PLAN_INDEXES_TASK,
    acks_late=True,
    reject_on_worker_lost=True,
    # Two runs for one instance race on the (instance, table) key: the retry sees the rows.
    autoretry_for=(OperationalError, IntegrityError),
    retry_backoff=True,
    retry_backoff_max=60,
    max_retries=5,
)
def plan_indexes(
    instance_id: int,
    requested_by: str | None = None,
    requested_by_token_id: int | None = None,
    window_hours: int | None = None,
) -> int:
    """Compute an instance's workload index plan (quanta.indexplan.service.plan_instance);
    returns the number of tables planned (-1: failed). ``requested_by`` names who asked."""
    actor = Actor(requested_by, requested_by_token_id) if requested_by else None
    try:
        with session_scope(session_factory()) as session:
            run = indexplan_service.plan_instance(
                session=session,
                settings=get_settings(),
                instance_id=instance_id,
                actor=actor,
                window_hours=window_hours,
            )
            planned = len(run.plans)
    except EXPECTED_FAILURES as exc:
        log.warning("index plan of instance %s: %s", instance_id, exc)
        return -1
    log.info("instance %s: %d tables planned, %d changed", instance_id, planned, len(run.changed))
    return planned
