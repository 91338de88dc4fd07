"""Use cases of index advice: advise a query, re-evaluate on schema changes, track status.

A run for (query, instance) takes the newest usable example of the query (full literals,
not truncated; the fingerprint when there is none, and the reason says so), refreshes the
snapshots of the tables it reads (quanta.tables, read-only on the monitored server), runs
the pure advisor and stores one suggestion per piece of advice:

* the same table and DDL with the same content keeps its row and its status (a dismissal
  stays dismissed);
* advice that changed updates the row (same table) and makes it ``new`` again;
* a suggestion whose columns are now the leading columns of an existing index becomes
  ``applied`` (and ``new`` again if that index disappears);
* advice the advisor no longer gives is removed, unless it was applied.

New or changed ``add``/``replace`` advice is checked on the instance's sandbox when one is
configured (see :mod:`quanta.advice.validate`): both plans are stored, and a suggestion whose
plan does not improve is kept out of the list and out of chat.
"""

import hashlib
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from quanta.advice import repository
from quanta.advice.models import Suggestion, SuggestionStatus
from quanta.advice.schemas import (
    AdviceRequested,
    SuggestionColumnOut,
    SuggestionList,
    SuggestionOut,
)
from quanta.advice.validate import (
    Candidate,
    MonitoredServer,
    PlanStatement,
    SandboxError,
    SandboxRefused,
    validate_indexes,
    validate_plan,
)
from quanta.analysis.advisor import (
    Action,
    AdviceColumn,
    AdviceError,
    Rule,
    SchemaError,
    TableAdvice,
    advise,
    parse_schema,
)
from quanta.analysis.advisor.render import numbers_text
from quanta.analysis.statement import describe_statement
from quanta.audit.service import Actor
from quanta.core import errors
from quanta.core.config import Settings
from quanta.core.crypto import SecretUnreadable
from quanta.core.db import utcnow
from quanta.core.mysql import InvalidDsn
from quanta.core.tasks import ADVISE_QUERY_TASK, celery_client
from quanta.diagnostics import safety
from quanta.diagnostics import service as diagnostics_service
from quanta.diagnostics.models import ExplainRun
from quanta.instances.models import Instance
from quanta.instances.service import (
    InstanceNotFound,
    NoConnection,
    connected_instances,
    connection_options,
    find_instance,
    find_instance_by_name,
    monitored_settings,
    sandbox_options,
)
from quanta.monitored import MonitoredError
from quanta.notify import service as notify_service
from quanta.notify.events import NEW_SUGGESTION, SuggestionNotice
from quanta.notify.formats.common import size
from quanta.notify.publish import publish_suggestion
from quanta.queries import service as queries_service
from quanta.queries.service import QueryNotFound
from quanta.queries.window import BucketFilter, TimeWindow
from quanta.tables import service as tables_service
from quanta.tables.service import SnapshotRefresh

__all__ = [
    "AdviceRun",
    "AdviceUnavailable",
    "AdvisedStatement",
    "InstanceNotFound",
    "InvalidStatusChange",
    "NoConnection",
    "QueryNotFound",
    "QueueUnavailable",
    "SuggestionNotFound",
    "advise_query",
    "advised_statement",
    "daily_work",
    "hot_work",
    "list_suggestions",
    "reevaluate_tables",
    "refresh_changed_tables",
    "refresh_suggested_tables",
    "request_advice",
    "set_status",
    "validate_table_plan",
]

log = logging.getLogger(__name__)

FINGERPRINT_NOTE = (
    "Advised from the fingerprint: no untruncated example with its literals is stored for "
    "this query on this instance, so value selectivity is unknown and the sandbox cannot "
    "check the plan. "
)
INDEXED_ACTIONS = (Action.ADD.value, Action.REPLACE.value)
FULL_LITERALS = "full"
# The daily job ranks queries by their load over this past window.
DAILY_WINDOW = timedelta(days=1)
# The frequent pass (hot_work) looks at this past window, and retries a query after it.
HOT_WINDOW = timedelta(hours=1)


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


