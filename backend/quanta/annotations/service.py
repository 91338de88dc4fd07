"""Use cases of annotations: create, list, delete, and the impact of the change they mark."""

from collections import defaultdict
from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from quanta.analysis import impact as impact_analysis
from quanta.analysis.histogram import LatencyHistogram
from quanta.analysis.impact import (
    METRICS,
    VERDICT_METRICS,
    ImpactPlan,
    QueryImpact,
    Slot,
    Status,
    Thresholds,
    compare_queries,
    parse_window,
    plan_windows,
)
from quanta.annotations import repository
from quanta.annotations.models import Annotation
from quanta.annotations.schemas import (
    AnnotationImpact,
    AnnotationIn,
    AnnotationOut,
    ImpactRow,
    MetricChangeOut,
    TimeRange,
)
from quanta.auth.service import Principal
from quanta.core import errors
from quanta.core.config import Settings
from quanta.core.db import utcnow
from quanta.instances import service as instances_service
from quanta.notify.events import ImpactNotice
from quanta.notify.publish import publish_impact
from quanta.queries import service as queries_service
from quanta.queries.window import TimeWindow, parse_time, retained_since

# Unknown instance names listed in an error, at most.
MAX_NAMES_SHOWN = 10
# Annotations whose window after ended longer ago than this are not announced any more.
ANNOUNCE_LOOKBACK = timedelta(days=1)

__all__ = [
    "AnnotationNotFound",
    "InvalidAnnotation",
    "NotAllowed",
    "NothingToCompare",
    "annotation_impact",
    "announce_impacts",
    "create_annotation",
    "delete_annotation",
    "list_annotations",
]


class InvalidAnnotation(errors.InvalidRequest):
    """An annotation or impact request that cannot be accepted; the message says why."""


class AnnotationNotFound(errors.NotFound):
    """No annotation has this id."""


class NotAllowed(errors.Forbidden):
    """The caller may not do this to this annotation."""


class NothingToCompare(errors.Conflict):
    """The windows cannot be compared (yet): the message says why and what to do."""


def create_annotation(
    *, session: Session, principal: Principal, data: AnnotationIn, now: datetime | None = None
) -> AnnotationOut:
    """Store an annotation made by ``principal``; time defaults to now."""
    now = now or utcnow()
    time = parse_time(data.time, now=now) if data.time else now
    end_time = parse_time(data.end_time, now=now) if data.end_time else None
    if end_time is not None and end_time <= time:
        raise InvalidAnnotation(
            f"'end_time' ({end_time.isoformat()}) must be after 'time' ({time.isoformat()})."
        )
    names = list(dict.fromkeys(data.instances))
    ids = instances_service.instance_ids_by_name(session=session, names=names)
    unknown = [name for name in names if name not in ids]
    if unknown:
        known = [i.name for i in instances_service.all_instances(session=session)]
        raise InvalidAnnotation(
            f"Unknown instance(s): {', '.join(unknown[:MAX_NAMES_SHOWN])}. Known instances: "
            f"{', '.join(known[:MAX_NAMES_SHOWN]) or 'none yet (an agent creates its instance)'}"
            f"{' ...' if len(known) > MAX_NAMES_SHOWN else ''}; leave 'instances' empty for all."
        )
    annotation = Annotation(
        text=data.text,
        time=time,
        end_time=end_time,
        created_by=principal.name,
        created_by_token_id=principal.token_id,
        created_by_user_id=principal.user_id,
        created_at=now,
    )
    tags = sorted(set(data.tags))
    repository.add_annotation(session, annotation, tags, [ids[name] for name in names])
    return _out(repository.AnnotationRow(annotation, tags, sorted(names)))


def list_annotations(
    *, session: Session, window: TimeWindow, instance: str | None, tags: list[str]
) -> list[AnnotationOut]:
    """Annotations overlapping the window, oldest first.

    ``instance``: those about it or about every instance; ``tags``: those with any of them.
    """
    rows = repository.list_annotations(
        session, start=window.start, end=window.end, instance=instance, tags=tags
    )
    return [_out(row) for row in rows]


def get_annotation(*, session: Session, annotation_id: int) -> AnnotationOut:
    """One annotation."""
    return _out(_find(session, annotation_id))


def delete_annotation(*, session: Session, principal: Principal, annotation_id: int) -> None:
    """Delete an annotation: an admin may delete any; others those they made (same token,
    or same signed-in user, whatever the session)."""
    row = _find(session, annotation_id)
    a = row.annotation
    own = a.created_by_token_id == principal.token_id or (
        principal.user_id is not None and a.created_by_user_id == principal.user_id
    )
    if not (own or principal.allows("admin")):
        raise NotAllowed(
            f"Annotation {annotation_id} was made by '{a.created_by}': only they or an admin "
            "may delete it."
        )
    repository.delete_annotation(session, annotation_id)


