"""Use cases of index advice: advise a query, re-evaluate on schema changes, track status.

A run for (query, instance) takes the newest usable example of the query (full literals,
not truncated; the fingerprint when there is none, and the reason says so), refreshes the
snapshots of the tables it reads (quanta.tables, read-only on the monitored server), runs
the pure advisor and reconciles its advice with the stored suggestions, one per piece of
advice (see :mod:`quanta.advice.reconcile`).

The advisor weighs the rows examined per call the store measured for the query over the last
day (each suggestion's note says which figures are measured and which estimated). After each
run the instance's suggestions on the tables are merged where one's index holds another's
(:func:`quanta.advice.reconcile.merge_redundant`).

New or changed ``add``/``replace`` advice is checked on the instance's sandbox when one is
configured (:mod:`quanta.advice.sandbox`): both plans are stored, and a suggestion whose
plan does not improve is kept out of the list and out of chat; the others are announced
(:mod:`quanta.advice.announce`). Which queries are advised without being asked is
:mod:`quanta.advice.work`'s. The workload index plan (quanta.indexplan) tells each
suggestion what it did with it (:func:`record_plan_verdicts`).
"""

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from quanta.advice import repository
from quanta.advice.announce import announce
from quanta.advice.models import Suggestion, SuggestionStatus
from quanta.advice.reconcile import (
    INDEXED_ACTIONS,
    item_of,
    merge_redundant,
    needs_validation,
    one_per_key,
    rejected,
    store,
    tables_of,
)
from quanta.advice.sandbox import validate_suggestions
from quanta.advice.schemas import (
    AdviceRequested,
    MergedIntoOut,
    PlanVerdictOut,
    SuggestionColumnOut,
    SuggestionList,
    SuggestionOut,
)
from quanta.advice.work import DAILY_WINDOW
from quanta.analysis.advisor import AdviceError, SchemaError, advise, parse_schema
from quanta.analysis.statement import describe_statement
from quanta.audit import service as audit
from quanta.audit.service import Actor
from quanta.core import errors
from quanta.core.config import Settings
from quanta.core.db import utcnow
from quanta.core.tasks import ADVISE_QUERY_TASK, celery_client
from quanta.instances.service import (
    InstanceNotFound,
    InstanceUnreachable,
    NoConnection,
    find_instance,
    find_instance_by_name,
    require_connection,
)
from quanta.monitored import MonitoredError
from quanta.queries import service as queries_service
from quanta.queries.service import QueryNotFound
from quanta.queries.window import TimeWindow
from quanta.tables import service as tables_service
from quanta.tables.service import SnapshotRefresh

__all__ = [
    "AdviceRun",
    "AdviceUnavailable",
    "AdvisedStatement",
    "InstanceNotFound",
    "InstanceUnreachable",
    "InvalidStatusChange",
    "NoConnection",
    "PlannedSuggestion",
    "QueryNotFound",
    "QueueUnavailable",
    "SuggestionNotFound",
    "advise_query",
    "advised_statement",
    "instance_suggestions",
    "list_suggestions",
    "newly_applied",
    "record_plan_verdicts",
    "reevaluate_tables",
    "refresh_changed_tables",
    "refresh_suggested_tables",
    "request_advice",
    "set_status",
]

log = logging.getLogger(__name__)

FINGERPRINT_NOTE = (
    "Advised from the fingerprint: no untruncated example with its literals is stored for "
    "this query on this instance, so value selectivity is unknown and the sandbox cannot "
    "check the plan. "
)
FULL_LITERALS = "full"
# The audit log's action for a status change, named as the admin routes' are (route template).
STATUS_CHANGE_ACTION = "PATCH /api/v1/suggestions/{suggestion_id}"


class SuggestionNotFound(errors.NotFound):
    """No suggestion has this id."""


class AdviceUnavailable(Exception):
    """The query cannot be advised on this instance; the message says why and what to do."""


class InvalidStatusChange(errors.Conflict, ValueError):
    """A status change a person may not make (``applied`` is Quanta's to set)."""


class QueueUnavailable(errors.Unavailable):
    """The task could not be handed to the broker."""


@dataclass(frozen=True, slots=True)
class AdviceRun:
    """What one advice run did: the suggestions now stored, and which it created or changed."""

    query_id: str
    instance_id: int
    from_example: bool
    suggestions: tuple[Suggestion, ...]
    created: tuple[int, ...] = ()
    changed: tuple[int, ...] = ()
    snapshot: SnapshotRefresh = field(default_factory=SnapshotRefresh)


# --------------------------------------------------------------------------- reads


