"""Use cases of diagnostics: EXPLAIN and profile a query's real examples on its server.

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

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from itertools import groupby
from typing import Any, TypeVar

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from quanta.analysis.explain import explain_findings
from quanta.analysis.profile import Profile, combine_profiles
from quanta.analysis.redact import redact
from quanta.analysis.resolution import Resolution, ceil_to
from quanta.analysis.sqlkind import StatementKind, classify_statement
from quanta.annotations import service as annotations
from quanta.audit.service import Actor
from quanta.core import errors
from quanta.core.config import Settings
from quanta.core.db import utcnow
from quanta.core.tasks import RUN_EXPLAIN_TASK, RUN_PROFILE_TASK, enqueue_after_commit
from quanta.diagnostics import repository, safety
from quanta.diagnostics.models import ExplainRun, ProfileRun, RunStatus
from quanta.diagnostics.repository import Run
from quanta.diagnostics.schemas import (
    ExampleUsed,
    ExplainRunOut,
    FindingOut,
    ProfileRowOut,
    ProfileRunOut,
    ServerUsed,
)
from quanta.instances import service as instances
from quanta.instances.models import Instance
from quanta.monitored import (
    ExplainResult,
    MonitoredError,
    ServerError,
    StatementRefused,
    explain_on,
    profile_on,
)
from quanta.monitored.options import ConnectionOptions
from quanta.monitored.target import TargetNotReadOnly
from quanta.queries import service as queries
from quanta.queries.window import BucketFilter, TimeWindow
from quanta.tables import service as tables_service

log = logging.getLogger(__name__)

_R = TypeVar("_R", ExplainRun, ProfileRun)

# Stored examples read to pick from (slowest and sampled of each bucket, newest first).
EXAMPLE_CANDIDATES = 500
SELECT_TYPE = "select"
# Beat ranks each instance's queries by their load over this much time before now.
AUTO_LOAD_WINDOW = timedelta(days=1)
INTERNAL_ERROR = "Internal error while running it; the worker log has the details."
# What can go wrong reaching a monitored server: each carries a one-line message.
_UNREACHABLE = (MonitoredError, instances.NoConnection, instances.InstanceUnreachable)
# Quanta's own refusals to reach a server: stored as refused, with the reason.
_REFUSALS = (
    safety.BroadPrivileges,
    safety.NoExecutionTarget,
    TargetNotReadOnly,
    StatementRefused,
)


class DiagnosticsError(errors.InvalidRequest):
    """A request that cannot be honoured; the message says why and what to do."""


class NotFound(errors.NotFound, DiagnosticsError):
    """No such query or instance, or nothing collected yet."""


class NotAllowed(errors.Conflict, DiagnosticsError):
    """The instance is not set up for this (no DSN, profiling off)."""


class Refused(DiagnosticsError):
    """Quanta will not send the query's examples (truncated, several statements, DML...)."""


class _ExampleRefused(Exception):
    """No stored example is fit; the message says why (the latest example's problem)."""


@dataclass(frozen=True, slots=True)
class _Example:
    kind: str
    text: str
    schema_name: str
    ts: datetime
    query_time: float
    truncated: bool
    instance: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "text": self.text,
            "schema_name": self.schema_name,
            "ts": self.ts.isoformat(),
            "query_time": self.query_time,
        }


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

    Raises NotFound (query or instance), NotAllowed (no DSN) and Refused (no fit example;
    the refused run is stored, and audited, so that GET shows why).
    """
    instance = instances.find_instance_by_name(session=session, name=instance_name)
    _require_dsn(instance)
    run = _request(session, settings, ExplainRun, query_id, instance, actor, executable=False)
    return explain_out(run, instance.name)


def request_profile(
    *, session: Session, settings: Settings, query_id: str, instance_name: str, actor: Actor
) -> ProfileRunOut:
    """Queue a profile of the query's SELECT examples on the instance's execution target.

    Raises NotFound, NotAllowed (no DSN, no execution target) and Refused (no example is
    an executable SELECT; stored on a refused run).
    """
    instance = instances.find_instance_by_name(session=session, name=instance_name)
    _require_dsn(instance)
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


# --------------------------------------------------------------------------- execution


def explain_query(
    *, session: Session, settings: Settings, query_id: str, instance_id: int
) -> ExplainRun:
    """EXPLAIN the query's latest fit example on the instance now, and store the run."""
    run = ExplainRun(query_id=query_id, instance_id=instance_id, requested_at=utcnow())
    session.add(run)
    session.flush()
    return _guarded(session, settings, run, _perform_explain)


