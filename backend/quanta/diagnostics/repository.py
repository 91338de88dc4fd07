"""Statements on EXPLAIN and profile runs."""

from collections.abc import Sequence
from datetime import datetime
from typing import TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session

from quanta.diagnostics.models import ExplainRun, ProfileRun, RunStatus

RunModel = type[ExplainRun] | type[ProfileRun]
Run = ExplainRun | ProfileRun
R = TypeVar("R", ExplainRun, ProfileRun)


def get_run(session: Session, model: type[R], run_id: int) -> R | None:
    """The run with this id."""
    return session.get(model, run_id)


def latest_ok_before(
    session: Session, query_id: str, instance_id: int, before: datetime
) -> ExplainRun | None:
    """The newest successful EXPLAIN of the query on the instance taken before ``before``."""
    return session.scalars(
        select(ExplainRun)
        .where(
            ExplainRun.query_id == query_id,
            ExplainRun.instance_id == instance_id,
            ExplainRun.status == RunStatus.OK.value,
            ExplainRun.taken_at < before,
        )
        .order_by(ExplainRun.taken_at.desc())
        .limit(1)
    ).first()


def latest_run(
    session: Session, model: type[R], query_id: str, instance_id: int, *, finished: bool
) -> R | None:
    """The newest run of the query on the instance: finished ones, or queued ones."""
    statuses = (
        [s.value for s in RunStatus if s is not RunStatus.QUEUED]
        if finished
        else [RunStatus.QUEUED.value]
    )
    return session.scalars(
        select(model)
        .where(
            model.query_id == query_id,
            model.instance_id == instance_id,
            model.status.in_(statuses),
        )
        .order_by(model.id.desc())
        .limit(1)
    ).first()


def queued_since(
    session: Session, model: type[R], query_id: str, instance_id: int, since: datetime
) -> R | None:
    """A run of the query on the instance still queued that was requested after ``since``."""
    return session.scalars(
        select(model)
        .where(
            model.query_id == query_id,
            model.instance_id == instance_id,
            model.status == RunStatus.QUEUED.value,
            model.requested_at >= since,
        )
        .order_by(model.id.desc())
        .limit(1)
    ).first()


def queries_with_runs_since(
    session: Session, model: RunModel, instance_id: int, query_ids: Sequence[str], since: datetime
) -> set[str]:
    """Those of ``query_ids`` with a run on the instance requested after ``since``."""
    if not query_ids:
        return set()
    return set(
        session.scalars(
            select(model.query_id)
            .where(
                model.instance_id == instance_id,
                model.query_id.in_(query_ids),
                model.requested_at >= since,
            )
            .distinct()
        )
    )
