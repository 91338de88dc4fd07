"""Statements on channels, deliveries and attempts."""

from collections import defaultdict
from collections.abc import Collection
from datetime import datetime
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from quanta.notify.models import (
    Channel,
    Delivery,
    DeliveryAttempt,
    DeliveryKind,
    DeliveryStatus,
)

# Kinds that count against a channel's hourly limit (a test message does not).
RATE_LIMITED_KINDS = (DeliveryKind.MESSAGE.value, DeliveryKind.DIGEST.value)


def list_channels(session: Session) -> list[Channel]:
    """Every channel, by name."""
    return list(session.scalars(select(Channel).order_by(Channel.name)))


def enabled_channels(session: Session) -> list[Channel]:
    """Channels that receive messages."""
    return list(session.scalars(select(Channel).where(Channel.enabled).order_by(Channel.id)))


def find_channel_by_name(session: Session, name: str) -> Channel | None:
    """The channel called `name`, if any."""
    return session.scalars(select(Channel).where(Channel.name == name)).one_or_none()


def find_delivery(
    session: Session,
    *,
    channel_id: int,
    content_hash: str,
    suggestion_id: int | None = None,
    annotation_id: int | None = None,
    plan_id: int | None = None,
    regression_id: int | None = None,
) -> Delivery | None:
    """The delivery of this suggestion (annotation, plan, regression) version to this
    channel, if queued."""
    statement = select(Delivery).where(
        Delivery.channel_id == channel_id, Delivery.content_hash == content_hash
    )
    if suggestion_id is not None:
        statement = statement.where(Delivery.suggestion_id == suggestion_id)
    elif regression_id is not None:
        statement = statement.where(Delivery.regression_id == regression_id)
    elif plan_id is not None:
        # A plan's hash names its instance and table: a plan row deleted and planned again
        # (a table gone and back) with the same DDL is still the same plan.
        statement = statement.where(Delivery.plan_id.is_not(None))
    else:
        statement = statement.where(Delivery.annotation_id == annotation_id)
    return session.scalars(statement).one_or_none()


def claim_attempt(session: Session, delivery_id: int, *, seen_attempts: int) -> bool:
    """Count an attempt on a pending delivery unless another worker already did.

    The attempt counter is the optimistic lock: a duplicate task (at-least-once delivery,
    a re-enqueue by the tick job) finds it moved on and sends nothing. On PostgreSQL the
    second writer waits on the row lock until the first commits, then matches no row.
    """
    result = session.execute(
        update(Delivery)
        .where(
            Delivery.id == delivery_id,
            Delivery.status == DeliveryStatus.PENDING.value,
            Delivery.attempts == seen_attempts,
        )
        .values(attempts=Delivery.attempts + 1)
        .execution_options(synchronize_session=False)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


def sent_since(session: Session, channel_id: int, since: datetime) -> list[datetime]:
    """When the channel's rate-limited messages went out after `since`, oldest first."""
    return list(
        session.scalars(
            select(Delivery.sent_at)
            .where(
                Delivery.channel_id == channel_id,
                Delivery.kind.in_(RATE_LIMITED_KINDS),
                Delivery.status == DeliveryStatus.SENT.value,
                Delivery.sent_at > since,
            )
            .order_by(Delivery.sent_at)
        )
    )


def held_deliveries(session: Session, channel_id: int) -> list[Delivery]:
    """The channel's messages held back by its rate limit, oldest first."""
    return list(
        session.scalars(
            select(Delivery)
            .where(Delivery.channel_id == channel_id, Delivery.status == DeliveryStatus.HELD.value)
            .order_by(Delivery.id)
        )
    )


def has_held(session: Session, channel_id: int) -> bool:
    """Whether the channel has messages waiting for a digest."""
    found = session.scalars(
        select(Delivery.id)
        .where(Delivery.channel_id == channel_id, Delivery.status == DeliveryStatus.HELD.value)
        .limit(1)
    ).first()
    return found is not None


def channels_with_held(session: Session) -> list[int]:
    """Ids of channels with held messages."""
    return list(
        session.scalars(
            select(Delivery.channel_id)
            .where(Delivery.status == DeliveryStatus.HELD.value)
            .distinct()
            .order_by(Delivery.channel_id)
        )
    )


def overdue_pending(session: Session, due_before: datetime) -> list[int]:
    """Pending deliveries that should have been attempted before `due_before`."""
    return list(
        session.scalars(
            select(Delivery.id)
            .where(
                Delivery.status == DeliveryStatus.PENDING.value,
                or_(Delivery.next_attempt_at.is_(None), Delivery.next_attempt_at < due_before),
                Delivery.created_at < due_before,
            )
            .order_by(Delivery.id)
        )
    )


def channel_deliveries(
    session: Session, channel_id: int, *, status: str | None, limit: int
) -> list[Delivery]:
    """The channel's deliveries, newest first."""
    statement = select(Delivery).where(Delivery.channel_id == channel_id)
    if status is not None:
        statement = statement.where(Delivery.status == status)
    return list(session.scalars(statement.order_by(Delivery.id.desc()).limit(limit)))


def attempts_of(session: Session, delivery_ids: list[int]) -> dict[int, list[DeliveryAttempt]]:
    """The attempts of these deliveries, oldest first, by delivery id."""
    found: dict[int, list[DeliveryAttempt]] = defaultdict(list)
    if not delivery_ids:
        return found
    rows = session.scalars(
        select(DeliveryAttempt)
        .where(DeliveryAttempt.delivery_id.in_(delivery_ids))
        .order_by(DeliveryAttempt.id)
    )
    for attempt in rows:
        found[attempt.delivery_id].append(attempt)
    return found


def delivered_payloads(session: Session, suggestion_ids: Collection[int]) -> list[dict[str, Any]]:
    """The notices of the suggestion deliveries of these ids that went out (sent, or inside
    a digest)."""
    if not suggestion_ids:
        return []
    delivered = (DeliveryStatus.SENT.value, DeliveryStatus.DIGESTED.value)
    return [
        dict(delivery.payload)
        for delivery in session.scalars(
            select(Delivery).where(
                Delivery.suggestion_id.in_(list(suggestion_ids)),
                Delivery.status.in_(delivered),
            )
        )
    ]


def channels_sent(session: Session, suggestion_id: int) -> list[int]:
    """The channels a suggestion went out to (on its own or in a digest)."""
    stmt = (
        select(Delivery.channel_id)
        .where(
            Delivery.suggestion_id == suggestion_id,
            Delivery.event == "new_suggestion",
            Delivery.status.in_(("sent", "digested")),
        )
        .distinct()
    )
    return list(session.scalars(stmt))


def has_event(session: Session, *, suggestion_id: int, event: str) -> bool:
    """Whether any delivery of ``event`` about this suggestion exists."""
    stmt = (
        select(Delivery.id)
        .where(Delivery.suggestion_id == suggestion_id, Delivery.event == event)
        .limit(1)
    )
    return session.scalar(stmt) is not None