@dataclass(frozen=True, slots=True)
class DailyUnit:
    """One instance's share of the daily job: its top queries by load to advise."""

    instance_id: int
    instance: str
    top_queries: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Item:
    """One piece of advice, as it would be stored."""

    table: str
    action: str
    columns: list[dict[str, Any]]
    ddl: str
    reason: str
    notes: list[str]
    redundant: list[str]
    content_hash: str


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
    if repository.query_class(session, query_id) is None:
        raise QueryNotFound(f"No query with query_id {query_id!r}.")
    instance_id = (
        find_instance_by_name(session=session, name=instance, hint=False).id if instance else None
    )
    names = {}
    rows = []
    for row in repository.suggestions(session, query_id, instance_id):
        if include_rejected or not _rejected(row):
            rows.append(row)
    for row in rows:
        if row.instance_id not in names:
            names[row.instance_id] = find_instance(
                session=session, instance_id=row.instance_id, hint=False
            ).name
    return SuggestionList(
        query_id=query_id, suggestions=[_out(row, names[row.instance_id]) for row in rows]
    )


def set_status(*, session: Session, suggestion_id: int, status: str) -> SuggestionOut:
    """Dismiss a suggestion (``dismissed``) or take the dismissal back (``new``)."""
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
    if row.status != status:
        row.status = status
        row.updated_at = utcnow()
        session.flush()
    instance = find_instance(session=session, instance_id=row.instance_id, hint=False)
    return _out(row, instance.name)


# --------------------------------------------------------------------------- requests


def request_advice(
    *, session: Session, settings: Settings, query_id: str, instance: str, actor: Actor
) -> AdviceRequested:
    """Queue a fresh advice run for a query on an instance (checked to be reachable)."""
    if repository.query_class(session, query_id) is None:
        raise QueryNotFound(f"No query with query_id {query_id!r}.")
    found = find_instance_by_name(session=session, name=instance, hint=False)
    try:  # a missing or unusable DSN is said now, not in a worker log
        connection_options(settings, found)
    except (InvalidDsn, SecretUnreadable) as exc:
        raise NoConnection(
            f"Instance '{found.name}' has a DSN that cannot be used ({exc}); an admin sets it "
            f"again with PATCH /api/v1/instances/{found.id}."
        ) from exc
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


def daily_work(
    *, session: Session, settings: Settings, now: datetime | None = None
) -> list[DailyUnit]:
    """What the daily job does per reachable instance: its tables with suggestions (refresh,
    re-evaluate) and its top QUANTA_ADVICE_TOP_QUERIES queries by load over the last day
    (advise; their table snapshots are refreshed on the way when older than a day)."""
    now = now or utcnow()
    window = TimeWindow(now - DAILY_WINDOW, now)
    units = []
    for instance in connected_instances(session=session):
        top = queries_service.instance_top_queries(
            session=session,
            settings=settings,
            instance=instance.name,
            window=window,
            limit=settings.advice_top_queries,
        )
        units.append(
            DailyUnit(
                instance_id=instance.id,
                instance=instance.name,
                top_queries=tuple(row.query_id for row in top),
            )
        )
    return units