def execute_explain(*, session: Session, settings: Settings, run_id: int) -> ExplainRun | None:
    """Carry out a queued EXPLAIN run (the worker's task); a finished or missing run is left."""
    run = repository.get_run(session, ExplainRun, run_id)
    if run is None or run.status != RunStatus.QUEUED:
        return None  # a redelivered task, or the instance was purged meanwhile
    return _guarded(session, settings, run, _perform_explain)


def execute_profile(*, session: Session, settings: Settings, run_id: int) -> ProfileRun | None:
    """Carry out a queued profile run (the worker's task); a finished or missing run is left."""
    run = repository.get_run(session, ProfileRun, run_id)
    if run is None or run.status != RunStatus.QUEUED:
        return None
    return _guarded(session, settings, run, _perform_profile)


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


@dataclass(frozen=True, slots=True)
class PlanComparison:
    """An EXPLAIN run's plan against the query's latest plan taken before a moment: each a
    one-line summary ("orders ref on idx_phone"), None where there is none (the run is not
    finished, failed, or no earlier plan exists). ``finished``: the run is no longer queued."""

    finished: bool
    before: str | None
    after: str | None

    @property
    def changed(self) -> bool | None:
        """Whether the plan changed (None: not known)."""
        if self.before is None or self.after is None:
            return None
        return self.before != self.after


def compare_plan(*, session: Session, run_id: int, before: datetime) -> PlanComparison:
    """The plan of EXPLAIN run ``run_id`` against the same query's latest successful plan on
    the same instance taken before ``before`` (what changed since a regression began)."""
    run = session.get(ExplainRun, run_id)
    if run is None:
        return PlanComparison(finished=True, before=None, after=None)
    earlier = repository.latest_ok_before(session, run.query_id, run.instance_id, before)
    ok = run.status == RunStatus.OK.value
    return PlanComparison(
        finished=run.status != RunStatus.QUEUED.value,
        before=_plan_summary(earlier.tabular) if earlier is not None else None,
        after=_plan_summary(run.tabular) if ok else None,
    )


def _plan_summary(tabular: list[dict[str, Any]] | None) -> str:
    """Each plan row's table, access type and key: "orders ref on idx_phone"."""
    parts = []
    for table, access, key in _plan_shape(tabular):
        part = f"{table} {access}"
        if key not in ("None", ""):
            part += f" on {key}"
        parts.append(part)
    return ", ".join(parts) or "no rows"


# --------------------------------------------------------------------------- API forms


def explain_out(run: ExplainRun, instance_name: str, *, pending: bool = False) -> ExplainRunOut:
    """The API form of an EXPLAIN run."""
    return ExplainRunOut(
        **_common(run, instance_name, pending),
        verb=run.verb,
        findings=[FindingOut(**finding) for finding in run.findings or []],
        tabular=run.tabular,
        document=run.document,
        analyze=run.analyze,
        notes=list(run.notes or []),
    )


def profile_out(run: ProfileRun, instance_name: str, *, pending: bool = False) -> ProfileRunOut:
    """The API form of a profile run."""
    return ProfileRunOut(
        **_common(run, instance_name, pending),
        runs=run.runs,
        response_us=run.response_us,
        lost_us=run.lost_us,
        rows=[ProfileRowOut(**row) for row in run.rows or []],
        run_response_us=list(run.run_response_us or []),
    )


