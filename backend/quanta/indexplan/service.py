"""Use cases of workload index plans: plan an instance's tables, serve the plans, tell chat.

A run for an instance weighs its heaviest query classes of the window
(QUANTA_INDEX_PLAN_WINDOW_HOURS, Quanta's own statements left out: see
quanta.queries.service.instance_top_queries) with their calls, load, rows examined and load
share, each from its newest usable example or else its fingerprint (the same text per-query
advice uses); the schema snapshots of the tables they name (refreshed when stale); and each
table's write rate: the agent's table statistics where there are some
(quanta.statistics.service.table_write_rates), else the rows affected by the window's write
statements on that one table. The pure planner (quanta.analysis.advisor.workload) turns that
into one plan per table.

When the instance has a sandbox, each plan with DDL is applied whole to a copy of the table
there and every served query with a real example is explained before and after
(quanta.advice.sandbox.validate_table_plan). Only what the plans confirm is kept: an index
that no served query's plan uses with a better access is left out (``rejected``), and the
drops go when any query's plan got worse. An index none of whose queries could be checked
(only fingerprints) stays, marked ``not_checked``.

The latest plan per (instance, table) is stored with its signature (changes with the DDL);
a plan whose signature changed is published to chat as one message per table
(quanta.notify.publish.publish_plan), never the same plan twice.
"""

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from quanta.advice import sandbox as advice_sandbox
from quanta.advice import service as advice_service
from quanta.advice.schemas import SuggestionColumnOut
from quanta.advice.validate import Candidate, PlanStatement
from quanta.analysis.advisor import SchemaError, parse_schema
from quanta.analysis.advisor.engine import alter_table_ddl, quote_name
from quanta.analysis.advisor.workload import (
    DroppedIndex,
    PlannedIndex,
    PlanRules,
    TablePlan,
    TableWrites,
    WorkloadQuery,
    plan_workload,
)
from quanta.analysis.statement import written_table
from quanta.audit.service import Actor
from quanta.core.config import Settings
from quanta.core.crypto import SecretUnreadable
from quanta.core.db import utcnow
from quanta.core.errors import Unavailable
from quanta.core.mysql import InvalidDsn
from quanta.core.tasks import PLAN_INDEXES_TASK, celery_client
from quanta.indexplan import repository
from quanta.indexplan.models import IndexPlan
from quanta.indexplan.schemas import (
    DroppedIndexOut,
    IndexPlanList,
    PlannedIndexOut,
    PlanRequested,
    RejectedIndexOut,
    SandboxCheckOut,
    ServedQueryOut,
    TablePlanOut,
)
from quanta.instances.models import Instance
from quanta.instances.service import (
    InstanceNotFound,
    NoConnection,
    connection_options,
    find_instance,
)
from quanta.monitored import MonitoredError
from quanta.notify.events import PlanNotice
from quanta.notify.formats.common import shorten, size
from quanta.notify.publish import publish_plan
from quanta.queries import service as queries_service
from quanta.queries.window import TimeWindow
from quanta.statistics import service as statistics_service
from quanta.tables import service as tables_service

__all__ = [
    "CheckedPlan",
    "InstanceNotFound",
    "NoConnection",
    "PlanRun",
    "QueueUnavailable",
    "Workload",
    "gather_workload",
    "instance_plans",
    "keep_confirmed",
    "plan_instance",
    "request_plans",
]

log = logging.getLogger(__name__)

# Statement types whose rows_affected are rows written to their target table.
WRITE_KINDS = {
    "insert": "inserted",
    "replace": "inserted",
    "update": "updated",
    "delete": "deleted",
}
CONFIRMED, NOT_CHECKED = "confirmed", "not_checked"
# A served query's line in a chat message: enough of the text to recognise it.
NOTICE_QUERY_CHARS = 120
NOTICE_QUERIES = 5


class QueueUnavailable(Unavailable):
    """The task could not be handed to the broker."""


