"""Use cases of workload index plans: plan an instance's tables, serve the plans, queue a run.

A run for an instance (:func:`plan_instance`) weighs its heaviest query classes of the
window with their tables' snapshots and write rates (:mod:`quanta.indexplan.workload`); the
pure planner (quanta.analysis.advisor.workload) turns that into one plan per table. When the
instance has a sandbox, each plan with DDL is checked whole on a copy of its table and only
what the plans confirm is kept (:mod:`quanta.indexplan.sandbox`). The latest plan per
(instance, table) is stored with its signature, which changes with the DDL
(:mod:`quanta.indexplan.store`); a plan whose signature changed is published to chat as one
message per table, never the same plan twice (:mod:`quanta.indexplan.announce`). Each of the
instance's open suggestions is told what the plan did with it, and the plan's note on an index
it left out names the queries chat already received it for (:mod:`quanta.indexplan.verdicts`).
"""

import logging
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from quanta.advice import service as advice_service
from quanta.advice.schemas import SuggestionColumnOut
from quanta.analysis.advisor import SchemaError, parse_schema
from quanta.analysis.advisor.workload import PlanRules, TablePlan, plan_workload
from quanta.audit.service import Actor
from quanta.core.config import Settings
from quanta.core.db import utcnow
from quanta.core.errors import Unavailable
from quanta.core.tasks import PLAN_INDEXES_TASK, celery_client, enqueue
from quanta.indexplan import repository
from quanta.indexplan.announce import announce
from quanta.indexplan.models import IndexPlan
from quanta.indexplan.sandbox import check_plan
from quanta.indexplan.schemas import (
    DroppedIndexOut,
    IndexPlanList,
    LeftOutIndexOut,
    PlannedIndexOut,
    PlanRequested,
    RejectedIndexOut,
    SandboxCheckOut,
    ServedQueryOut,
    TablePlanOut,
)
from quanta.indexplan.store import load_share, store
from quanta.indexplan.verdicts import chat_notes, verdicts
from quanta.indexplan.workload import gather_workload
from quanta.instances.service import (
    InstanceNotFound,
    NoConnection,
    find_instance,
    require_connection,
)
from quanta.notify import service as notify_service
from quanta.queries.window import TimeWindow

__all__ = [
    "InstanceNotFound",
    "NoConnection",
    "PlanRun",
    "QueueUnavailable",
    "instance_plans",
    "plan_instance",
    "replan",
    "request_plans",
]

log = logging.getLogger(__name__)


class QueueUnavailable(Unavailable):
    """The task could not be handed to the broker."""


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
    instance = find_instance(session=session, instance_id=instance_id)
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
    instance = find_instance(session=session, instance_id=instance_id)
    require_connection(settings, instance)  # a missing or unusable DSN is said now, not later
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


def replan(*, settings: Settings, instance_id: int) -> bool:
    """Queue a plan of the instance, whose plan went stale (a suggestion was just applied);
    False when the broker is down (logged: the daily run plans it anyway)."""
    return enqueue(
        settings, PLAN_INDEXES_TASK, [instance_id], otherwise="the daily run plans it anyway"
    )


# --------------------------------------------------------------------------- runs


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
    instance = find_instance(session=session, instance_id=instance_id)
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
    checked = [
        check_plan(
            session=session,
            settings=settings,
            instance=instance,
            actor=actor,
            plan=plan,
            workload=workload,
        )
        for plan in plans
    ]
    suggestions = advice_service.instance_suggestions(session=session, instance_id=instance.id)
    in_chat = notify_service.suggestions_in_chat(
        session=session, suggestion_ids=[s.id for s in suggestions]
    )
    checked = [replace(item, plan=chat_notes(item.plan, suggestions, in_chat)) for item in checked]
    stored, changed = store(session, instance.id, checked, workload, now)
    advice_service.record_plan_verdicts(
        session=session,
        instance_id=instance.id,
        verdicts=verdicts(stored, suggestions, workload.document["tables"], now),
    )
    announced = announce(session, settings, instance, stored, changed, workload.document)
    return PlanRun(
        instance_id=instance.id,
        plans=tuple(stored),
        changed=tuple(changed),
        announced=tuple(announced),
    )


# --------------------------------------------------------------------------- views


def _out(row: IndexPlan) -> TablePlanOut:
    plan = row.plan
    queries: dict[str, Any] = plan["queries"]

    def served(
        query_id: str,
        rows_before: int | None,
        rows_after: int | None,
        measured: bool = False,
        estimated_before: int | None = None,
        estimated_after: int | None = None,
    ) -> ServedQueryOut:
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
            measured=measured,
            estimated_before=estimated_before,
            estimated_after=estimated_after,
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
        load_share=load_share(row),
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
                    served(
                        s["query_id"],
                        s["rows_before"],
                        s["rows_after"],
                        bool(s.get("measured", False)),
                        s.get("estimated_before"),
                        s.get("estimated_after"),
                    )
                    for s in add["served"]
                ],
                validation=add["validation"],
            )
            for add in plan["adds"]
        ],
        drops=[DroppedIndexOut(**d) for d in plan["drops"]],
        rejected=[RejectedIndexOut(**r) for r in plan["rejected"]],
        unserved=[served(q, None, None) for q in plan["unserved"]],
        left_out=[LeftOutIndexOut(**{"in_chat": [], **item}) for item in plan.get("left_out", [])],
        notes=list(plan["notes"]),
        validation=row.validation,
        computed_at=row.computed_at,
        changed_at=row.changed_at,
    )