def hot_work(
    *, session: Session, settings: Settings, now: datetime | None = None
) -> list[DailyUnit]:
    """The queries to EXPLAIN and advise now, per instance with a DSN: those whose load share
    over the last hour reached the lowest minimum of the enabled chat channels taking
    suggestions for the instance (QUANTA_ADVICE_HOT_MIN_LOAD_SHARE when none does), that have
    no suggestion yet and no EXPLAIN run in the last hour (a query the advisor cannot read is
    retried hourly, not every pass). Their EXPLAIN runs are queued here, as beat's."""
    now = now or utcnow()
    window = TimeWindow(now - HOT_WINDOW, now)
    units = []
    for instance in connected_instances(session=session):
        threshold = _hot_threshold(session, settings, instance.name)
        top = queries_service.instance_top_queries(
            session=session,
            settings=settings,
            instance=instance.name,
            window=window,
            limit=settings.advice_top_queries,
        )
        heavy = [row.query_id for row in top if row.share >= threshold]
        advised = repository.advised_query_ids(session, instance.id, heavy)
        tried = diagnostics_service.queries_with_runs_since(
            session=session,
            model=ExplainRun,
            instance_id=instance.id,
            query_ids=heavy,
            since=now - HOT_WINDOW,
        )
        fresh = tuple(q for q in heavy if q not in advised and q not in tried)
        if not fresh:
            continue
        diagnostics_service.explain_now(
            session=session, settings=settings, instance=instance, query_ids=fresh
        )
        units.append(DailyUnit(instance_id=instance.id, instance=instance.name, top_queries=fresh))
    return units


@dataclass(frozen=True, slots=True)
class AdvisedStatement:
    """The text a query is advised from on an instance: its newest usable example (full
    literals, not truncated), else its fingerprint; and the database of unqualified names."""

    sql: str
    default_db: str | None
    from_example: bool


def advised_statement(
    *, session: Session, query_id: str, instance_id: int, fingerprint: str
) -> AdvisedStatement:
    """What a query is advised from on an instance (see AdvisedStatement)."""
    examples = repository.latest_examples(session, query_id, instance_id)
    usable = next((e for e in examples if e.literals == FULL_LITERALS and not e.truncated), None)
    # A masked or truncated example still tells the database of unqualified table names.
    default_db = (usable or examples[0]).schema_name or None if examples else None
    return AdvisedStatement(
        sql=usable.text if usable else fingerprint,
        default_db=default_db,
        from_example=usable is not None,
    )


def _hot_threshold(session: Session, settings: Settings, instance: str) -> float:
    """The lowest load share a chat channel wants suggestions for on this instance from."""
    shares = [
        channel.min_load_share
        for channel in notify_service.enabled_channels(session=session)
        if NEW_SUGGESTION in channel.events
        and (not channel.instances or instance in channel.instances)
    ]
    return min(shares, default=settings.advice_hot_min_load_share)


def _advise(
    *,
    session: Session,
    settings: Settings,
    query_id: str,
    instance_id: int,
    now: datetime,
    actor: Actor | None = None,
) -> AdviceRun:
    query = repository.query_class(session, query_id)
    if query is None:
        raise QueryNotFound(f"No query with query_id {query_id!r}.")
    instance = find_instance(session=session, instance_id=instance_id, hint=False)
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
    try:
        advice = advise(sql, parse_schema(document), default_db)
    except (AdviceError, SchemaError) as exc:
        raise AdviceUnavailable(f"Query {query_id} cannot be advised: {exc}") from exc
    items = _one_per_key([_item(a, "" if usable else FINGERPRINT_NOTE) for a in advice])
    existing = repository.suggestions(session, query_id, instance_id)
    validations = _validate(
        session=session,
        settings=settings,
        actor=actor,
        query_id=query_id,
        instance=instance,
        sql=sql if usable else None,
        default_db=default_db,
        tables=sorted(document["tables"]),
        items=[i for i in items if _needs_validation(i, existing)],
    )
    created, changed = _store(
        session=session,
        query_id=query_id,
        instance_id=instance_id,
        items=items,
        existing=existing,
        documents=document["tables"],
        validations=validations,
        now=now,
    )
    stored = repository.suggestions(session, query_id, instance_id)
    announced = [r for r in stored if r.action in INDEXED_ACTIONS and not _rejected(r)]
    if any(r.id in created or r.id in changed for r in announced):
        # One message per query, with every table's index: a join is fixed as a whole.
        _announce(session, settings, [r for r in announced if r.status == SuggestionStatus.NEW])
    return AdviceRun(
        query_id=query_id,
        instance_id=instance_id,
        from_example=usable,
        suggestions=tuple(stored),
        created=tuple(created),
        changed=tuple(changed),
        snapshot=refresh,
    )