def _common(run: Run, instance_name: str, pending: bool) -> dict[str, Any]:
    return {
        "id": run.id,
        "query_id": run.query_id,
        "instance": instance_name,
        "status": run.status,
        "requested_at": run.requested_at,
        "taken_at": run.taken_at,
        "error": run.error,
        "pending": pending,
        # Redacted as read too: examples stored before redaction knew a form hold it still.
        "examples": [
            ExampleUsed(**{**example, "text": redact(example["text"])})
            for example in run.examples or []
        ],
        "server_version": run.server_version,
        "ran_on": [ServerUsed(**server) for server in run.ran_on or []],
    }


# --------------------------------------------------------------------------- internals


def _require_dsn(instance: Instance) -> None:
    if instance.dsn_encrypted is None:
        raise NotAllowed(
            f"Instance '{instance.name}' has no DSN, so Quanta cannot reach its server: an "
            f"admin registers a read-only account with PATCH /api/v1/instances/{instance.id} "
            '{"dsn": "mysql://quanta_ro:PASSWORD@host:3306/"}.'
        )


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
        _select_examples(session, settings, query_id, instance, executable=executable, limit=1)
    except _ExampleRefused as exc:
        refused = _new_run(model, query_id, instance, actor)
        session.add(refused)
        _finish(refused, RunStatus.REFUSED, str(exc))
        session.flush()
        _audit(session, refused, instance, _intended(settings, instance, refused))
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


def _perform_explain(
    session: Session, settings: Settings, run: ExplainRun, trail: safety.Trail
) -> ExplainRun:
    instance = instances.get_instance(session=session, instance_id=run.instance_id)
    try:
        options = instances.require_connection(settings, instance)
        (example,) = _select_examples(
            session, settings, run.query_id, instance, executable=False, limit=1
        )
        run.examples = [example.to_dict()]
        rows_sent, rows_examined = _rows_per_execution(session, settings, run.query_id, example)
        # One session: the account is checked on it, then the example explained on it.
        # Never executed on the monitored server: EXPLAIN only.
        on_example = _for_example(options, example)
        with safety.monitored_session(settings, instance, on_example, trail) as conn:
            result = explain_on(
                conn,
                example.text,
                truncated=example.truncated,
                rows_sent=rows_sent,
                rows_examined=rows_examined,
            )
        since = _previous_plan_differs(session, run, instance, result)
        if since is not None:
            # The plan changed since the previous EXPLAIN: only executions after it judge it.
            rows_sent, rows_examined = _rows_per_execution(
                session, settings, run.query_id, example, since=since
            )
            findings = explain_findings(
                rows=result.tabular,
                document=result.analyze or result.document,
                rows_sent=rows_sent,
                rows_examined=rows_examined,
            )
            result = replace(result, findings=findings)
        measured, analyze_note = _analyze_on_target(
            settings, instance, example, trail, rows_sent, rows_examined
        )
    except (_ExampleRefused, *_REFUSALS) as exc:
        return _finish(run, RunStatus.REFUSED, str(exc))
    except _UNREACHABLE as exc:
        return _finish(run, RunStatus.FAILED, str(exc))
    except queries.QueryNotFound as exc:
        return _finish(run, RunStatus.FAILED, str(exc))
    run.verb = result.verb
    run.server_version = result.server_version
    run.tabular = safety.masked(instance, result.tabular, example.text)
    run.document = safety.masked(instance, result.document, example.text)
    analyze = measured.analyze if measured is not None else None
    run.analyze = safety.masked(instance, analyze, example.text)
    findings = measured.findings if measured is not None and analyze else result.findings
    run.findings = [finding.to_dict() for finding in findings]
    notes = [note for note in result.notes if not note.startswith(_ANALYZE_NOTE)]
    run.notes = [*notes, *([analyze_note] if analyze_note else [])]
    _notice_new_indexes(session, settings, instance, run.query_id, example, result.tabular)
    return _finish(run, RunStatus.OK, None)