@dataclass(frozen=True, slots=True)
class Workload:
    """What an instance's plan weighs: its queries of the window, their tables' schema
    document and the tables' write rates; ``facts`` keeps per query what the UI shows."""

    window: TimeWindow
    queries: tuple[WorkloadQuery, ...]
    tables: tuple[str, ...]
    document: dict[str, Any]
    writes: dict[str, TableWrites]
    facts: dict[str, dict[str, Any]]


@dataclass(frozen=True, slots=True)
class PlanRun:
    """What one run stored: the plans now stored, and the ids whose signature changed."""

    instance_id: int
    plans: tuple[IndexPlan, ...]
    changed: tuple[int, ...]
    announced: tuple[int, ...]


# --------------------------------------------------------------------------- reads


def instance_plans(*, session: Session, instance_id: int) -> IndexPlanList:
    """An instance's latest index plans, heaviest table first (empty before the first run)."""
    instance = find_instance(session=session, instance_id=instance_id, hint=False)
    rows = repository.plans_of(session, instance_id)
    newest = max(rows, key=lambda r: r.computed_at, default=None)
    return IndexPlanList(
        instance_id=instance.id,
        instance=instance.name,
        window_start=newest.window_start if newest else None,
        window_end=newest.window_end if newest else None,
        computed_at=newest.computed_at if newest else None,
        plans=[_out(row) for row in rows],
    )


def request_plans(
    *,
    session: Session,
    settings: Settings,
    instance_id: int,
    actor: Actor,
    window_hours: int | None = None,
) -> PlanRequested:
    """Queue a fresh plan of an instance (snapshots refreshed, sandbox check) over the last
    ``window_hours`` (default QUANTA_INDEX_PLAN_WINDOW_HOURS)."""
    instance = find_instance(session=session, instance_id=instance_id, hint=False)
    try:  # a missing or unusable DSN is said now, not in a worker log
        connection_options(settings, instance)
    except (InvalidDsn, SecretUnreadable) as exc:
        raise NoConnection(
            f"Instance '{instance.name}' has a DSN that cannot be used ({exc}); an admin sets "
            f"it again with PATCH /api/v1/instances/{instance.id}."
        ) from exc
    try:
        celery_client(settings).send_task(
            PLAN_INDEXES_TASK,
            args=[instance.id],
            kwargs={
                "requested_by": actor.name,
                "requested_by_token_id": actor.token_id,
                "window_hours": window_hours,
            },
        )
    except Exception as exc:
        log.exception("could not enqueue the index plan of instance %s", instance.id)
        raise QueueUnavailable(
            "The task queue is unreachable, so the plan was not queued; try again shortly."
        ) from exc
    return PlanRequested(instance_id=instance.id, instance=instance.name)


# --------------------------------------------------------------------------- runs