def annotation_impact(
    *,
    session: Session,
    settings: Settings,
    annotation_id: int,
    window: str,
    now: datetime | None = None,
) -> AnnotationImpact:
    """Per query, the window before the annotation compared with the one after it.

    The after window starts at ``end_time`` for a ranged annotation. Only the annotation's
    instances count when it names some. Rows are sorted by the absolute change in load.

    Raises:
        InvalidAnnotation: the window is not a length of 5m..7d.
        NothingToCompare: the window after has not started, or the data is gone.
    """
    row = _find(session, annotation_id)
    try:
        length = parse_window(window)
    except ValueError as exc:
        raise InvalidAnnotation(str(exc)) from None
    now = now or utcnow()
    a = row.annotation
    try:
        plan = plan_windows(
            time=a.time,
            end_time=a.end_time,
            window=length,
            now=now,
            retained_since=retained_since(settings=settings, now=now),
            max_slots=settings.annotation_impact_max_slots,
        )
    except impact_analysis.NothingToCompare as exc:  # the pure planner's reason, as a 409
        raise NothingToCompare(str(exc)) from None
    names = instances_service.instance_names_by_id(session=session)
    # Every instance named, even for "all": the bucket tables' keys start with the instance,
    # so the time ranges are then read through the primary key instead of a table scan.
    instance_ids = repository.annotation_instance_ids(session, annotation_id) or list(names)
    slots, instances_seen = _slots_by_query(session, plan, instance_ids)
    slots = _queries_to_compare(session, slots)
    thresholds = Thresholds(
        alpha=settings.annotation_impact_alpha,
        min_relative_change=settings.annotation_impact_min_change,
        min_load_change=settings.annotation_impact_min_load_change,
        min_latency_change=settings.annotation_impact_min_latency_change,
    )
    # Minutes before a query was first seen on these instances (before its instance was
    # monitored, or before it ran) are missing, not zeros: they would dilute the window.
    first_seen = queries_service.first_seen(
        session=session, query_ids=list(slots), instance_ids=instance_ids
    )
    impacts = compare_queries(
        slots,
        slots=plan.slots,
        slot_seconds=plan.slot_seconds,
        thresholds=thresholds,
        observed_from={qid: plan.first_observed(first_seen.get(qid)) for qid in slots},
    )
    minutes = plan.window_seconds // 60
    needed = settings.regression_min_minutes
    note = f"not enough data yet ({minutes} minutes; {needed} needed)" if minutes < needed else None
    ranked = sorted(impacts, key=lambda qid: (-impacts[qid].load_change, qid))
    ranked = ranked[: settings.annotation_impact_max_queries]
    fingerprints = queries_service.fingerprints(session=session, query_ids=ranked)
    queries = []
    for query_id in ranked:
        seen = instances_seen[query_id]
        queries.append(
            _impact_row(
                query_id,
                fingerprints.get(query_id, ""),
                names.get(next(iter(seen))) if len(seen) == 1 else None,
                impacts[query_id],
                verdict=note is None,
            )
        )
    return AnnotationImpact(
        annotation=_out(row),
        window_seconds=plan.window_seconds,
        minutes_needed=needed,
        note=note,
        before=TimeRange(from_=plan.before_start, to=plan.before_end),
        after=TimeRange(from_=plan.after_start, to=plan.after_end),
        queries=queries,
    )


QuerySlots = dict[str, tuple[dict[int, Slot], dict[int, Slot]]]


def _slots_by_query(
    session: Session, plan: ImpactPlan, instance_ids: list[int]
) -> tuple[QuerySlots, dict[str, set[int]]]:
    """Per query, its stored buckets folded into the slots of the two windows (by index),
    and the instances it ran on."""
    slots: QuerySlots = defaultdict(lambda: ({}, {}))
    instances_seen: dict[str, set[int]] = defaultdict(set)
    for b in queries_service.impact_buckets(
        session=session,
        resolution=plan.resolution,
        ranges=[(plan.before_start, plan.before_end), (plan.after_start, plan.after_end)],
        instance_ids=instance_ids,
    ):
        position = plan.slot_of(b.bucket_start)
        if position is None or not b.count:
            continue
        is_after, index = position
        slot = slots[b.query_id][is_after].setdefault(index, Slot())
        slot.add(
            count=b.count,
            query_time=b.query_time_sum,
            rows_examined=b.rows_examined_sum,
            histogram=LatencyHistogram.from_bytes(b.histogram) if b.histogram else None,
        )
        instances_seen[b.query_id].add(b.instance_id)
    return slots, instances_seen


