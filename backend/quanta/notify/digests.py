"""Digests and the periodic notify tick: held messages rolled into one digest once a
channel's hourly rate limit frees up, and deliveries whose task was lost enqueued again."""

from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from quanta.core.config import Settings
from quanta.notify import repository
from quanta.notify.dispatch import rate_free_at
from quanta.notify.models import (
    Channel,
    Delivery,
    DeliveryKind,
    DeliveryStatus,
)

DIGEST_EVENT = "digest"


def flush_digests(*, session: Session, settings: Settings, now: datetime) -> list[int]:
    """Roll each channel's held messages into one digest once its rate limit allows one more
    message; the ids of the deliveries to attempt now.

    A lone held message goes out as itself rather than as a digest of one.
    """
    ready: list[int] = []
    for channel_id in repository.channels_with_held(session):
        channel = session.get_one(Channel, channel_id)
        if rate_free_at(session, settings, channel, now) is not None:
            continue
        held = repository.held_deliveries(session, channel_id)
        if len(held) == 1:
            held[0].status, held[0].next_attempt_at = DeliveryStatus.PENDING.value, now
            ready.append(held[0].id)
            continue
        digest = Delivery(
            channel_id=channel_id,
            kind=DeliveryKind.DIGEST.value,
            event=DIGEST_EVENT,
            payload={"items": [{"event": d.event, "notice": d.payload} for d in held]},
            status=DeliveryStatus.PENDING.value,
            attempts=0,
            next_attempt_at=now,
            created_at=now,
        )
        session.add(digest)
        session.flush()
        for delivery in held:
            delivery.status, delivery.digest_id = DeliveryStatus.DIGESTED.value, digest.id
        ready.append(digest.id)
    session.flush()
    return ready


def overdue_deliveries(*, session: Session, settings: Settings, now: datetime) -> list[int]:
    """Pending deliveries whose task was lost (broker down, restart): to enqueue again."""
    cutoff = now - timedelta(seconds=settings.notify_requeue_after_seconds)
    return repository.overdue_pending(session, cutoff)


def notify_tick(*, session: Session, settings: Settings, now: datetime) -> list[int]:
    """The periodic job: digests whose hour has freed up, and lost deliveries; ids to attempt."""
    return flush_digests(session=session, settings=settings, now=now) + overdue_deliveries(
        session=session, settings=settings, now=now
    )