def _notice_new_indexes(
    session: Session,
    settings: Settings,
    instance: Instance,
    query_id: str,
    example: "_Example",
    plan: Any,
) -> None:
    """A plan using an index the table snapshots lack (a suggestion just applied): have the
    snapshots read again now, so the suggestion becomes applied within minutes."""
    if not isinstance(plan, list):
        return
    try:
        query_class = queries.find_query(session=session, query_id=query_id)
    except queries.QueryNotFound:  # purged while the server was explaining it
        return
    tables = tables_service.qualify_tables(query_class.tables or [], example.schema_name or None)
    tables_service.refresh_if_plan_is_newer(
        session=session, settings=settings, instance=instance, tables=tables, plan=plan
    )


_ANALYZE_NOTE = "ANALYZE skipped"


def _analyze_on_target(
    settings: Settings,
    instance: Instance,
    example: "_Example",
    trail: safety.Trail,
    rows_sent: float | None,
    rows_examined: float | None,
) -> tuple[ExplainResult | None, str | None]:
    """ANALYZE of the example on the execution target (verified read-only just before),
    or why not: no target, or one that is not usable now (the EXPLAIN stands either way;
    ANALYZE stopped by its time limit is a note). A statement Quanta gave up waiting for
    (ServerError.abandoned) fails the run: it may have run on past the answer."""
    if instance.target_dsn_encrypted is None:
        return None, f"{_ANALYZE_NOTE}: no execution target (EXPLAIN never executes)"
    try:
        # One session on the target, verified read-only as it opened: EXPLAIN and ANALYZE.
        with safety.target_session(
            settings, instance, trail, "ANALYZE", database=example.schema_name or None
        ) as target:
            measured = explain_on(
                target,
                example.text,
                execute_on=target,
                truncated=example.truncated,
                rows_sent=rows_sent,
                rows_examined=rows_examined,
            )
    except ServerError as exc:
        if exc.abandoned:  # Quanta gave up on a statement there: the run failed
            raise
        return None, f"{_ANALYZE_NOTE}: {exc}"
    except (*_REFUSALS, *_UNREACHABLE) as exc:
        return None, f"{_ANALYZE_NOTE}: {exc}"
    skipped = next((n for n in measured.notes if n.startswith(_ANALYZE_NOTE)), None)
    return measured, skipped


def _perform_profile(
    session: Session, settings: Settings, run: ProfileRun, trail: safety.Trail
) -> ProfileRun:
    instance = instances.get_instance(session=session, instance_id=run.instance_id)
    try:
        examples = _select_examples(
            session,
            settings,
            run.query_id,
            instance,
            executable=True,
            limit=settings.diagnostics_profile_examples,
        )
        run.examples = [example.to_dict() for example in examples]
        profiles: list[Profile] = []
        version = ""
        # One verified session on the target for the examples of one default database (the
        # session's database is fixed at connect; the examples of a query share one as a rule).
        for database, same in groupby(examples, key=lambda e: e.schema_name or None):
            with safety.target_session(
                settings, instance, trail, "A profile", database=database
            ) as target:
                version = version or target.state.server_version
                profiles += [
                    profile_on(
                        target,
                        example.text,
                        runs=settings.monitored_profile_runs,
                        truncated=example.truncated,
                    )
                    for example in same
                ]
    except (_ExampleRefused, *_REFUSALS) as exc:
        return _finish(run, RunStatus.REFUSED, str(exc))
    except _UNREACHABLE as exc:
        return _finish(run, RunStatus.FAILED, str(exc))
    except queries.QueryNotFound as exc:
        return _finish(run, RunStatus.FAILED, str(exc))
    combined = combine_profiles(profiles)
    run.runs = len(combined.runs)
    run.response_us = combined.response_us
    run.lost_us = combined.lost_us
    run.rows = [row.to_dict() for row in combined.rows]
    run.run_response_us = [r.response_us for r in combined.runs]
    run.server_version = version or None
    return _finish(run, RunStatus.OK, None)