def list_suggestions(
    *,
    session: Session,
    query_id: str,
    instance: str | None = None,
    include_rejected: bool = False,
) -> SuggestionList:
    """A query's suggestions (on one instance, by name, or all); the ones a sandbox showed
    not to improve the plan only with ``include_rejected``."""
    queries_service.find_query(session=session, query_id=query_id)
    instance_id = find_instance_by_name(session=session, name=instance).id if instance else None
    names = {}
    rows = []
    for row in repository.suggestions(session, query_id, instance_id):
        if include_rejected or not rejected(row):
            rows.append(row)
    for row in rows:
        if row.instance_id not in names:
            names[row.instance_id] = find_instance(
                session=session, instance_id=row.instance_id
            ).name
    targets = repository.by_ids(session, [r.merged_into_id for r in rows if r.merged_into_id])
    return SuggestionList(
        query_id=query_id,
        suggestions=[
            _out(row, names[row.instance_id], targets.get(row.merged_into_id or 0)) for row in rows
        ],
    )


def set_status(*, session: Session, suggestion_id: int, status: str, actor: Actor) -> SuggestionOut:
    """Dismiss a suggestion (``dismissed``) or take the dismissal back (``new``); a change
    is audited with who made it, the old status and the new one."""
    row = repository.get(session, suggestion_id)
    if row is None:
        raise SuggestionNotFound(f"No suggestion with id {suggestion_id}.")
    if status not in (SuggestionStatus.NEW, SuggestionStatus.DISMISSED):
        raise InvalidStatusChange(f"Status {status!r} cannot be set; use 'new' or 'dismissed'.")
    if row.status == SuggestionStatus.APPLIED:
        raise InvalidStatusChange(
            f"Suggestion {suggestion_id} is applied: an index with its columns exists on "
            f"{row.table_name}. It changes by itself if that index is dropped."
        )
    instance = find_instance(session=session, instance_id=row.instance_id)
    if row.status != status:
        audit.record(
            session=session,
            actor=actor.name,
            actor_token_id=actor.token_id,
            action=STATUS_CHANGE_ACTION,
            target={
                "suggestion_id": str(row.id),
                "query_id": row.query_id,
                "instance": instance.name,
                "table": row.table_name,
            },
            detail={"status": {"old": row.status, "new": status}},
        )
        row.status = status
        row.updated_at = utcnow()
        session.flush()
    instance = find_instance(session=session, instance_id=row.instance_id)
    target = repository.get(session, row.merged_into_id) if row.merged_into_id else None
    return _out(row, instance.name, target)


# --------------------------------------------------------------------------- requests


def request_advice(
    *, session: Session, settings: Settings, query_id: str, instance: str, actor: Actor
) -> AdviceRequested:
    """Queue a fresh advice run for a query on an instance (checked to be reachable)."""
    queries_service.find_query(session=session, query_id=query_id)
    found = find_instance_by_name(session=session, name=instance)
    require_connection(settings, found)  # a missing or unusable DSN is said now, not later
    # Nothing is written here, so there is no commit to wait for before enqueueing.
    try:
        celery_client(settings).send_task(
            ADVISE_QUERY_TASK,
            args=[query_id, found.id],
            kwargs={"requested_by": actor.name, "requested_by_token_id": actor.token_id},
        )
    except Exception as exc:
        log.exception("could not enqueue advice for query %s", query_id)
        raise QueueUnavailable(
            "The task queue is unreachable, so the advice was not queued; try again shortly."
        ) from exc
    return AdviceRequested(query_id=query_id, instance=found.name)


# --------------------------------------------------------------------------- runs


def advise_query(
    *,
    session: Session,
    settings: Settings,
    query_id: str,
    instance_id: int,
    now: datetime | None = None,
    actor: Actor | None = None,
) -> AdviceRun:
    """Advise a query on an instance and store the suggestions (see the module docstring);
    when the refresh found a table's structure changed, the other queries advised on that
    table are re-evaluated too.

    Raises:
        QueryNotFound, InstanceNotFound, NoConnection, AdviceUnavailable,
        quanta.monitored.MonitoredError (the server could not be read).
    """
    now = now or utcnow()
    run = _advise(
        session=session,
        settings=settings,
        query_id=query_id,
        instance_id=instance_id,
        now=now,
        actor=actor,
    )
    if run.snapshot.changed:
        reevaluate_tables(
            session=session,
            settings=settings,
            instance_id=instance_id,
            tables=run.snapshot.changed,
            skip=(query_id,),
            now=now,
        )
    return run


