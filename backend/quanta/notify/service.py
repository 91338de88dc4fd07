"""Use cases of chat notification: channels, publishing events, delivering messages.

A published event becomes one `Delivery` per matching channel (deduplicated by content hash),
enqueued on the `notify` queue after the commit. `attempt_delivery` makes one HTTP attempt,
records it and returns when to try again; the Celery task only re-enqueues itself for then.
Rules applied at attempt time, in order: quiet hours (wait until they end), the hourly rate
limit (hold the message for the next digest), then the POST and its retry policy.
"""

import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from tenacity import RetryCallState, Retrying, wait_exponential

from quanta.audit.service import field_changes
from quanta.core.config import Settings
from quanta.core.crypto import SecretUnreadable, decrypt, encrypt
from quanta.core.db import run_after_commit, utcnow
from quanta.core.observability import record_notification_attempt
from quanta.core.tasks import DELIVER_NOTIFICATION_TASK, celery_client
from quanta.notify import formats, repository
from quanta.notify.delivery import HttpResult, Transport, post_message, retry_after_seconds
from quanta.notify.events import (
    ANNOTATION_IMPACT,
    INDEX_PLAN,
    NEW_SUGGESTION,
    ImpactNotice,
    PlanNotice,
    SuggestionNotice,
)
from quanta.notify.formats.common import shorten
from quanta.notify.models import (
    Channel,
    Delivery,
    DeliveryAttempt,
    DeliveryKind,
    DeliveryStatus,
)
from quanta.notify.schemas import (
    AttemptOut,
    ChannelCreate,
    ChannelOut,
    ChannelTestResult,
    ChannelUpdate,
    DeliveryOut,
)
from quanta.notify.targets import RefusedTarget, check_target

log = logging.getLogger(__name__)

RATE_WINDOW = timedelta(hours=1)
DIGEST_EVENT = "digest"
TEST_EVENT = "test"


class ChannelNotFound(Exception):
    """No channel has this id."""


class ChannelConflict(Exception):
    """Another channel already has this name."""


class InvalidChannel(Exception):
    """The channel's settings contradict each other."""


# --- channels ------------------------------------------------------------------------------


def redact_url(url: str) -> str:
    """The webhook URL without its secret part: scheme, host and port, then "/…".

    >>> redact_url("https://hooks.slack.com/services/T0/B0/XXXX")
    'https://hooks.slack.com/…'
    """
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}/…"


def list_channels(*, session: Session) -> list[ChannelOut]:
    """Every channel, by name."""
    return [_channel_out(channel) for channel in repository.list_channels(session)]


def get_channel(*, session: Session, channel_id: int) -> ChannelOut:
    """One channel."""
    return _channel_out(_channel(session, channel_id))


def create_channel(*, session: Session, settings: Settings, data: ChannelCreate) -> ChannelOut:
    """Register a channel; its webhook URL is stored encrypted."""
    if repository.find_channel_by_name(session, data.name) is not None:
        raise ChannelConflict(f"A channel named '{data.name}' exists; pick another name.")
    _check_url(settings, data.url)
    now = utcnow()
    channel = Channel(
        name=data.name,
        type=data.type.value,
        url_encrypted=encrypt(settings, data.url),
        url_redacted=redact_url(data.url),
        instances=sorted(set(data.instances)),
        min_load_share=data.min_load_share,
        events=sorted(set(data.events)),
        quiet_start_hour=data.quiet_start_hour,
        quiet_end_hour=data.quiet_end_hour,
        enabled=data.enabled,
        created_at=now,
        updated_at=now,
    )
    try:
        with session.begin_nested():
            session.add(channel)
    except IntegrityError as exc:  # created concurrently under the same name
        raise ChannelConflict(f"A channel named '{data.name}' exists; pick another name.") from exc
    return _channel_out(channel)


@dataclass(frozen=True, slots=True)
class ChannelChanged:
    """An updated channel and, for the audit log, which fields changed (URL: no value)."""

    channel: ChannelOut
    changes: dict[str, Any]


def _audited_fields(channel: Channel) -> dict[str, Any]:
    return {
        "name": channel.name,
        "type": channel.type,
        "url": channel.url_encrypted,  # secret: the audit log says "changed", never the URL
        "instances": list(channel.instances),
        "min_load_share": channel.min_load_share,
        "events": list(channel.events),
        "enabled": channel.enabled,
        "quiet_start_hour": channel.quiet_start_hour,
        "quiet_end_hour": channel.quiet_end_hour,
    }


