"""Publishing events: a published event becomes one `Delivery` per matching channel
(deduplicated by content hash), enqueued on the `notify` queue after the commit."""

import hashlib
import json
from collections.abc import Callable, Collection, Mapping, Sequence
from functools import cache

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from quanta.core.config import Settings
from quanta.core.db import utcnow
from quanta.core.tasks import DELIVER_NOTIFICATION_TASK, enqueue, enqueue_after_commit
from quanta.instances.service import labels_by_name
from quanta.notify import repository
from quanta.notify.events import (
    ANNOTATION_IMPACT,
    INDEX_PLAN,
    INDEX_REVIEW,
    NEW_SUGGESTION,
    REGRESSION,
    SUGGESTION_APPLIED,
    EventType,
    ImpactNotice,
    OutcomeNotice,
    PlanNotice,
    RegressionNotice,
    ReviewNotice,
    SuggestionNotice,
)
from quanta.notify.models import (
    Channel,
    Delivery,
    DeliveryKind,
    DeliveryStatus,
)
from quanta.queries.tags import query_tags

# What happens to a delivery whose task could not be queued (the broker is down).
_TICK_RETRIES = "the notify tick retries them"

# What a channel limited to tags or labels is matched against: per (query, instance) an
# event is about, the query's tags there (key -> values) and the instance's labels.
Scope = list[tuple[Mapping[str, Collection[str]], Mapping[str, str]]]


def in_scope(channel: Channel, scope: Scope) -> bool:
    """Whether one (query, instance) of the event has every tag and label the channel asks
    for (a query whose statements carried several values of a key matches each of them)."""
    return any(
        all(value in tags.get(key, ()) for key, value in (channel.tags or {}).items())
        and all(labels.get(key) == value for key, value in (channel.labels or {}).items())
        for tags, labels in scope
    )


def query_scope(session: Session, query_ids: Sequence[str], instances: Sequence[str]) -> Scope:
    """The scope of an event about these queries on these instances (none named: any)."""
    found = labels_by_name(session=session, names=instances)
    ids = [instance_id for instance_id, _ in found.values()]
    tags = query_tags(session=session, query_ids=list(query_ids), instance_ids=ids)
    return [
        (tags.get((query_id, instance_id), {}), labels)
        for instance_id, labels in found.values()
        for query_id in query_ids
    ]


def instance_scope(session: Session, instances: Sequence[str]) -> Scope:
    """The scope of an event about instances, not queries: no tags."""
    found = labels_by_name(session=session, names=instances)
    return [({}, labels) for _, labels in found.values()]


def publish_suggestion(
    *, session: Session, settings: Settings, notice: SuggestionNotice
) -> list[int]:
    """Queue the suggestion for every channel whose filters match; the new delivery ids.

    A channel that already has this suggestion with the same content_hash gets nothing: only a
    changed suggestion is sent again. Delivery tasks are enqueued after the commit.
    """
    return _publish(
        session,
        settings,
        event=NEW_SUGGESTION,
        payload=notice.to_dict(),
        content_hash=notice.content_hash,
        matches=lambda channel: suggestion_matches(channel, notice),
        scope=lambda: query_scope(session, [notice.query_id], [notice.instance]),
        suggestion_id=notice.suggestion_id,
    )


def publish_impact(*, session: Session, settings: Settings, notice: ImpactNotice) -> list[int]:
    """Queue an annotation's regressions and improvements for the channels subscribed to
    them; the delivery ids.

    Nothing is sent when nothing changed: a message with nothing in it is noise.
    """
    if not notice.regressions and not notice.improvements:
        return []
    return _publish(
        session,
        settings,
        event=ANNOTATION_IMPACT,
        payload=notice.to_dict(),
        content_hash=impact_hash(notice),
        matches=lambda channel: impact_matches(channel, notice),
        scope=lambda: query_scope(session, _impact_queries(notice), notice.instance_names),
        annotation_id=notice.annotation_id,
    )


def publish_plan(*, session: Session, settings: Settings, notice: PlanNotice) -> list[int]:
    """Queue a table's index plan for every channel whose filters match; the delivery ids.

    A channel gets a plan once per (instance, table, signature): never the same plan twice,
    even when its row was deleted and planned again. Rate limits, quiet hours and digests
    apply as to every message.
    """
    return _publish(
        session,
        settings,
        event=INDEX_PLAN,
        payload=notice.to_dict(),
        content_hash=plan_hash(notice),
        matches=lambda channel: plan_matches(channel, notice),
        scope=lambda: instance_scope(session, [notice.instance]),
        plan_id=notice.plan_id,
    )


def publish_review(*, session: Session, settings: Settings, notice: ReviewNotice) -> list[int]:
    """Queue an instance's new index review findings for the channels taking
    ``index_review`` whose instance filter lets it through; the delivery ids. Nothing is
    sent without findings; the same list never twice to one channel (content hash)."""
    if not notice.findings:
        return []
    return _publish(
        session,
        settings,
        event=INDEX_REVIEW,
        payload=notice.to_dict(),
        content_hash=notice.content_hash,
        matches=lambda channel: review_matches(channel, notice),
        scope=lambda: instance_scope(session, [notice.instance]),
    )


def review_matches(channel: Channel, notice: ReviewNotice) -> bool:
    """The channel takes index reviews, for this instance (no load share: a finding has none)."""
    return INDEX_REVIEW in channel.events and (
        not channel.instances or notice.instance in channel.instances
    )