def _item(advice: TableAdvice, prefix: str) -> _Item:
    columns = [{"name": c.name, "desc": c.desc, "rule": c.rule.value} for c in advice.columns]
    notes = list(advice.notes)
    if advice.alternative is not None:
        notes.append(f"Alternative: {advice.alternative.ddl} ({advice.alternative.reason})")
    reason = prefix + advice.reason
    redundant = list(advice.redundant)
    # The estimates move with the statistics: shown, but not a change of the advice.
    numbers = [numbers_text(advice)] if advice.rows_after is not None else []
    return _Item(
        table=advice.table,
        action=advice.action.value,
        columns=columns,
        ddl=advice.ddl,
        reason=reason,
        notes=notes + numbers,
        redundant=redundant,
        content_hash=_content_hash(
            advice.table, advice.action.value, columns, advice.ddl, reason, notes, redundant
        ),
    )


def _one_per_key(items: Sequence[_Item]) -> list[_Item]:
    """One item per (table, DDL): a table read twice (a self-join, a subquery) can get the
    same index twice, or two reasons for no index; the first is kept, with the others'
    reasons as notes."""
    merged: dict[tuple[str, str], _Item] = {}
    for item in items:
        key = (item.table, item.ddl)
        first = merged.get(key)
        if first is None:
            merged[key] = item
        elif item.reason != first.reason and item.reason not in first.notes:
            notes = [*first.notes, item.reason]
            merged[key] = _Item(
                table=first.table,
                action=first.action,
                columns=first.columns,
                ddl=first.ddl,
                reason=first.reason,
                notes=notes,
                redundant=first.redundant,
                content_hash=_content_hash(
                    first.table,
                    first.action,
                    first.columns,
                    first.ddl,
                    first.reason,
                    notes,
                    first.redundant,
                ),
            )
    return list(merged.values())