def gather_workload(
    *,
    session: Session,
    settings: Settings,
    instance: Instance,
    window: TimeWindow,
    refresh: bool = False,
    now: datetime | None = None,
) -> Workload:
    """The instance's heaviest queries of the window, their tables' snapshots (refreshed
    first with ``refresh``; a server that cannot be read leaves the stored ones) and the
    tables' write rates."""
    top = queries_service.instance_top_queries(
        session=session,
        settings=settings,
        instance=instance.name,
        window=window,
        limit=settings.index_plan_max_queries,
    )
    queries: list[WorkloadQuery] = []
    facts: dict[str, dict[str, Any]] = {}
    tables: set[str] = set()
    writers: dict[str, tuple[str, str]] = {}  # query_id -> (table, kind)
    for row in top:
        if not row.count:
            continue
        statement = advice_service.advised_statement(
            session=session,
            query_id=row.query_id,
            instance_id=instance.id,
            fingerprint=row.fingerprint,
        )
        named = tables_service.qualify_tables(row.tables, statement.default_db)
        tables.update(named)
        kind = (row.statement_type or "").lower()
        written = written_table(row.fingerprint) if kind in WRITE_KINDS else None
        target = tables_service.qualify_tables([written], statement.default_db) if written else []
        if target:
            writers[row.query_id] = (target[0], WRITE_KINDS[kind])
        queries.append(
            WorkloadQuery(
                query_id=row.query_id,
                sql=statement.sql,
                default_db=statement.default_db,
                calls=float(row.count),
                load=row.query_time,
                rows_examined=float(row.rows_examined or 0),
                load_share=row.share,
            )
        )
        facts[row.query_id] = {
            "fingerprint": row.fingerprint,
            "calls": row.count,
            "load_share": row.share,
            "rows_examined_per_call": (
                row.rows_examined / row.count if row.rows_examined is not None else None
            ),
            "from_example": statement.from_example,
            "sql": statement.sql if statement.from_example else None,
            "default_db": statement.default_db,
            "tables": named,
        }
    names = sorted(tables)
    if refresh and names:
        try:
            tables_service.refresh_tables(
                session=session, settings=settings, instance_id=instance.id, tables=names, now=now
            )
        except (MonitoredError, NoConnection) as exc:
            log.warning("snapshots for the index plan of %s: %s", instance.name, exc)
    document = tables_service.schema_document(
        session=session, instance_id=instance.id, tables=names
    )
    writes = _write_rates(session, settings, instance, window, names, writers)
    return Workload(
        window=window,
        queries=tuple(queries),
        tables=tuple(names),
        document=document,
        writes=writes,
        facts=facts,
    )


def _write_rates(
    session: Session,
    settings: Settings,
    instance: Instance,
    window: TimeWindow,
    tables: Sequence[str],
    writers: Mapping[str, tuple[str, str]],
) -> dict[str, TableWrites]:
    """Per table: the agent's table statistics, else the rows the window's write statements
    on that table affected per second (quanta.analysis.statement.written_table: a
    multi-table UPDATE or DELETE is not counted, which of its tables it wrote is unknown)."""
    measured = statistics_service.table_write_rates(session=session, instance_id=instance.id)
    rates = {t: measured[t] for t in tables if t in measured}
    missing = {q: w for q, w in writers.items() if w[0] not in rates}
    affected = queries_service.rows_affected_by_query(
        session=session,
        settings=settings,
        instance=instance.name,
        window=window,
        query_ids=sorted(missing),
    )
    derived: dict[str, dict[str, float]] = {}
    for query_id, (table, kind) in missing.items():
        if query_id in affected:
            per_table = derived.setdefault(table, {})
            per_table[kind] = per_table.get(kind, 0.0) + affected[query_id] / window.seconds
    for table, kinds in derived.items():
        rates[table] = TableWrites(
            table,
            inserted_per_s=kinds.get("inserted", 0.0),
            updated_per_s=kinds.get("updated", 0.0),
            deleted_per_s=kinds.get("deleted", 0.0),
        )
    return rates


