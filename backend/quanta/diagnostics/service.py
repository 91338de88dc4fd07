"""Use cases of diagnostics: EXPLAIN and profile a query's real examples on its server.

This module takes the requests (and beat's); ``execution`` carries runs out in the worker,
``examples`` picks the examples, ``forms`` maps runs to the API; their public names are
importable from here, where routers and tasks import them.

A request stores a queued run and enqueues it after commit; the worker runs it (through
quanta.monitored, which sends nothing but SELECT, EXPLAIN and SHOW) and stores the outcome
on the run: the plan (literals masked by the example policy) and its findings, or the ranked
profile, or the one-line reason it failed (Quanta's sentence for the server's error code,
never the server's message, which can quote data) or was refused (Quanta's reason: also
when a view or column it reaches calls something outside the allowlist). An EXPLAIN stopped
by its time limit, or any statement Quanta stopped waiting for (it is then killed on the
server), is a failed run, never "ok" with a note (an ANALYZE on the execution target stopped
by its limit is a note: the server stopped it, the plan stands). Beat does the same once a
day for each instance's top queries.

EXPLAIN runs on the monitored server and never executes the example; ANALYZE and profiles
run only on the instance's execution target, verified read-only first; an account with more
than the least privileges is refused unless an admin allowed it (see safety.py). Every run
that ends is in the audit log: who asked (or beat), what, where, and the outcome.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeVar

from sqlalchemy.orm import Session

from quanta.audit.service import Actor
from quanta.core import errors
from quanta.core.config import Settings
from quanta.core.db import utcnow
from quanta.core.tasks import RUN_EXPLAIN_TASK, RUN_PROFILE_TASK, enqueue_after_commit
from quanta.diagnostics import repository, safety
from quanta.diagnostics.examples import ExampleRefused, select_examples
from quanta.diagnostics.execution import (
    INTERNAL_ERROR,
    PlanComparison,
    audit,
    compare_plan,
    execute_explain,
    execute_profile,
    explain_query,
    finish,
    intended,
)
from quanta.diagnostics.forms import explain_out, profile_out
from quanta.diagnostics.models import ExplainRun, ProfileRun, RunStatus
from quanta.diagnostics.schemas import ExplainRunOut, ProfileRunOut
from quanta.instances import service as instances
from quanta.instances.models import Instance
from quanta.queries import service as queries
from quanta.queries.window import TimeWindow

__all__ = [
    "INTERNAL_ERROR",
    "AutoDiagnosis",
    "DiagnosticsError",
    "NotAllowed",
    "NotFound",
    "PlanComparison",
    "Refused",
    "auto_diagnose",
    "compare_plan",
    "execute_explain",
    "execute_profile",
    "explain_now",
    "explain_out",
    "explain_query",
    "latest_explain",
    "latest_profile",
    "profile_out",
    "queries_with_runs_since",
    "request_explain",
    "request_profile",
]

_R = TypeVar("_R", ExplainRun, ProfileRun)

SELECT_TYPE = "select"
# Beat ranks each instance's queries by their load over this much time before now.
AUTO_LOAD_WINDOW = timedelta(days=1)


class DiagnosticsError(errors.InvalidRequest):
    """A request that cannot be honoured; the message says why and what to do."""


class NotFound(errors.NotFound, DiagnosticsError):
    """No such query or instance, or nothing collected yet."""


class NotAllowed(errors.Conflict, DiagnosticsError):
    """The instance is not set up for this (profiling off: no execution target)."""


class Refused(DiagnosticsError):
    """Quanta will not send the query's examples (truncated, several statements, DML...)."""


@dataclass(frozen=True, slots=True)
class AutoDiagnosis:
    """The runs beat queued: ids of EXPLAIN and profile runs."""

    explain_run_ids: list[int]
    profile_run_ids: list[int]


# --------------------------------------------------------------------------- requests


def request_explain(
    *, session: Session, settings: Settings, query_id: str, instance_name: str, actor: Actor
) -> ExplainRunOut:
    """Queue an EXPLAIN of the query's latest fit example on the instance.

    Raises NotFound (query or instance), instances' NoConnection / InstanceUnreachable (no
    usable DSN) and Refused (no fit example; the refused run is stored, and audited, so
    that GET shows why).
    """
    instance = instances.find_instance_by_name(session=session, name=instance_name)
    instances.require_connection(settings, instance)  # no usable DSN: refused now, not queued
    run = _request(session, settings, ExplainRun, query_id, instance, actor, executable=False)
    return explain_out(run, instance.name)


def request_profile(
    *, session: Session, settings: Settings, query_id: str, instance_name: str, actor: Actor
) -> ProfileRunOut:
    """Queue a profile of the query's SELECT examples on the instance's execution target.

    Raises NotFound, NoConnection / InstanceUnreachable (no usable DSN), NotAllowed (no
    execution target) and Refused (no example is an executable SELECT; stored on a refused
    run).
    """
    instance = instances.find_instance_by_name(session=session, name=instance_name)
    instances.require_connection(settings, instance)  # no usable DSN: refused now, not queued
    if instance.target_dsn_encrypted is None:
        raise NotAllowed(safety.no_target_reason(instance, "A profile"))
    run = _request(session, settings, ProfileRun, query_id, instance, actor, executable=True)
    return profile_out(run, instance.name)