def reevaluate_tables(
    *,
    session: Session,
    settings: Settings,
    instance_id: int,
    tables: Iterable[str],
    skip: Sequence[str] = (),
    now: datetime | None = None,
) -> list[str]:
    """Advise again every query with suggestions on these tables; the query_ids re-run.

    A query that fails (its server went away, its example no longer parses) is logged and
    left as it was; the others still run.
    """
    now = now or utcnow()
    done = []
    for query_id in repository.queries_on_tables(session, instance_id, sorted(set(tables))):
        if query_id in skip:
            continue
        try:
            with session.begin_nested():
                _advise(
                    session=session,
                    settings=settings,
                    query_id=query_id,
                    instance_id=instance_id,
                    now=now,
                )
        except (AdviceUnavailable, MonitoredError, NoConnection) as exc:
            log.warning("re-evaluating query %s on instance %s: %s", query_id, instance_id, exc)
            continue
        done.append(query_id)
    return done


def refresh_suggested_tables(
    *, session: Session, settings: Settings, instance_id: int, now: datetime | None = None
) -> SnapshotRefresh:
    """Refresh the stale snapshots of the tables with suggestions on an instance, and
    re-evaluate the queries on those whose structure changed."""
    now = now or utcnow()
    refresh = tables_service.refresh_tables(
        session=session,
        settings=settings,
        instance_id=instance_id,
        tables=repository.suggested_tables(session, instance_id),
        now=now,
    )
    reevaluate_tables(
        session=session, settings=settings, instance_id=instance_id, tables=refresh.changed, now=now
    )
    return refresh


def refresh_changed_tables(
    *,
    session: Session,
    settings: Settings,
    instance_id: int,
    tables: Sequence[str],
    now: datetime | None = None,
) -> SnapshotRefresh:
    """Read these tables' snapshots again whatever their age, and re-evaluate the queries
    with suggestions on those whose structure changed (applied, or new again)."""
    now = now or utcnow()
    refresh = tables_service.refresh_tables(
        session=session,
        settings=settings,
        instance_id=instance_id,
        tables=tables,
        force=True,
        now=now,
    )
    reevaluate_tables(
        session=session, settings=settings, instance_id=instance_id, tables=refresh.changed, now=now
    )
    return refresh


@dataclass(frozen=True, slots=True)
class AdvisedStatement:
    """The text a query is advised from on an instance: its newest usable example (full
    literals, not truncated), else its fingerprint; and the database of unqualified names."""

    sql: str
    default_db: str | None
    from_example: bool


def newly_applied(*, session: Session, instance_id: int, since: datetime) -> list[int]:
    """The ids of an instance's suggestions that became applied at or after ``since`` (a plan
    is computed again when one did)."""
    return repository.applied_since(session, instance_id, since)


@dataclass(frozen=True, slots=True)
class PlannedSuggestion:
    """A suggestion as the workload index plan weighs it against its own adds."""

    id: int
    query_id: str
    table: str
    action: str
    columns: tuple[str, ...]
    ddl: str
    status: str

    @property
    def asks_for_an_index(self) -> bool:
        """An add/replace still open (new or dismissed): what a plan has a verdict on."""
        return self.action in INDEXED_ACTIONS and self.status in (
            SuggestionStatus.NEW,
            SuggestionStatus.DISMISSED,
        )


def instance_suggestions(*, session: Session, instance_id: int) -> list[PlannedSuggestion]:
    """Every suggestion of an instance, as the index plan weighs them, by id."""
    return [
        PlannedSuggestion(
            row.id,
            row.query_id,
            row.table_name,
            row.action,
            tuple(str(c["name"]).lower() for c in row.columns),
            row.ddl,
            row.status,
        )
        for row in repository.of_instance(session, instance_id)
    ]


def record_plan_verdicts(
    *, session: Session, instance_id: int, verdicts: Mapping[int, dict[str, Any]]
) -> None:
    """Store what the instance's latest index plan did with each suggestion (by id); the
    instance's other suggestions lose an older plan's verdict."""
    for row in repository.of_instance(session, instance_id):
        verdict = verdicts.get(row.id)
        if row.plan != verdict:
            row.plan = verdict
    session.flush()


def advised_statement(
    *, session: Session, query_id: str, instance_id: int, fingerprint: str
) -> AdvisedStatement:
    """What a query is advised from on an instance (see AdvisedStatement)."""
    examples = queries_service.latest_examples(
        session=session, query_id=query_id, instance_id=instance_id
    )
    usable = next((e for e in examples if e.literals == FULL_LITERALS and not e.truncated), None)
    # A masked or truncated example still tells the database of unqualified table names.
    default_db = (usable or examples[0]).schema_name or None if examples else None
    return AdvisedStatement(
        sql=usable.text if usable else fingerprint,
        default_db=default_db,
        from_example=usable is not None,
    )