def update_channel(
    *, session: Session, settings: Settings, channel_id: int, data: ChannelUpdate
) -> ChannelChanged:
    """Change the fields given; null quiet hours clear them."""
    channel = _channel(session, channel_id)
    before = _audited_fields(channel)
    given = data.model_fields_set
    for field in ("name", "type", "instances", "min_load_share", "events", "enabled", "url"):
        if field in given and getattr(data, field) is None:
            raise InvalidChannel(f"'{field}' cannot be null; leave it out to keep its value.")
    if data.name is not None and data.name != channel.name:
        if repository.find_channel_by_name(session, data.name) is not None:
            raise ChannelConflict(f"A channel named '{data.name}' exists; pick another name.")
        channel.name = data.name
    if data.type is not None:
        channel.type = data.type.value
    if data.url is not None:
        _check_url(settings, data.url)
        channel.url_encrypted = encrypt(settings, data.url)
        channel.url_redacted = redact_url(data.url)
    if data.instances is not None:
        channel.instances = sorted(set(data.instances))
    if data.min_load_share is not None:
        channel.min_load_share = data.min_load_share
    if data.events is not None:
        channel.events = sorted(set(data.events))
    if data.enabled is not None:
        channel.enabled = data.enabled
    start = data.quiet_start_hour if "quiet_start_hour" in given else channel.quiet_start_hour
    end = data.quiet_end_hour if "quiet_end_hour" in given else channel.quiet_end_hour
    if (start is None) != (end is None):
        raise InvalidChannel(
            "quiet_start_hour and quiet_end_hour go together: set both, or both to null."
        )
    if start is not None and start == end:
        raise InvalidChannel("quiet_start_hour and quiet_end_hour must differ.")
    channel.quiet_start_hour, channel.quiet_end_hour = start, end
    channel.updated_at = utcnow()
    try:
        session.flush()
    except IntegrityError as exc:
        raise ChannelConflict(f"A channel named '{data.name}' exists; pick another name.") from exc
    changes = field_changes(before, _audited_fields(channel), secret={"url"})
    return ChannelChanged(_channel_out(channel), changes)


def _check_url(settings: Settings, url: str) -> None:
    """Refuse a URL whose host is (or resolves to) a non-public address; checked again
    before each POST (see quanta.notify.targets)."""
    try:
        check_target(url, allow_private=settings.allow_private_webhooks)
    except RefusedTarget as exc:
        raise InvalidChannel(str(exc)) from None


def delete_channel(*, session: Session, channel_id: int) -> str:
    """Remove a channel with its deliveries and their attempts; returns its name."""
    channel = _channel(session, channel_id)
    session.delete(channel)
    session.flush()
    return channel.name


def list_deliveries(
    *, session: Session, channel_id: int, status: str | None, limit: int
) -> list[DeliveryOut]:
    """The channel's deliveries, newest first, each with its attempts."""
    _channel(session, channel_id)
    deliveries = repository.channel_deliveries(session, channel_id, status=status, limit=limit)
    attempts = repository.attempts_of(session, [d.id for d in deliveries])
    return [_delivery_out(d, attempts.get(d.id, [])) for d in deliveries]


def send_test(
    *,
    session: Session,
    settings: Settings,
    channel_id: int,
    transport: Transport = post_message,
) -> ChannelTestResult:
    """Send a test message now, once (no retry, no quiet hours, no rate limit), and record it."""
    channel = _channel(session, channel_id)
    now = utcnow()
    delivery = Delivery(
        channel_id=channel.id,
        kind=DeliveryKind.TEST.value,
        event=TEST_EVENT,
        payload={},
        status=DeliveryStatus.PENDING.value,
        attempts=1,
        next_attempt_at=now,
        created_at=now,
    )
    session.add(delivery)
    session.flush()
    body = formats.check_message(channel.type, channel.name, settings.link_base)
    result = _post(settings, channel, body, transport)
    _record(session, delivery, result, now=now, next_retry_at=None)
    if result.ok:
        delivery.status, delivery.sent_at = DeliveryStatus.SENT.value, now
    else:
        delivery.status, delivery.last_error = DeliveryStatus.FAILED.value, result.error
    delivery.next_attempt_at = None
    return ChannelTestResult(
        delivered=result.ok,
        status_code=result.status_code,
        error=result.error,
        duration_ms=result.duration_ms,
        delivery_id=delivery.id,
    )


# --- publishing ----------------------------------------------------------------------------