def _content_hash(*fields: Any) -> str:
    """SHA-256 of what a suggestion says (its JSON, keys sorted)."""
    encoded = json.dumps(list(fields), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(encoded.encode()).hexdigest()


def _needs_validation(item: _Item, existing: Sequence[Suggestion]) -> bool:
    if item.action not in INDEXED_ACTIONS:
        return False
    same = [r for r in existing if (r.table_name, r.ddl) == (item.table, item.ddl)]
    if not same or same[0].content_hash != item.content_hash:
        return True
    # Never checked, or the check failed (sandbox down): try again.
    return same[0].validation is None or same[0].validation.get("improved") is None


def _validate(
    *,
    session: Session,
    settings: Settings,
    actor: Actor | None,
    query_id: str,
    instance: Instance,
    sql: str | None,
    default_db: str | None,
    tables: list[str],
    items: list[_Item],
) -> dict[tuple[str, str], dict[str, Any]]:
    """Sandbox results by (table, ddl); empty when there is no sandbox or nothing to check.

    The monitoring account must have the least privileges (or an admin's override); the
    stored plans have their literals masked by the example policy; the run is audited.
    """
    sandbox = sandbox_options(settings, instance)
    if sandbox is None or not items:
        return {}
    if sql is None:
        return {
            (i.table, i.ddl): {"error": "not checked: no usable example", "improved": None}
            for i in items
        }
    candidates = [
        Candidate(
            key=number,
            table=item.table,
            columns=tuple(
                AdviceColumn(c["name"], c["desc"], Rule(c["rule"])) for c in item.columns
            ),
            ddl=item.ddl,
        )
        for number, item in enumerate(items)
    ]
    trail = safety.Trail()
    try:
        monitored = connection_options(settings, instance)
        safety.check_monitored_account(settings, instance, monitored, trail)
        trail.reached(safety.SANDBOX, sandbox.address)
        results = validate_indexes(
            monitored=monitored,
            sandbox=sandbox,
            instances=_monitored_servers(session, settings),
            limits=monitored_settings(settings),
            sql=sql,
            default_db=default_db,
            tables=tables,
            candidates=candidates,
            sample_rows=settings.advice_sandbox_sample_rows,
        )
    except (MonitoredError, SandboxError) as exc:
        refused = isinstance(exc, safety.BroadPrivileges | SandboxRefused)
        outcome = "refused" if refused else "failed"
        log.warning("sandbox validation on instance %s %s: %s", instance.name, outcome, exc)
        _audit_suggestion(session, actor, trail, instance, query_id, outcome, str(exc))
        failed: dict[str, Any] = {"error": str(exc), "improved": None}
        if isinstance(exc, SandboxRefused):
            failed["refused"] = True  # Quanta's own refusal, not a sandbox failure
        return {(i.table, i.ddl): dict(failed) for i in items}
    _audit_suggestion(session, actor, trail, instance, query_id, "ok", None)
    return {
        (items[key].table, items[key].ddl): _masked_result(instance, result, sql)
        for key, result in results.items()
    }


def validate_table_plan(
    *,
    session: Session,
    settings: Settings,
    instance: Instance,
    actor: Actor | None,
    table: str,
    adds: Sequence[Candidate],
    drops: Sequence[str],
    statements: Sequence[PlanStatement],
) -> dict[str, Any] | None:
    """A table's whole index plan checked on the instance's sandbox (see
    quanta.advice.validate.validate_plan): the plans of every served statement before and
    after, their literals masked by the example policy, the run audited like a suggestion's;
    ``{"error"}`` when the check failed; None when the instance has no sandbox."""
    sandbox = sandbox_options(settings, instance)
    if sandbox is None:
        return None
    trail = safety.Trail()
    try:
        monitored = connection_options(settings, instance)
        safety.check_monitored_account(settings, instance, monitored, trail)
        trail.reached(safety.SANDBOX, sandbox.address)
        result = validate_plan(
            monitored=monitored,
            sandbox=sandbox,
            instances=_monitored_servers(session, settings),
            limits=monitored_settings(settings),
            table=table,
            adds=adds,
            drops=drops,
            statements=statements,
            sample_rows=settings.advice_sandbox_sample_rows,
        )
    except (MonitoredError, SandboxError) as exc:
        refused = isinstance(exc, safety.BroadPrivileges | SandboxRefused)
        outcome = "refused" if refused else "failed"
        log.warning("sandbox check of %s on %s %s: %s", table, instance.name, outcome, exc)
        _audit_plan(session, actor, trail, instance, table, outcome, str(exc))
        return {"error": str(exc)} | ({"refused": True} if isinstance(exc, SandboxRefused) else {})
    _audit_plan(session, actor, trail, instance, table, "ok", None)
    texts = {s.key: s.sql for s in statements}
    result["queries"] = {
        key: _masked_result(instance, checked, texts[key])
        for key, checked in result["queries"].items()
    }
    return result


def _masked_result(instance: Instance, result: dict[str, Any], sql: str) -> dict[str, Any]:
    """A sandbox result with its plans' literals masked (const rows read on the sandbox are
    the copied production rows)."""
    plans = {k: safety.masked(instance, result[k], sql) for k in ("before", "after") if k in result}
    return result | plans


def _audit_suggestion(
    session: Session,
    actor: Actor | None,
    trail: safety.Trail,
    instance: Instance,
    query_id: str,
    outcome: str,
    reason: str | None,
) -> None:
    trail.record(
        session,
        actor=actor,
        what="suggestion",
        instance=instance,
        query_id=query_id,
        run_id=None,
        outcome=outcome,
        reason=reason,
    )


def _audit_plan(
    session: Session,
    actor: Actor | None,
    trail: safety.Trail,
    instance: Instance,
    table: str,
    outcome: str,
    reason: str | None,
) -> None:
    trail.record(
        session,
        actor=actor,
        what="index_plan",
        instance=instance,
        query_id=None,
        table=table,
        run_id=None,
        outcome=outcome,
        reason=reason,
    )


def _monitored_servers(session: Session, settings: Settings) -> list[MonitoredServer]:
    """Every instance with a DSN: the servers a sandbox must not be."""
    servers = []
    for other in connected_instances(session=session):
        try:
            servers.append(MonitoredServer(other.name, connection_options(settings, other)))
        except (SecretUnreadable, InvalidDsn) as exc:
            # Its server is unknown, so the sandbox could be it: not used until it is fixed.
            raise SandboxRefused(
                f"cannot tell whether the sandbox is the server of instance '{other.name}': "
                f"its DSN cannot be read ({exc})"
            ) from exc
    return servers


def _store(
    *,
    session: Session,
    query_id: str,
    instance_id: int,
    items: Sequence[_Item],
    existing: Sequence[Suggestion],
    documents: Mapping[str, Mapping[str, Any]],
    validations: Mapping[tuple[str, str], dict[str, Any]],
    now: datetime,
) -> tuple[list[int], list[int]]:
    """Upsert the advice into the stored suggestions; (ids created, ids changed)."""
    for stored in existing:
        _track_applied(stored, documents.get(stored.table_name), now)
    applied_tables = {r.table_name for r in existing if r.status == SuggestionStatus.APPLIED}
    by_key = {(r.table_name, r.ddl): r for r in existing}
    new_keys = {(i.table, i.ddl) for i in items}
    used: set[int] = set()
    created_rows: list[Suggestion] = []
    changed: list[int] = []
    for item in items:
        key = (item.table, item.ddl)
        if item.action == Action.NONE.value and item.table in applied_tables:
            continue  # the applied suggestion already says an index serves this table
        row = by_key.get(key)
        if row is not None:
            used.add(row.id)
            if key in validations:
                row.validation = validations[key]
            if row.content_hash != item.content_hash:
                _fill(row, item, now)
                changed.append(row.id)
            continue
        spare = next(
            (
                r
                for r in existing
                if r.table_name == item.table
                and r.id not in used
                and (r.table_name, r.ddl) not in new_keys
                and r.status != SuggestionStatus.APPLIED
            ),
            None,
        )
        if spare is not None:
            used.add(spare.id)
            _fill(spare, item, now)
            spare.validation = validations.get(key)
            changed.append(spare.id)
            continue
        added = Suggestion(query_id=query_id, instance_id=instance_id, created_at=now)
        _fill(added, item, now)
        added.validation = validations.get(key)
        session.add(added)
        created_rows.append(added)
    for stored in existing:
        if stored.id not in used and stored.status != SuggestionStatus.APPLIED:
            session.delete(stored)  # advice the advisor no longer gives
    session.flush()
    return [r.id for r in created_rows], changed


def _fill(row: Suggestion, item: _Item, now: datetime) -> None:
    row.table_name = item.table
    row.action = item.action
    row.columns = item.columns
    row.ddl = item.ddl
    row.reason = item.reason
    row.notes = item.notes
    row.redundant = item.redundant
    row.content_hash = item.content_hash
    row.status = SuggestionStatus.NEW.value
    row.updated_at = now


def _track_applied(row: Suggestion, document: Mapping[str, Any] | None, now: datetime) -> None:
    """``applied`` when an index now starts with the suggested columns; back to ``new`` when
    an applied suggestion's index is gone."""
    if row.action not in INDEXED_ACTIONS or document is None:
        return
    wanted = tuple(str(c["name"]).lower() for c in row.columns)
    present = any(
        columns[: len(wanted)] == wanted for _name, columns in tables_service.indexes_of(document)
    )
    if present and row.status != SuggestionStatus.APPLIED:
        row.status = SuggestionStatus.APPLIED.value
        row.updated_at = now
    elif not present and row.status == SuggestionStatus.APPLIED:
        row.status = SuggestionStatus.NEW.value
        row.updated_at = now


def _rejected(row: Suggestion) -> bool:
    """The sandbox showed the index does not improve the plan."""
    return row.validation is not None and row.validation.get("improved") is False


def _announce(session: Session, settings: Settings, rows: Sequence[Suggestion]) -> None:
    """Queue one chat message about a query's new or changed suggestions (every table's
    index in it) for every channel whose filters match (quanta.notify; a channel gets the
    same content once), with the query's share of its instance's load, its calls and cost
    per call over the last day, the tables' sizes and the sandbox plans when there are
    some."""
    if not rows:
        return
    first = rows[0]
    instance = find_instance(session=session, instance_id=first.instance_id, hint=False)
    now = utcnow()
    window = TimeWindow(now - DAILY_WINDOW, now)
    detail = queries_service.query_detail(
        session=session,
        settings=settings,
        window=window,
        query_id=first.query_id,
        flt=BucketFilter(instances=(instance.name,)),
    )
    per_call = {m.name: m.avg for m in detail.metrics}
    plans_before = [_plan_text((r.validation or {}).get("before")) for r in rows]
    plans_after = [_plan_text((r.validation or {}).get("after")) for r in rows]
    plan_before = "\n".join(p for p in plans_before if p) or None
    plan_after = "\n".join(p for p in plans_after if p) or None
    several = len(rows) > 1
    notice_hash = hashlib.sha256(
        json.dumps([[r.content_hash for r in rows], plan_before, plan_after]).encode()
    ).hexdigest()
    publish_suggestion(
        session=session,
        settings=settings,
        notice=SuggestionNotice(
            suggestion_id=min(r.id for r in rows),
            query_id=first.query_id,
            fingerprint=detail.fingerprint,
            instance=instance.name,
            table=", ".join(r.table_name for r in rows),
            load_share=detail.share,
            calls=detail.count,
            ddl=";\n".join(r.ddl for r in rows) + (";" if several else ""),
            reason=" ".join(f"{r.table_name}: {r.reason}" if several else r.reason for r in rows),
            content_hash=notice_hash,
            plan_before=plan_before,
            plan_after=plan_after,
            window_start=window.start.isoformat(),
            window_end=window.end.isoformat(),
            rows_examined_per_call=per_call.get("rows_examined"),
            rows_sent_per_call=per_call.get("rows_sent"),
            latency_avg=per_call.get("query_time"),
            table_sizes=_table_sizes(session, instance.id, [r.table_name for r in rows]),
        ),
    )


def _table_sizes(session: Session, instance_id: int, tables: Sequence[str]) -> list[str]:
    """ "shop.orders: 30,000 rows, 2.1 MB" per table, from its snapshot (how heavy the ALTER
    is); a table without a snapshot is left out."""
    sizes = []
    for name, document in tables_service.stored_documents(session, instance_id, tables).items():
        rows = document.get("rows")
        data = [document.get("data_length"), document.get("index_length")]
        total = sum(d for d in data if isinstance(d, int)) if any(data) else None
        counted = f"{rows:,} rows" if isinstance(rows, int) else "rows unknown"
        sizes.append(f"{name}: {counted}, {size(total)}")
    return sizes


def _plan_text(plan: Any) -> str | None:
    """A tabular EXPLAIN as short lines: ``orders: ref idx_orders_phone, 2 rows``."""
    if not isinstance(plan, list) or not plan:
        return None
    return "\n".join(
        f"{row.get('table')}: {row.get('type')}"
        + (f" {row['key']}" if row.get("key") else "")
        + f", {row.get('rows')} rows"
        for row in plan
    )


def _out(row: Suggestion, instance: str) -> SuggestionOut:
    return SuggestionOut(
        id=row.id,
        query_id=row.query_id,
        instance=instance,
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
        created_at=row.created_at,
        updated_at=row.updated_at,
    )