def _queries_to_compare(session: Session, slots: QuerySlots) -> QuerySlots:
    """The queries an impact compares: the one place that chooses them.

    Every query with buckets in the windows except Quanta's own statements (its EXPLAIN,
    probes and polls), as in every other view: the verdicts, the headline counts and the
    chat event alike leave them out.
    """
    own = queries_service.own_queries(session=session, query_ids=list(slots))
    return {query_id: slot for query_id, slot in slots.items() if query_id not in own}


def _find(session: Session, annotation_id: int) -> repository.AnnotationRow:
    row = repository.get_annotation(session, annotation_id)
    if row is None:
        raise AnnotationNotFound(f"No annotation with id {annotation_id}.")
    return row


def _impact_row(
    query_id: str, fingerprint: str, instance: str | None, impact: QueryImpact, *, verdict: bool
) -> ImpactRow:
    """One query's row; without ``verdict`` (too few minutes) its figures and no verdict on a
    change: a query new or gone since the annotation is that whatever the number of minutes
    (it needs no test of significance)."""
    verdict = verdict or impact.status in (Status.NEW, Status.GONE)
    return ImpactRow(
        query_id=query_id,
        fingerprint=fingerprint,
        instance=instance,
        status=impact.status.value if verdict else "not_enough_data",
        verdict=impact.verdict.value if verdict else "not_enough_data",
        metrics={
            name: MetricChangeOut(
                before=m.before,
                after=m.after,
                change=m.change,
                change_pct=m.change_pct,
                p_value=m.p_value,
                significant=m.significant,
            )
            for name in METRICS
            for m in (impact.metrics[name],)
        },
    )


def _out(row: repository.AnnotationRow) -> AnnotationOut:
    a = row.annotation
    return AnnotationOut(
        id=a.id,
        text=a.text,
        tags=row.tags,
        instances=row.instances,
        time=a.time,
        end_time=a.end_time,
        created_by=a.created_by,
        created_at=a.created_at,
    )


def announce_impacts(*, session: Session, settings: Settings, now: datetime) -> list[int]:
    """Send what recent annotations did (regressions and improvements) to the chat channels
    that want it, once per annotation.

    As regressions are: once the window after the annotation holds
    QUANTA_REGRESSION_MIN_MINUTES whole minutes (the window compared grows with it up to
    QUANTA_ANNOTATION_ANNOUNCE_WINDOW), the first impact with a verdict is announced; the
    notify domain sends an annotation's impact to a channel only once. Annotations older than
    the announce window and a day are left. Returns the ids of those announced now or before.
    """
    length = parse_window(settings.annotation_announce_window)
    ready_by = now - timedelta(minutes=settings.regression_min_minutes)
    candidates = repository.list_annotations(
        session, start=now - length - ANNOUNCE_LOOKBACK, end=ready_by, instance=None, tags=()
    )
    announced = []
    for row in candidates:
        if (row.annotation.end_time or row.annotation.time) > ready_by:
            continue  # a ranged annotation still running, or too recent for a verdict
        try:
            impact = annotation_impact(
                session=session,
                settings=settings,
                annotation_id=row.annotation.id,
                window=settings.annotation_announce_window,
                now=now,
            )
        except NothingToCompare:
            continue
        if impact.note is not None:
            continue
        regressions = [_change(q) for q in impact.queries if q.verdict == "regressed"]
        improvements = [_change(q) for q in impact.queries if q.verdict == "improved"]
        if regressions or improvements:
            notice = ImpactNotice(
                annotation_id=row.annotation.id,
                text=row.annotation.text,
                instance_names=list(row.instances),
                regressions=regressions,
                improvements=improvements,
                window_seconds=impact.window_seconds,
            )
            publish_impact(session=session, settings=settings, notice=notice)
            announced.append(row.annotation.id)
    return announced


def _change(row: ImpactRow) -> dict[str, object]:
    """The per-call metric that decided the query's verdict, with its load as context."""
    metrics: dict[str, MetricChangeOut] = {str(k): v for k, v in row.metrics.items()}
    name = next(
        (n for n in VERDICT_METRICS if metrics[n].significant and metrics[n].change),
        VERDICT_METRICS[0],
    )
    decided, load, latency = metrics[name], metrics["load"], metrics["p95_latency"]
    return {
        "query_id": row.query_id,
        "fingerprint": row.fingerprint,
        "instance": row.instance,
        "metric": name,
        "before": decided.before,
        "after": decided.after,
        "change": decided.change_pct,
        "load_before": load.before,
        "load_after": load.after,
        "p95_before": latency.before,
        "p95_after": latency.after,
    }
