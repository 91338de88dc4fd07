"""Worker execution: carry out an EXPLAIN or profile run on the servers (through
quanta.monitored and the checks of safety.py), store its outcome and audit it; and compare
a run's plan with an earlier one."""

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from itertools import groupby
from typing import Any, TypeVar

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from quanta.analysis.explain import explain_findings
from quanta.analysis.profile import Profile, combine_profiles
from quanta.analysis.resolution import Resolution, ceil_to
from quanta.analysis.sqlkind import StatementKind, classify_statement
from quanta.annotations import service as annotations
from quanta.audit.service import Actor
from quanta.core.config import Settings
from quanta.core.db import utcnow
from quanta.diagnostics import repository, safety
from quanta.diagnostics.examples import (
    Example,
    ExampleRefused,
    example_window,
    for_example,
    select_examples,
)
from quanta.diagnostics.models import ExplainRun, ProfileRun, RunStatus
from quanta.diagnostics.repository import Run
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
from quanta.monitored.target import TargetNotReadOnly
from quanta.queries import service as queries
from quanta.queries.window import BucketFilter, TimeWindow
from quanta.tables import service as tables_service

log = logging.getLogger(__name__)

_R = TypeVar("_R", ExplainRun, ProfileRun)

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


def _perform_explain(
    session: Session, settings: Settings, run: ExplainRun, trail: safety.Trail
) -> ExplainRun:
    instance = instances.find_instance(session=session, instance_id=run.instance_id)
    try:
        options = instances.require_connection(settings, instance)
        (example,) = select_examples(
            session, settings, run.query_id, instance, executable=False, limit=1
        )
        run.examples = [example.to_dict()]
        rows_sent, rows_examined = _rows_per_execution(session, settings, run.query_id, example)
        # One session: the account is checked on it, then the example explained on it.
        # Never executed on the monitored server: EXPLAIN only.
        on_example = for_example(options, example)
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
    except (ExampleRefused, *_REFUSALS) as exc:
        return finish(run, RunStatus.REFUSED, str(exc))
    except _UNREACHABLE as exc:
        return finish(run, RunStatus.FAILED, str(exc))
    except queries.QueryNotFound as exc:
        return finish(run, RunStatus.FAILED, str(exc))
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
    return finish(run, RunStatus.OK, None)


def _notice_new_indexes(
    session: Session,
    settings: Settings,
    instance: Instance,
    query_id: str,
    example: "Example",
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
    example: "Example",
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
    instance = instances.find_instance(session=session, instance_id=run.instance_id)
    try:
        examples = select_examples(
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
    except (ExampleRefused, *_REFUSALS) as exc:
        return finish(run, RunStatus.REFUSED, str(exc))
    except _UNREACHABLE as exc:
        return finish(run, RunStatus.FAILED, str(exc))
    except queries.QueryNotFound as exc:
        return finish(run, RunStatus.FAILED, str(exc))
    combined = combine_profiles(profiles)
    run.runs = len(combined.runs)
    run.response_us = combined.response_us
    run.lost_us = combined.lost_us
    run.rows = [row.to_dict() for row in combined.rows]
    run.run_response_us = [r.response_us for r in combined.runs]
    run.server_version = version or None
    return finish(run, RunStatus.OK, None)


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
        done = finish(run, RunStatus.FAILED, INTERNAL_ERROR)
    instance = instances.find_instance(session=session, instance_id=run.instance_id)
    done.ran_on = list(trail.where)
    if not trail.where:  # refused before reaching any server: say which one it was for
        trail = intended(settings, instance, run)
    audit(session, done, instance, trail)
    return done


def intended(settings: Settings, instance: Instance, run: Run) -> safety.Trail:
    """The server a run was meant for, for the audit entry of one that reached none."""
    trail = safety.Trail()
    if isinstance(run, ExplainRun):
        trail.reached(safety.MONITORED, safety.address_of(settings, instance))
    else:
        trail.reached(safety.TARGET, safety.target_address_of(settings, instance))
    return trail


def audit(session: Session, run: Run, instance: Instance, trail: safety.Trail) -> None:
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


def finish(run: _R, status: RunStatus, error: str | None) -> _R:
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
    example: "Example",
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
    window = example_window(settings)
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