def plan_instance(
    *,
    session: Session,
    settings: Settings,
    instance_id: int,
    now: datetime | None = None,
    actor: Actor | None = None,
    refresh: bool = True,
    window_hours: int | None = None,
) -> PlanRun:
    """Plan every table the instance's heavy queries of the last ``window_hours`` (default
    QUANTA_INDEX_PLAN_WINDOW_HOURS) touch, check the plans on its sandbox, store them and
    tell chat about the ones that changed (see the module docstring).

    Raises:
        InstanceNotFound.
    """
    now = now or utcnow()
    instance = find_instance(session=session, instance_id=instance_id, hint=False)
    hours = window_hours or settings.index_plan_window_hours
    window = TimeWindow(now - timedelta(hours=hours), now)
    workload = gather_workload(
        session=session,
        settings=settings,
        instance=instance,
        window=window,
        refresh=refresh,
        now=now,
    )
    plans: list[TablePlan] = []
    if workload.document["server"] is not None:
        try:
            schema = parse_schema(workload.document)
        except SchemaError as exc:
            log.warning("index plan of %s: snapshots unreadable: %s", instance.name, exc)
        else:
            plans = plan_workload(
                workload.queries,
                schema,
                workload.writes,
                PlanRules(
                    max_new_indexes=settings.index_plan_max_new_indexes,
                    width_budget_bytes=settings.index_plan_width_budget_bytes,
                    drop_redundant=settings.index_plan_drop_redundant,
                ),
                window_seconds=window.seconds,
            )
    checked = [_checked(session, settings, instance, actor, plan, workload) for plan in plans]
    stored, changed = _store(session, instance.id, checked, workload, now)
    announced = _announce(session, settings, instance, stored, changed, workload)
    return PlanRun(
        instance_id=instance.id,
        plans=tuple(stored),
        changed=tuple(changed),
        announced=tuple(announced),
    )


@dataclass(frozen=True, slots=True)
class CheckedPlan:
    """A plan after the sandbox: what it kept, what it left out and its comparison."""

    plan: TablePlan
    verdicts: dict[str, str]  # index name -> confirmed | not_checked
    rejected: list[dict[str, str]]
    validation: dict[str, Any] | None


def _checked(
    session: Session,
    settings: Settings,
    instance: Instance,
    actor: Actor | None,
    plan: TablePlan,
    workload: Workload,
) -> CheckedPlan:
    """The plan with only what the sandbox's plans confirm (unchanged without a sandbox)."""
    unchecked = {a.name: NOT_CHECKED for a in plan.adds}
    if not plan.ddl:
        return CheckedPlan(plan, unchecked, [], None)
    # Every query on the table is explained: a drop can slow one the adds do not serve.
    statements = [
        PlanStatement(key=query_id, sql=fact["sql"], default_db=fact["default_db"])
        for query_id, fact in sorted(workload.facts.items())
        if fact["sql"] is not None and plan.table in fact["tables"]
    ]
    if not statements:
        result: dict[str, Any] | None = (
            {"error": "not checked: no served query has a usable example"}
            if instance.sandbox_dsn_encrypted is not None
            else None
        )
        return CheckedPlan(plan, unchecked, [], result)
    try:
        result = advice_sandbox.validate_table_plan(
            session=session,
            settings=settings,
            instance=instance,
            actor=actor,
            table=plan.table,
            adds=[
                Candidate(
                    key=number,
                    table=plan.table,
                    columns=add.columns,
                    ddl=alter_table_ddl(plan.table, [(add.name, add.columns)]),
                )
                for number, add in enumerate(plan.adds)
            ],
            drops=[d.name for d in plan.drops],
            statements=statements,
        )
    except (InvalidDsn, SecretUnreadable) as exc:
        result = {"error": f"the sandbox DSN cannot be used: {exc}"}
    if result is None or "queries" not in result:
        return CheckedPlan(plan, unchecked, [], result)
    return keep_confirmed(plan, result)