def publish_suggestion(
    *, session: Session, settings: Settings, notice: SuggestionNotice
) -> list[int]:
    """Queue the suggestion for every channel whose filters match; the new delivery ids.

    A channel that already has this suggestion with the same content_hash gets nothing: only a
    changed suggestion is sent again. Delivery tasks are enqueued after the commit.
    """
    payload = notice.to_dict()
    created: list[int] = []
    for channel in repository.enabled_channels(session):
        if not suggestion_matches(channel, notice):
            continue
        if (
            repository.find_delivery(
                session,
                channel_id=channel.id,
                suggestion_id=notice.suggestion_id,
                content_hash=notice.content_hash,
            )
            is not None
        ):
            continue
        delivery_id = _queue(
            session,
            channel,
            event=NEW_SUGGESTION,
            payload=payload,
            content_hash=notice.content_hash,
            suggestion_id=notice.suggestion_id,
        )
        if delivery_id is not None:
            created.append(delivery_id)
    _enqueue_after_commit(session, settings, created)
    return created


def publish_impact(*, session: Session, settings: Settings, notice: ImpactNotice) -> list[int]:
    """Queue an annotation's regressions for the channels subscribed to them; the delivery ids.

    Nothing is sent when nothing regressed: a message with nothing to act on is noise.
    """
    if not notice.regressions:
        return []
    content_hash = impact_hash(notice)
    created: list[int] = []
    for channel in repository.enabled_channels(session):
        if not impact_matches(channel, notice):
            continue
        if (
            repository.find_delivery(
                session,
                channel_id=channel.id,
                annotation_id=notice.annotation_id,
                content_hash=content_hash,
            )
            is not None
        ):
            continue
        delivery_id = _queue(
            session,
            channel,
            event=ANNOTATION_IMPACT,
            payload=notice.to_dict(),
            content_hash=content_hash,
            annotation_id=notice.annotation_id,
        )
        if delivery_id is not None:
            created.append(delivery_id)
    _enqueue_after_commit(session, settings, created)
    return created


def publish_plan(*, session: Session, settings: Settings, notice: PlanNotice) -> list[int]:
    """Queue a table's index plan for every channel whose filters match; the delivery ids.

    A channel gets a plan once per (instance, table, signature): never the same plan twice,
    even when its row was deleted and planned again. Rate
    limits, quiet hours and digests apply as to every message.
    """
    content_hash = plan_hash(notice)
    created: list[int] = []
    for channel in repository.enabled_channels(session):
        if not plan_matches(channel, notice):
            continue
        if (
            repository.find_delivery(
                session, channel_id=channel.id, plan_id=notice.plan_id, content_hash=content_hash
            )
            is not None
        ):
            continue
        delivery_id = _queue(
            session,
            channel,
            event=INDEX_PLAN,
            payload=notice.to_dict(),
            content_hash=content_hash,
            plan_id=notice.plan_id,
        )
        if delivery_id is not None:
            created.append(delivery_id)
    _enqueue_after_commit(session, settings, created)
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


