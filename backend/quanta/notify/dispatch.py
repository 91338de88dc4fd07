"""The delivery state machine: `attempt_delivery` makes one HTTP attempt, records it and
returns when to try again; the Celery task only re-enqueues itself for then.

Rules applied at attempt time, in order: quiet hours (wait until they end), the hourly rate
limit (hold the message for the next digest), then the POST and its retry policy.
"""

from datetime import datetime, timedelta

from sqlalchemy.orm import Session
from tenacity import RetryCallState, Retrying, wait_exponential

from quanta.core.config import Settings
from quanta.core.crypto import SecretUnreadable, decrypt
from quanta.core.observability import record_notification_attempt
from quanta.notify import formats, repository
from quanta.notify.delivery import HttpResult, Transport, post_message, retry_after_seconds
from quanta.notify.models import (
    Channel,
    Delivery,
    DeliveryAttempt,
    DeliveryKind,
    DeliveryStatus,
)

RATE_WINDOW = timedelta(hours=1)


def quiet_until(channel: Channel, now: datetime) -> datetime | None:
    """The end of the channel's quiet hours when `now` is inside them, else None.

    Hours are UTC, start inclusive, end exclusive; 22..6 spans midnight.
    """
    start, end = channel.quiet_start_hour, channel.quiet_end_hour
    if start is None or end is None:
        return None
    hour = now.hour
    inside = start <= hour < end if start < end else hour >= start or hour < end
    if not inside:
        return None
    until = now.replace(hour=end, minute=0, second=0, microsecond=0)
    return until if until > now else until + timedelta(days=1)


def backoff_seconds(settings: Settings, failed_attempts: int) -> float:
    """Exponential delay before retry number `failed_attempts` (1: base, then doubling).

    tenacity's wait_exponential computes it, so the policy reads like the retry policies
    elsewhere; no jitter: a channel's deliveries are few, and fixed delays are testable.
    """
    state = RetryCallState(Retrying(), None, (), {})
    state.attempt_number = failed_attempts
    wait = wait_exponential(
        multiplier=settings.notify_backoff_base_seconds, max=settings.notify_backoff_max_seconds
    )
    return float(wait(state))


def attempt_delivery(
    session: Session,
    settings: Settings,
    delivery_id: int,
    now: datetime,
    transport: Transport = post_message,
) -> datetime | None:
    """Make the delivery's next attempt if it is due; when to try again, or None when done.

    A time means "call again then": a retry, the end of quiet hours, the hour freeing up for
    a digest. None when this call leaves nothing to schedule: the delivery was sent, failed,
    was held for a digest, is not due yet (another task owns that) or another worker is on it.
    """
    delivery = session.get(Delivery, delivery_id)
    if delivery is None or delivery.status != DeliveryStatus.PENDING.value:
        return None
    if delivery.next_attempt_at is not None and delivery.next_attempt_at > now:
        # An early duplicate (a broker redelivery): the task that set next_attempt_at is
        # already scheduled for it, so this one ends rather than start a second chain.
        return None
    channel = session.get_one(Channel, delivery.channel_id)
    if not channel.enabled:
        delivery.status = DeliveryStatus.CANCELLED.value
        delivery.last_error = "The channel was disabled before this message went out."
        delivery.next_attempt_at = None
        return None
    quiet_end = quiet_until(channel, now)
    if quiet_end is not None:
        delivery.next_attempt_at = quiet_end
        return quiet_end
    if delivery.kind == DeliveryKind.MESSAGE.value:
        # Messages keep their order: once some are held, later ones join them in the digest.
        if repository.has_held(session, channel.id) or rate_free_at(
            session, settings, channel, now
        ):
            delivery.status = DeliveryStatus.HELD.value
            delivery.next_attempt_at = None
            return None
    elif delivery.kind == DeliveryKind.DIGEST.value:
        free_at = rate_free_at(session, settings, channel, now)
        if free_at is not None:
            delivery.next_attempt_at = free_at
            return free_at
    if not repository.claim_attempt(session, delivery.id, seen_attempts=delivery.attempts):
        return None
    session.refresh(delivery)
    try:
        body = _build(settings, channel, delivery)
    except (TypeError, ValueError) as exc:  # a stored notice this version cannot render
        result = HttpResult(None, f"Cannot build the message: {exc}", None, "", 0)
        record(session, delivery, result, now=now, next_retry_at=None)
        _fail(delivery, result)
        return None
    result = post(settings, channel, body, transport)
    return _settle(session, settings, delivery, result, now)