def keep_confirmed(plan: TablePlan, result: dict[str, Any]) -> CheckedPlan:
    """Keep the adds a served query's plan uses with a better access, and the drops when
    no query got worse; an add none of whose queries was explained stays unchecked."""
    checks: dict[str, dict[str, Any]] = result["queries"]
    verdicts: dict[str, str] = {}
    rejected: list[dict[str, str]] = []
    adds: list[PlannedIndex] = []
    for add in plan.adds:
        explained = [
            checks[s.query_id]
            for s in add.served
            if "error" not in checks.get(s.query_id, {"error": ""})
        ]
        if not explained:
            verdicts[add.name] = NOT_CHECKED
            adds.append(add)
        elif any(c["improved"] and add.name.lower() in _lower(c["keys"]) for c in explained):
            verdicts[add.name] = CONFIRMED
            adds.append(add)
        else:
            rejected.append(
                {
                    "name": add.name,
                    "definition": add.definition,
                    "reason": "On the sandbox copy no query it serves used it with a better "
                    "plan: " + "; ".join(str(c["summary"]) for c in explained),
                }
            )
    worse = [c for c in checks.values() if c.get("worse")]
    drops = plan.drops
    if worse and drops:
        reason = "With the plan on the sandbox copy a query's plan got worse: " + "; ".join(
            str(c["summary"]) for c in worse
        )
        rejected += [
            {"name": d.name, "definition": f"DROP INDEX {quote_name(d.name)}", "reason": reason}
            for d in drops
        ]
        drops = ()
    if len(adds) == len(plan.adds) and drops == plan.drops:
        return CheckedPlan(plan, verdicts, rejected, result)
    kept = replace(plan, adds=tuple(adds), drops=tuple(drops), ddl=_ddl(plan.table, adds, drops))
    return CheckedPlan(kept, verdicts, rejected, result)


def _lower(names: Iterable[Any]) -> set[str]:
    return {str(n).lower() for n in names}


def _ddl(table: str, adds: Sequence[PlannedIndex], drops: Sequence[DroppedIndex]) -> str:
    """One ALTER TABLE with the drops and the adds; empty when there is neither."""
    if not adds and not drops:
        return ""
    return alter_table_ddl(table, [(a.name, a.columns) for a in adds], [d.name for d in drops])


def _store(
    session: Session,
    instance_id: int,
    checked: Sequence[CheckedPlan],
    workload: Workload,
    now: datetime,
) -> tuple[list[IndexPlan], list[int]]:
    """Upsert one row per planned table, delete the others; (rows, ids whose DDL changed)."""
    existing = repository.by_table(session, instance_id)
    planned = {c.plan.table for c in checked}
    repository.delete(session, [row for name, row in existing.items() if name not in planned])
    rows: list[IndexPlan] = []
    changed: list[IndexPlan] = []
    for item in checked:
        plan = item.plan
        row = existing.get(plan.table)
        if row is None:
            row = IndexPlan(instance_id=instance_id, table_name=plan.table, changed_at=now)
            session.add(row)
            changed.append(row)
        elif row.signature != plan.signature:
            row.changed_at = now
            changed.append(row)
        row.signature = plan.signature
        row.ddl = plan.ddl
        row.rows_before_per_s = plan.rows_before_per_s
        row.plan = _document(item, workload)
        row.validation = _run_facts(item.validation)
        row.window_start = workload.window.start
        row.window_end = workload.window.end
        row.computed_at = now
        rows.append(row)
    session.flush()
    rows.sort(key=lambda r: (-r.rows_before_per_s, r.table_name))
    return rows, [r.id for r in changed]


def _run_facts(validation: dict[str, Any] | None) -> dict[str, Any] | None:
    """The sandbox run's own facts (the per-query plans are stored with each query)."""
    if validation is None:
        return None
    return {k: v for k, v in validation.items() if k != "queries"}