def impact_hash(notice: ImpactNotice) -> str:
    """A stable hash of what an impact message would say."""
    content = json.dumps([notice.text, notice.regressions], sort_keys=True, default=str)
    return hashlib.sha256(content.encode()).hexdigest()


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
) -> int | None:
    now = utcnow()
    delivery = Delivery(
        channel_id=channel.id,
        kind=DeliveryKind.MESSAGE.value,
        event=event,
        suggestion_id=suggestion_id,
        annotation_id=annotation_id,
        plan_id=plan_id,
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


def _enqueue_after_commit(session: Session, settings: Settings, delivery_ids: list[int]) -> None:
    if delivery_ids:
        ids = list(delivery_ids)
        run_after_commit(session, lambda: enqueue_deliveries(settings=settings, delivery_ids=ids))


def enqueue_deliveries(
    *, settings: Settings, delivery_ids: Sequence[int], countdown: float | None = None
) -> None:
    """Ask workers to attempt these deliveries; if the broker is down the tick job will."""
    try:
        client = celery_client(settings)
        for delivery_id in delivery_ids:
            client.send_task(DELIVER_NOTIFICATION_TASK, args=[delivery_id], countdown=countdown)
    except Exception:
        log.exception("could not enqueue deliveries %s; the notify tick retries them", delivery_ids)


# --- delivering ----------------------------------------------------------------------------


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
        if repository.has_held(session, channel.id) or _rate_free_at(
            session, settings, channel, now
        ):
            delivery.status = DeliveryStatus.HELD.value
            delivery.next_attempt_at = None
            return None
    elif delivery.kind == DeliveryKind.DIGEST.value:
        free_at = _rate_free_at(session, settings, channel, now)
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
        _record(session, delivery, result, now=now, next_retry_at=None)
        _fail(delivery, result)
        return None
    result = _post(settings, channel, body, transport)
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
        _record(session, delivery, result, now=now, next_retry_at=None)
        delivery.status, delivery.sent_at = DeliveryStatus.SENT.value, now
        delivery.next_attempt_at, delivery.last_error = None, None
        return None
    if not result.retryable or delivery.attempts >= settings.notify_max_attempts:
        _record(session, delivery, result, now=now, next_retry_at=None)
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
    _record(session, delivery, result, now=now, next_retry_at=next_at)
    delivery.next_attempt_at, delivery.last_error = next_at, result.error
    return next_at


def _fail(delivery: Delivery, result: HttpResult) -> None:
    delivery.status = DeliveryStatus.FAILED.value
    delivery.last_error = result.error
    delivery.next_attempt_at = None


def _record(
    session: Session,
    delivery: Delivery,
    result: HttpResult,
    *,
    now: datetime,
    next_retry_at: datetime | None,
) -> None:
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


def _post(
    settings: Settings, channel: Channel, body: dict[str, object], transport: Transport
) -> HttpResult:
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


def _rate_free_at(
    session: Session, settings: Settings, channel: Channel, now: datetime
) -> datetime | None:
    """None when the channel may send now; else when its hourly limit frees a slot."""
    sent = repository.sent_since(session, channel.id, now - RATE_WINDOW)
    if len(sent) < settings.notify_max_per_hour:
        return None
    # The slot frees when enough of the window's messages have aged out of it.
    oldest_blocking = sent[len(sent) - settings.notify_max_per_hour]
    return oldest_blocking + RATE_WINDOW


def flush_digests(*, session: Session, settings: Settings, now: datetime) -> list[int]:
    """Roll each channel's held messages into one digest once its rate limit allows one more
    message; the ids of the deliveries to attempt now.

    A lone held message goes out as itself rather than as a digest of one.
    """
    ready: list[int] = []
    for channel_id in repository.channels_with_held(session):
        channel = session.get_one(Channel, channel_id)
        if _rate_free_at(session, settings, channel, now) is not None:
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


# --- views ---------------------------------------------------------------------------------


def _channel(session: Session, channel_id: int) -> Channel:
    channel = session.get(Channel, channel_id)
    if channel is None:
        raise ChannelNotFound(f"No channel with id {channel_id}; GET /api/v1/channels lists them.")
    return channel


def _channel_out(channel: Channel) -> ChannelOut:
    return ChannelOut.model_validate(
        {
            "id": channel.id,
            "name": channel.name,
            "type": channel.type,
            "url": channel.url_redacted,
            "instances": channel.instances,
            "min_load_share": channel.min_load_share,
            "events": channel.events,
            "quiet_start_hour": channel.quiet_start_hour,
            "quiet_end_hour": channel.quiet_end_hour,
            "enabled": channel.enabled,
            "created_at": channel.created_at,
            "updated_at": channel.updated_at,
        }
    )


def _summary(delivery: Delivery) -> str:
    payload = delivery.payload
    if delivery.kind == DeliveryKind.TEST.value:
        return "Test message"
    if delivery.kind == DeliveryKind.DIGEST.value:
        items = payload.get("items", [])
        return f"Digest of {len(items) if isinstance(items, list) else 0} held messages"
    if delivery.event in (NEW_SUGGESTION, INDEX_PLAN):
        return shorten(f"{payload.get('instance')} · {payload.get('ddl')}", 200)
    return shorten(f"Regressions after “{payload.get('text')}”", 200)


def _delivery_out(delivery: Delivery, attempts: list[DeliveryAttempt]) -> DeliveryOut:
    return DeliveryOut(
        id=delivery.id,
        kind=delivery.kind,
        event=delivery.event,
        status=delivery.status,
        summary=_summary(delivery),
        suggestion_id=delivery.suggestion_id,
        annotation_id=delivery.annotation_id,
        content_hash=delivery.content_hash,
        digest_id=delivery.digest_id,
        created_at=delivery.created_at,
        sent_at=delivery.sent_at,
        next_attempt_at=delivery.next_attempt_at,
        last_error=delivery.last_error,
        attempts=[
            AttemptOut(
                attempted_at=a.attempted_at,
                status_code=a.status_code,
                error=a.error,
                duration_ms=a.duration_ms,
                next_retry_at=a.next_retry_at,
            )
            for a in attempts
        ],
    )