def publish_regression(
    *, session: Session, settings: Settings, notice: RegressionNotice, event: EventType = REGRESSION
) -> list[int]:
    """Queue a regression (``event`` regression) or its end (regression_resolved) for every
    channel taking that event whose filters match; the delivery ids. Each is sent to a
    channel once, whatever the number of calls."""
    return _publish(
        session,
        settings,
        event=event,
        payload=notice.to_dict(),
        content_hash=hashlib.sha256(f"{event}:{notice.regression_id}".encode()).hexdigest(),
        matches=lambda channel: (
            event in channel.events
            and (not channel.instances or notice.instance in channel.instances)
            and notice.load_share >= channel.min_load_share
        ),
        scope=lambda: query_scope(session, [notice.query_id], [notice.instance]),
        regression_id=notice.regression_id,
    )


def publish_outcome(*, session: Session, settings: Settings, notice: OutcomeNotice) -> list[int]:
    """Queue what an applied suggestion did for the channels the suggestion was sent to
    (whatever events they take now: it answers their message); once per channel."""
    sent_to = set(repository.channels_sent(session, notice.suggestion_id))
    return _publish(
        session,
        settings,
        event=SUGGESTION_APPLIED,
        payload=notice.to_dict(),
        content_hash=hashlib.sha256(f"applied:{notice.suggestion_id}".encode()).hexdigest(),
        matches=lambda channel: channel.id in sent_to,
        suggestion_id=notice.suggestion_id,
    )


def _publish(
    session: Session,
    settings: Settings,
    *,
    event: str,
    payload: dict[str, object],
    content_hash: str,
    matches: Callable[[Channel], bool],
    scope: Callable[[], Scope] | None = None,
    **subject: int,
) -> list[int]:
    """Queue one event for every enabled channel it matches that does not have this version
    of it yet (``subject``: its suggestion_id, annotation_id, plan_id or regression_id; none
    for an index review, whose content hash names its instance); the delivery ids,
    enqueued after the commit. A channel limited to tags or labels takes it only when
    ``scope`` (read once, and only for such a channel) is in its limits."""
    created: list[int] = []
    scoped = cache(scope) if scope is not None else None
    for channel in repository.enabled_channels(session):
        if not matches(channel):
            continue
        if (channel.tags or channel.labels) and (scoped is None or not in_scope(channel, scoped())):
            continue
        known = repository.find_delivery(
            session, channel_id=channel.id, content_hash=content_hash, **subject
        )
        if known is not None:
            continue
        delivery_id = _queue(
            session, channel, event=event, payload=payload, content_hash=content_hash, **subject
        )
        if delivery_id is not None:
            created.append(delivery_id)
    enqueue_after_commit(
        session,
        settings,
        DELIVER_NOTIFICATION_TASK,
        *([i] for i in created),
        otherwise=_TICK_RETRIES,
    )
    return created


def plan_hash(notice: PlanNotice) -> str:
    """What makes a plan the same plan: its instance, table and signature (its DDL)."""
    content = json.dumps([notice.instance_id, notice.table, notice.signature])
    return hashlib.sha256(content.encode()).hexdigest()


def plan_matches(channel: Channel, notice: PlanNotice) -> bool:
    """The channel's filters let this plan through: event, instance, load share served."""
    return (
        INDEX_PLAN in channel.events
        and (not channel.instances or notice.instance in channel.instances)
        and notice.load_share >= channel.min_load_share
    )


def suggestion_matches(channel: Channel, notice: SuggestionNotice) -> bool:
    """The channel's filters let this suggestion through: event, instance, load share; a
    channel taking index plans gets one message per table instead of one per query."""
    return (
        NEW_SUGGESTION in channel.events
        and INDEX_PLAN not in channel.events
        and (not channel.instances or notice.instance in channel.instances)
        and notice.load_share >= channel.min_load_share
    )


def impact_matches(channel: Channel, notice: ImpactNotice) -> bool:
    """The channel takes impacts, and the annotation covers one of its instances."""
    if ANNOTATION_IMPACT not in channel.events:
        return False
    if not channel.instances or not notice.instance_names:  # either side means "all"
        return True
    return bool(set(channel.instances) & set(notice.instance_names))


def _impact_queries(notice: ImpactNotice) -> list[str]:
    """The queries an impact lists."""
    found = {
        str(change["query_id"])
        for change in [*notice.regressions, *notice.improvements]
        if change.get("query_id")
    }
    return sorted(found)


def impact_hash(notice: ImpactNotice) -> str:
    """An annotation's impact is announced once: its first verdicts, not every window after."""
    return hashlib.sha256(f"impact:{notice.annotation_id}".encode()).hexdigest()


def _queue(
    session: Session,
    channel: Channel,
    *,
    event: str,
    payload: dict[str, object],
    content_hash: str,
    suggestion_id: int | None = None,
    annotation_id: int | None = None,
    plan_id: int | None = None,
    regression_id: int | None = None,
) -> int | None:
    now = utcnow()
    delivery = Delivery(
        channel_id=channel.id,
        kind=DeliveryKind.MESSAGE.value,
        event=event,
        suggestion_id=suggestion_id,
        annotation_id=annotation_id,
        plan_id=plan_id,
        regression_id=regression_id,
        content_hash=content_hash,
        payload=payload,
        status=DeliveryStatus.PENDING.value,
        attempts=0,
        next_attempt_at=now,
        created_at=now,
    )
    try:
        with session.begin_nested():
            session.add(delivery)
    except IntegrityError:
        return None  # published concurrently: the unique key kept one
    return delivery.id


def enqueue_deliveries(
    *, settings: Settings, delivery_ids: Sequence[int], countdown: float | None = None
) -> None:
    """Ask workers to attempt these deliveries; if the broker is down the tick job will."""
    enqueue(
        settings,
        DELIVER_NOTIFICATION_TASK,
        *([i] for i in delivery_ids),
        countdown=countdown,
        otherwise=_TICK_RETRIES,
    )
