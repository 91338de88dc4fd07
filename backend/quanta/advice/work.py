"""Which queries to advise without being asked: the daily job's top queries per instance,
and the frequent pass's queries that just became heavy (queued for EXPLAIN on the way)."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from quanta.advice import repository
from quanta.core.config import Settings
from quanta.core.db import utcnow
from quanta.diagnostics import service as diagnostics_service
from quanta.diagnostics.models import ExplainRun
from quanta.instances.service import connected_instances
from quanta.notify import service as notify_service
from quanta.notify.events import NEW_SUGGESTION
from quanta.queries import service as queries_service
from quanta.queries.window import TimeWindow

__all__ = ["DAILY_WINDOW", "HOT_WINDOW", "DailyUnit", "daily_work", "hot_work"]

DAILY_WINDOW = timedelta(days=1)
# The frequent pass (hot_work) looks at this past window, and retries a query after it.

HOT_WINDOW = timedelta(hours=1)


@dataclass(frozen=True, slots=True)
class DailyUnit:
    """One instance's share of the daily job: its top queries by load to advise."""

    instance_id: int
    instance: str
    top_queries: tuple[str, ...]


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


def _hot_threshold(session: Session, settings: Settings, instance: str) -> float:
    """The lowest load share a chat channel wants suggestions for on this instance from."""
    shares = [
        channel.min_load_share
        for channel in notify_service.enabled_channels(session=session)
        if NEW_SUGGESTION in channel.events
        and (not channel.instances or instance in channel.instances)
    ]
    return min(shares, default=settings.advice_hot_min_load_share)