def _guarded(
    session: Session,
    settings: Settings,
    run: _R,
    perform: Callable[[Session, Settings, _R, safety.Trail], _R],
) -> _R:
    """Run ``perform`` and audit the run; a bug (not a server's answer) fails the run instead
    of leaving it queued forever. Store errors propagate: the task's transaction is rolled
    back (and its audit entry with it: the run is still queued, and runs again)."""
    trail = safety.Trail()
    try:
        done = perform(session, settings, run, trail)
    except SQLAlchemyError:
        raise
    except Exception:
        log.exception("%s %s failed unexpectedly", type(run).__name__, run.id)
        done = _finish(run, RunStatus.FAILED, INTERNAL_ERROR)
    instance = instances.get_instance(session=session, instance_id=run.instance_id)
    done.ran_on = list(trail.where)
    if not trail.where:  # refused before reaching any server: say which one it was for
        trail = _intended(settings, instance, run)
    _audit(session, done, instance, trail)
    return done


def _intended(settings: Settings, instance: Instance, run: Run) -> safety.Trail:
    """The server a run was meant for, for the audit entry of one that reached none."""
    trail = safety.Trail()
    if isinstance(run, ExplainRun):
        trail.reached(safety.MONITORED, safety.address_of(settings, instance))
    else:
        trail.reached(safety.TARGET, safety.target_address_of(settings, instance))
    return trail


def _audit(session: Session, run: Run, instance: Instance, trail: safety.Trail) -> None:
    actor = Actor(run.requested_by, run.requested_by_token_id) if run.requested_by else None
    trail.record(
        session,
        actor=actor,
        what="explain" if isinstance(run, ExplainRun) else "profile",
        instance=instance,
        query_id=run.query_id,
        run_id=run.id,
        outcome=run.status,
        reason=run.error,
    )


def _finish(run: _R, status: RunStatus, error: str | None) -> _R:
    run.status = status.value
    run.error = error
    run.taken_at = utcnow()
    return run


def _previous_plan_differs(
    session: Session, run: ExplainRun, instance: Instance, result: ExplainResult
) -> datetime | None:
    """When the previous EXPLAIN of the query on the instance was taken, if its plan
    (tables, access types, keys) differs from this one's; else None."""
    previous = repository.latest_run(session, ExplainRun, run.query_id, instance.id, finished=True)
    if previous is None or previous.status != RunStatus.OK.value or previous.taken_at is None:
        return None
    if _plan_shape(previous.tabular) == _plan_shape(result.tabular):
        return None
    return previous.taken_at


def _plan_shape(tabular: list[dict[str, Any]] | None) -> list[tuple[str, str, str]]:
    """What tells plans apart: each row's table, access type and key (not the estimates)."""
    return [(str(r.get("table")), str(r.get("type")), str(r.get("key"))) for r in tabular or []]


def _rows_per_execution(
    session: Session,
    settings: Settings,
    query_id: str,
    example: "_Example",
    *,
    since: datetime | None = None,
) -> tuple[float | None, float | None]:
    """Rows sent and examined per execution from the query's metrics on the instance.

    Only executions after the latest plan change count: a schema statement on its tables,
    an annotation of the instance, or ``since`` (a previous EXPLAIN with another plan).
    Only for SELECTs: what a DML statement sends says nothing about what it reads.
    """
    if classify_statement(example.text).kind is not StatementKind.SELECT:
        return None, None
    window = _example_window(settings)
    flt = BucketFilter(instances=(example.instance,))
    detail = queries.query_detail(
        session=session, settings=settings, window=window, query_id=query_id, flt=flt
    )
    marked = _last_plan_change(session, example.instance, detail.tables, window)
    changed = max((t for t in (marked, since) if t is not None), default=None)
    if changed is not None:
        # Executions under an older plan (before an index was added, say) say nothing
        # about this one: only the whole minutes after the change count.
        after = TimeWindow(start=ceil_to(changed, Resolution.MINUTE), end=window.end)
        if after.start >= after.end:
            return None, None
        detail = queries.query_detail(
            session=session, settings=settings, window=after, query_id=query_id, flt=flt
        )
    per_call = {metric.name: metric.avg for metric in detail.metrics}
    return per_call.get("rows_sent"), per_call.get("rows_examined")