def _document(item: CheckedPlan, workload: Workload) -> dict[str, Any]:
    """The plan as stored: adds with their served queries' facts and sandbox checks."""
    plan = item.plan
    checks: dict[str, Any] = (item.validation or {}).get("queries") or {}
    touching = sorted(
        {s.query_id for a in plan.adds for s in a.served}
        | set(plan.unserved)
        | {q for q, f in workload.facts.items() if plan.table in f["tables"]}
    )
    return {
        "adds": [
            {
                "name": add.name,
                "definition": add.definition,
                "columns": [
                    {"name": c.name, "desc": c.desc, "rule": c.rule.value} for c in add.columns
                ],
                "width_bytes": add.width_bytes,
                "entries_per_s": add.entries_per_s,
                "served": [
                    {
                        "query_id": s.query_id,
                        "load_share": s.load_share,
                        "rows_before": s.rows_before,
                        "rows_after": s.rows_after,
                    }
                    for s in add.served
                ],
                "validation": item.verdicts.get(add.name, NOT_CHECKED),
            }
            for add in plan.adds
        ],
        "drops": [
            {"name": d.name, "reason": d.reason, "replaced_by": d.replaced_by} for d in plan.drops
        ],
        "rejected": item.rejected,
        "rows_after_per_s": plan.rows_after_per_s,
        "write_entries_per_s": plan.write_entries_per_s,
        "unserved": list(plan.unserved),
        "notes": list(plan.notes),
        "queries": {
            query_id: {
                key: workload.facts[query_id][key]
                for key in (
                    "fingerprint",
                    "calls",
                    "load_share",
                    "rows_examined_per_call",
                    "from_example",
                )
            }
            | ({"sandbox": _check(checks[query_id])} if query_id in checks else {})
            for query_id in touching
            if query_id in workload.facts
        },
    }


def _check(check: Mapping[str, Any]) -> dict[str, Any]:
    """A served query's sandbox result as stored: plans before/after and the verdict."""
    if "error" in check:
        return {"improved": None, "error": check["error"]}
    keys = ("before", "after", "improved", "worse", "summary", "rows_before", "rows_after")
    return {k: check.get(k) for k in keys}


def _load_share(row: IndexPlan) -> float:
    """Share of the instance's load of the queries the plan's adds serve (each once)."""
    served = {s["query_id"] for add in row.plan["adds"] for s in add["served"]}
    queries = row.plan["queries"]
    return min(1.0, sum(float(queries[q]["load_share"]) for q in served if q in queries))


def _announce(
    session: Session,
    settings: Settings,
    instance: Instance,
    rows: Sequence[IndexPlan],
    changed: Sequence[int],
    workload: Workload,
) -> list[int]:
    """One chat message per table whose plan changed and has something to do."""
    delivered: list[int] = []
    sizes = _table_sizes(workload.document)
    for row in rows:
        if row.id not in changed or not row.ddl:
            continue
        queries = row.plan["queries"]
        served = sorted(
            {
                s["query_id"]
                for add in row.plan["adds"]
                for s in add["served"]
                if s["query_id"] in queries
            },
            key=lambda q: (-float(queries[q]["load_share"]), q),
        )
        lines = [
            f"{shorten(str(queries[q]['fingerprint']), NOTICE_QUERY_CHARS)} "
            f"({queries[q]['load_share'] * 100:.1f}%)"
            for q in served[:NOTICE_QUERIES]
        ]
        if len(served) > NOTICE_QUERIES:
            lines.append(f"and {len(served) - NOTICE_QUERIES} more")
        checks = [
            queries[q]["sandbox"] for q in served if "summary" in queries[q].get("sandbox", {})
        ]
        plans = [_before_after(str(c["summary"])) for c in checks]
        delivered += publish_plan(
            session=session,
            settings=settings,
            notice=PlanNotice(
                plan_id=row.id,
                instance_id=instance.id,
                instance=instance.name,
                table=row.table_name,
                load_share=_load_share(row),
                calls=int(sum(float(queries[q]["calls"]) for q in served)),
                ddl=row.ddl,
                signature=row.signature,
                summary=_summary(row, len(served)),
                queries=lines,
                plan_before="\n".join(before for before, _ in plans) or None,
                plan_after="\n".join(after for _, after in plans) or None,
                window_start=row.window_start.isoformat(),
                window_end=row.window_end.isoformat(),
                table_sizes=[sizes[row.table_name]] if row.table_name in sizes else [],
            ),
        )
    return delivered