def latest_explain(*, session: Session, query_id: str, instance_name: str) -> ExplainRunOut:
    """The newest finished EXPLAIN of the query on the instance (else the queued one)."""
    instance = instances.find_instance_by_name(session=session, name=instance_name)
    run, pending = _latest(session, ExplainRun, query_id, instance, "EXPLAIN")
    out = explain_out(run, instance.name, pending=pending)
    # Masked again as it is read: runs stored before masking, or a policy tightened since.
    example = run.examples[0]["text"] if run.examples else None
    return out.model_copy(
        update={
            "tabular": safety.masked(instance, out.tabular, example),
            "document": safety.masked(instance, out.document, example),
            "analyze": safety.masked(instance, out.analyze, example),
        }
    )


def latest_profile(*, session: Session, query_id: str, instance_name: str) -> ProfileRunOut:
    """The newest finished profile of the query on the instance (else the queued one)."""
    instance = instances.find_instance_by_name(session=session, name=instance_name)
    run, pending = _latest(session, ProfileRun, query_id, instance, "profile")
    return profile_out(run, instance.name, pending=pending)


def auto_diagnose(*, session: Session, settings: Settings, now: datetime) -> AutoDiagnosis:
    """Queue EXPLAIN (and, where an execution target is configured, a profile of SELECTs)
    for each instance's top queries by load of the last day that have no run that recent.
    Nothing is queued to execute on an instance without an execution target."""
    window = TimeWindow(start=now - AUTO_LOAD_WINDOW, end=now)
    since = now - timedelta(hours=settings.diagnostics_auto_fresh_hours)
    explained: list[int] = []
    profiled: list[int] = []
    if settings.diagnostics_auto_top_queries == 0:
        return AutoDiagnosis(explained, profiled)
    for instance in instances.connected_instances(session=session):
        top = queries.instance_top_queries(
            session=session,
            settings=settings,
            instance=instance.name,
            window=window,
            limit=settings.diagnostics_auto_top_queries,
        )
        ids = [row.query_id for row in top]
        done = repository.queries_with_runs_since(session, ExplainRun, instance.id, ids, since)
        for query_id in ids:
            if query_id not in done:
                explained.append(_queue(session, settings, ExplainRun, query_id, instance).id)
        if instance.target_dsn_encrypted is None:
            continue
        selects = [row.query_id for row in top if row.statement_type == SELECT_TYPE]
        done = repository.queries_with_runs_since(session, ProfileRun, instance.id, selects, since)
        for query_id in selects:
            if query_id not in done:
                profiled.append(_queue(session, settings, ProfileRun, query_id, instance).id)
    return AutoDiagnosis(explained, profiled)


def explain_now(
    *, session: Session, settings: Settings, instance: Instance, query_ids: Sequence[str]
) -> list[int]:
    """Queue beat's EXPLAIN (audited as "beat") of each of these queries on the instance;
    the run ids. Used when a query just became heavy, so it need not wait for tomorrow."""
    return [_queue(session, settings, ExplainRun, query_id, instance).id for query_id in query_ids]


# --------------------------------------------------------------------------- internals


def _request(
    session: Session,
    settings: Settings,
    model: type[_R],
    query_id: str,
    instance: Instance,
    actor: Actor,
    *,
    executable: bool,
) -> _R:
    since = utcnow() - timedelta(seconds=settings.diagnostics_dedupe_seconds)
    queued = repository.queued_since(session, model, query_id, instance.id, since)
    if queued is not None:
        return queued
    try:
        select_examples(session, settings, query_id, instance, executable=executable, limit=1)
    except ExampleRefused as exc:
        refused = _new_run(model, query_id, instance, actor)
        session.add(refused)
        finish(refused, RunStatus.REFUSED, str(exc))
        session.flush()
        audit(session, refused, instance, intended(settings, instance, refused))
        raise Refused(str(exc)) from exc
    return _queue(session, settings, model, query_id, instance, actor)


def _new_run(model: type[_R], query_id: str, instance: Instance, actor: Actor | None) -> _R:
    return model(
        query_id=query_id,
        instance_id=instance.id,
        requested_at=utcnow(),
        requested_by=actor.name if actor else None,
        requested_by_token_id=actor.token_id if actor else None,
    )


def _queue(
    session: Session,
    settings: Settings,
    model: type[_R],
    query_id: str,
    instance: Instance,
    actor: Actor | None = None,
) -> _R:
    run = _new_run(model, query_id, instance, actor)
    session.add(run)
    session.flush()
    task = RUN_EXPLAIN_TASK if model is ExplainRun else RUN_PROFILE_TASK
    enqueue_after_commit(
        session,
        settings,
        task,
        [run.id],
        otherwise="the run stays queued; a new request after the dedupe window queues another",
    )
    return run


def _latest(
    session: Session, model: type[_R], query_id: str, instance: Instance, what: str
) -> tuple[_R, bool]:
    finished = repository.latest_run(session, model, query_id, instance.id, finished=True)
    queued = repository.latest_run(session, model, query_id, instance.id, finished=False)
    if finished is None and queued is None:
        raise NotFound(
            f"No {what} collected yet for this query on {instance.name}: POST to request one."
        )
    if finished is None:
        assert queued is not None
        return queued, False
    return finished, queued is not None and queued.id > finished.id


def queries_with_runs_since(
    *,
    session: Session,
    model: repository.RunModel,
    instance_id: int,
    query_ids: Sequence[str],
    since: datetime,
) -> set[str]:
    """Those of ``query_ids`` with a run (EXPLAIN or profile) on the instance requested after
    ``since``."""
    return repository.queries_with_runs_since(session, model, instance_id, query_ids, since)