def _settle(
    session: Session, settings: Settings, delivery: Delivery, result: HttpResult, now: datetime
) -> datetime | None:
    """Record the attempt and move the delivery on: sent, retried later, or failed."""
    next_at = _next_step(session, settings, delivery, result, now)
    outcome = {DeliveryStatus.SENT.value: "sent", DeliveryStatus.FAILED.value: "failed"}
    channel = session.get_one(Channel, delivery.channel_id)  # loaded already by the caller
    record_notification_attempt(
        channel_type=channel.type, outcome=outcome.get(delivery.status, "retry")
    )
    return next_at


def _next_step(
    session: Session, settings: Settings, delivery: Delivery, result: HttpResult, now: datetime
) -> datetime | None:
    if result.ok:
        record(session, delivery, result, now=now, next_retry_at=None)
        delivery.status, delivery.sent_at = DeliveryStatus.SENT.value, now
        delivery.next_attempt_at, delivery.last_error = None, None
        return None
    if not result.retryable or delivery.attempts >= settings.notify_max_attempts:
        record(session, delivery, result, now=now, next_retry_at=None)
        _fail(delivery, result)
        if result.retryable:
            delivery.last_error = (
                f"Gave up after {delivery.attempts} attempts; last: {result.error}"
            )
        return None
    wait = backoff_seconds(settings, delivery.attempts)
    if result.status_code == 429:
        asked = retry_after_seconds(result, now)
        if asked is not None:
            wait = min(asked, settings.notify_retry_after_max_seconds)
    next_at = now + timedelta(seconds=wait)
    record(session, delivery, result, now=now, next_retry_at=next_at)
    delivery.next_attempt_at, delivery.last_error = next_at, result.error
    return next_at


def _fail(delivery: Delivery, result: HttpResult) -> None:
    delivery.status = DeliveryStatus.FAILED.value
    delivery.last_error = result.error
    delivery.next_attempt_at = None


def record(
    session: Session,
    delivery: Delivery,
    result: HttpResult,
    *,
    now: datetime,
    next_retry_at: datetime | None,
) -> None:
    """Store one attempt's outcome on the delivery and its attempt history."""
    session.add(
        DeliveryAttempt(
            delivery_id=delivery.id,
            attempted_at=now,
            status_code=result.status_code,
            error=result.error,
            duration_ms=result.duration_ms,
            next_retry_at=next_retry_at,
        )
    )


def post(
    settings: Settings, channel: Channel, body: dict[str, object], transport: Transport
) -> HttpResult:
    """POST a message body to the channel's URL (pinned to a checked address)."""
    try:
        url = decrypt(settings, channel.url_encrypted)
    except SecretUnreadable as exc:
        return HttpResult(None, str(exc), None, "", 0)
    return transport(
        channel_type=channel.type,
        url=url,
        body=body,
        timeout=settings.notify_timeout_seconds,
        allow_private=settings.allow_private_webhooks,
    )


def _build(settings: Settings, channel: Channel, delivery: Delivery) -> dict[str, object]:
    if delivery.kind == DeliveryKind.DIGEST.value:
        items = delivery.payload.get("items", [])
        assert isinstance(items, list)
        held = [(str(item["event"]), dict(item["notice"])) for item in items]
        return formats.digest_message(
            channel.type, held, settings.link_base, settings.notify_max_per_hour
        )
    return formats.event_message(channel.type, delivery.event, delivery.payload, settings.link_base)


def rate_free_at(
    session: Session, settings: Settings, channel: Channel, now: datetime
) -> datetime | None:
    """None when the channel may send now; else when its hourly limit frees a slot."""
    sent = repository.sent_since(session, channel.id, now - RATE_WINDOW)
    if len(sent) < settings.notify_max_per_hour:
        return None
    # The slot frees when enough of the window's messages have aged out of it.
    oldest_blocking = sent[len(sent) - settings.notify_max_per_hour]
    return oldest_blocking + RATE_WINDOW