def _before_after(summary: str) -> tuple[str, str]:
    """A sandbox summary ("orders: ALL, 6,000 rows -> ref idx_o_phone, 2 rows") as the plan
    before ("orders: ALL, 6,000 rows") and after ("orders: ref idx_o_phone, 2 rows")."""
    before, _, after = summary.partition(" -> ")
    table = before.split(":", 1)[0]
    return before, f"{table}: {after}" if after else ""


def _summary(row: IndexPlan, served: int) -> str:
    """What the plan does in two sentences: its indexes, the queries, rows and writes."""
    plan = row.plan
    adds, drops = len(plan["adds"]), len(plan["drops"])
    parts = [f"{adds} new index{'es' if adds != 1 else ''}"]
    if drops:
        parts.append(f"{drops} dropped")
    text = (
        f"{', '.join(parts)} serving {served} quer{'ies' if served != 1 else 'y'}: estimated "
        f"rows examined {row.rows_before_per_s:,.0f}/s -> {plan['rows_after_per_s']:,.0f}/s, "
        f"{plan['write_entries_per_s']:,.1f} more index entries written/s."
    )
    verdicts = [a["validation"] for a in plan["adds"]]
    if verdicts and all(v == CONFIRMED for v in verdicts):
        text += " Confirmed on the sandbox copy."
    return text


def _table_sizes(document: Mapping[str, Any]) -> dict[str, str]:
    """ "shop.orders: 30,000 rows, 2.1 MB" by table, from the snapshots."""
    sizes = {}
    for name, table in (document.get("tables") or {}).items():
        rows = table.get("rows")
        data = [table.get("data_length"), table.get("index_length")]
        total = sum(d for d in data if isinstance(d, int)) if any(data) else None
        counted = f"{rows:,} rows" if isinstance(rows, int) else "rows unknown"
        sizes[name] = f"{name}: {counted}, {size(total)}"
    return sizes


# --------------------------------------------------------------------------- views


def _out(row: IndexPlan) -> TablePlanOut:
    plan = row.plan
    queries: dict[str, Any] = plan["queries"]

    def served(query_id: str, rows_before: int | None, rows_after: int | None) -> ServedQueryOut:
        fact = queries.get(query_id, {})
        sandbox = fact.get("sandbox")
        return ServedQueryOut(
            query_id=query_id,
            fingerprint=str(fact.get("fingerprint", "")),
            load_share=float(fact.get("load_share", 0.0)),
            calls=float(fact.get("calls", 0.0)),
            rows_examined_per_call=fact.get("rows_examined_per_call"),
            rows_before=rows_before,
            rows_after=rows_after,
            from_example=bool(fact.get("from_example", False)),
            sandbox=SandboxCheckOut(
                **{
                    k: sandbox.get(k)
                    for k in ("improved", "worse", "summary", "rows_before", "rows_after", "error")
                }
            )
            if sandbox
            else None,
        )

    return TablePlanOut(
        id=row.id,
        table=row.table_name,
        ddl=row.ddl,
        signature=row.signature,
        load_share=_load_share(row),
        rows_before_per_s=row.rows_before_per_s,
        rows_after_per_s=float(plan["rows_after_per_s"]),
        write_entries_per_s=float(plan["write_entries_per_s"]),
        adds=[
            PlannedIndexOut(
                name=add["name"],
                definition=add["definition"],
                columns=[SuggestionColumnOut(**c) for c in add["columns"]],
                width_bytes=add["width_bytes"],
                entries_per_s=add["entries_per_s"],
                served=[
                    served(s["query_id"], s["rows_before"], s["rows_after"]) for s in add["served"]
                ],
                validation=add["validation"],
            )
            for add in plan["adds"]
        ],
        drops=[DroppedIndexOut(**d) for d in plan["drops"]],
        rejected=[RejectedIndexOut(**r) for r in plan["rejected"]],
        unserved=[served(q, None, None) for q in plan["unserved"]],
        notes=list(plan["notes"]),
        validation=row.validation,
        computed_at=row.computed_at,
        changed_at=row.changed_at,
    )