def _last_plan_change(
    session: Session, instance: str, tables: list[str], window: TimeWindow
) -> datetime | None:
    """The latest moment in ``window`` after which the query's plan may differ: a schema
    statement (ALTER, CREATE INDEX, ANALYZE...) on one of its tables seen in the metrics,
    or an annotation of the instance (a deploy or a change someone marked); None if none.
    """
    ddl = queries.last_schema_change(
        session=session, instance=instance, tables=tables, since=window.start
    )
    marked = [
        a.end_time or a.time
        for a in annotations.list_annotations(
            session=session, window=window, instance=instance, tags=[]
        )
        if (a.end_time or a.time) <= window.end
    ]
    return max([t for t in (ddl, *marked) if t is not None], default=None)


def _example_window(settings: Settings) -> TimeWindow:
    now = utcnow()
    return TimeWindow(start=now - timedelta(days=settings.diagnostics_example_days), end=now)


def _for_example(options: ConnectionOptions, example: _Example) -> ConnectionOptions:
    # The example ran in its own default database; unqualified names resolve there.
    return replace(options, database=example.schema_name) if example.schema_name else options


def _select_examples(
    session: Session,
    settings: Settings,
    query_id: str,
    instance: Instance,
    *,
    executable: bool,
    limit: int,
) -> list[_Example]:
    """The newest distinct stored examples fit to explain (or execute), at most ``limit``."""
    stored = queries.query_examples(
        session=session,
        settings=settings,
        window=_example_window(settings),
        query_id=query_id,
        instances=(instance.name,),
        limit=EXAMPLE_CANDIDATES,
    ).examples
    newest_first = sorted(stored, key=lambda e: e.ts, reverse=True)
    fit: list[_Example] = []
    first_problem: str | None = None
    verdict = _execution_verdict if executable else _explain_verdict
    for candidate in newest_first:
        problem = (
            _MASKED.format(name=instance.name, id=instance.id)
            if candidate.literals != "full"
            else verdict(candidate.text, candidate.truncated)
        )
        if problem is not None:
            first_problem = first_problem or problem
            continue
        if all(candidate.text != chosen.text for chosen in fit):
            fit.append(
                _Example(
                    kind=candidate.kind,
                    text=candidate.text,
                    schema_name=candidate.schema_name,
                    ts=candidate.ts,
                    query_time=candidate.query_time,
                    truncated=candidate.truncated,
                    instance=candidate.instance,
                )
            )
        if len(fit) == limit:
            break
    if fit:
        return fit
    if first_problem is not None:
        raise _refusal(first_problem, executable)
    raise _refusal(
        f"no example of this query from {instance.name} is stored for the last "
        f"{settings.diagnostics_example_days} days (the instance's example_policy is "
        f"'{instance.example_policy}')",
        executable,
    )


_MASKED = (
    "the examples of instance '{name}' are stored with their literals masked, and a plan "
    "needs a real statement: an admin sets PATCH /api/v1/instances/{id} "
    '{{"example_policy": "full"}}'
)


def _explain_verdict(text: str, truncated: bool) -> str | None:
    return classify_statement(text, truncated=truncated).explain_refusal


def _execution_verdict(text: str, truncated: bool) -> str | None:
    return classify_statement(text, truncated=truncated).execute_refusal


def _refusal(reason: str, executable: bool) -> _ExampleRefused:
    prefix = "not profiled" if executable else "not explained"
    return _ExampleRefused(f"{prefix}: {reason}")


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