def _advise(
    *,
    session: Session,
    settings: Settings,
    query_id: str,
    instance_id: int,
    now: datetime,
    actor: Actor | None = None,
) -> AdviceRun:
    query = queries_service.find_query(session=session, query_id=query_id)
    instance = find_instance(session=session, instance_id=instance_id)
    statement = advised_statement(
        session=session, query_id=query_id, instance_id=instance_id, fingerprint=query.fingerprint
    )
    sql, default_db = statement.sql, statement.default_db
    usable = statement.from_example
    info = describe_statement(query.fingerprint, *([sql] if usable else []))
    tables = tables_service.qualify_tables(info.tables, default_db)
    if not tables:
        raise AdviceUnavailable(
            f"Query {query_id} names no table that can be resolved to database.table "
            "(no table, or unqualified names and no example telling the database)."
        )
    refresh = tables_service.refresh_tables(
        session=session, settings=settings, instance_id=instance_id, tables=tables, now=now
    )
    document = tables_service.schema_document(
        session=session, instance_id=instance_id, tables=tables
    )
    if document["server"] is None:
        raise AdviceUnavailable(
            f"None of the tables of query {query_id} ({', '.join(tables)}) exist on instance "
            f"'{instance.name}'."
        )
    window = TimeWindow(now - DAILY_WINDOW, now)
    measured = queries_service.rows_examined_per_call(
        session=session, settings=settings, instance=instance.name, window=window, query_id=query_id
    )
    try:
        advice = advise(sql, parse_schema(document), default_db, measured_rows=measured)
    except (AdviceError, SchemaError) as exc:
        raise AdviceUnavailable(f"Query {query_id} cannot be advised: {exc}") from exc
    items = one_per_key([item_of(a, "" if usable else FINGERPRINT_NOTE) for a in advice])
    existing = repository.suggestions(session, query_id, instance_id)
    validations = validate_suggestions(
        session=session,
        settings=settings,
        actor=actor,
        query_id=query_id,
        instance=instance,
        sql=sql if usable else None,
        default_db=default_db,
        tables=sorted(document["tables"]),
        items=[i for i in items if needs_validation(i, existing)],
    )
    created, changed = store(
        session=session,
        query_id=query_id,
        instance_id=instance_id,
        items=items,
        existing=existing,
        documents=document["tables"],
        validations=validations,
        now=now,
    )
    # Another query's wider suggestion may hold this one's index, or this one another's.
    merge_redundant(
        repository.on_tables(session, instance_id, sorted(document["tables"])),
        tables_of(document["tables"]),
        now,
    )
    session.flush()
    stored = repository.suggestions(session, query_id, instance_id)
    announced = [r for r in stored if r.action in INDEXED_ACTIONS and not rejected(r)]
    if any(r.id in created or r.id in changed for r in announced):
        # One message per query, with every table's index: a join is fixed as a whole.
        announce(session, settings, [r for r in announced if r.status == SuggestionStatus.NEW])
    return AdviceRun(
        query_id=query_id,
        instance_id=instance_id,
        from_example=usable,
        suggestions=tuple(stored),
        created=tuple(created),
        changed=tuple(changed),
        snapshot=refresh,
    )


def applied_since(*, session: Session, since: datetime) -> list[Suggestion]:
    """Suggestions whose index appeared since ``since`` (status ``applied``), oldest first:
    what the closed loop measures (quanta.regressions.service.announce_outcomes)."""
    return repository.applied_after(session, since)


def _out(row: Suggestion, instance: str, merged_into: Suggestion | None) -> SuggestionOut:
    return SuggestionOut(
        id=row.id,
        query_id=row.query_id,
        instance=instance,
        instance_id=row.instance_id,
        table=row.table_name,
        action=row.action,
        columns=[SuggestionColumnOut(**c) for c in row.columns],
        ddl=row.ddl,
        reason=row.reason,
        notes=row.notes,
        redundant=row.redundant,
        status=row.status,
        content_hash=row.content_hash,
        validation=row.validation,
        merged_into=MergedIntoOut(
            id=merged_into.id, query_id=merged_into.query_id, ddl=merged_into.ddl
        )
        if merged_into is not None and row.status == SuggestionStatus.SUPERSEDED
        else None,
        plan=PlanVerdictOut(**row.plan) if row.plan else None,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )
