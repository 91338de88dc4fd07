"""Use cases of chat notification channels: register, change, delete, list their
deliveries, send a test message.

The rest of notification has a module each: publishing events (quanta.notify.publish), the
delivery state machine (quanta.notify.dispatch), digests and the periodic tick
(quanta.notify.digests); quanta.notify.delivery is the HTTP transport.
"""

import logging
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from quanta.audit.service import field_changes
from quanta.core import errors
from quanta.core.config import Settings
from quanta.core.crypto import encrypt
from quanta.core.db import utcnow
from quanta.notify import formats, repository
from quanta.notify.delivery import Transport, post_message
from quanta.notify.dispatch import post, record
from quanta.notify.events import (
    INDEX_PLAN,
    INDEX_REVIEW,
    NEW_SUGGESTION,
    REGRESSION,
    REGRESSION_RESOLVED,
    SUGGESTION_APPLIED,
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

TEST_EVENT = "test"


class ChannelNotFound(errors.NotFound):
    """No channel has this id."""


class ChannelConflict(errors.Conflict):
    """Another channel already has this name."""


class InvalidChannel(errors.Unprocessable):
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
        tags=dict(sorted(data.tags.items())),
        labels=dict(sorted(data.labels.items())),
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
        "tags": dict(channel.tags or {}),
        "labels": dict(channel.labels or {}),
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
    if data.tags is not None:
        channel.tags = dict(sorted(data.tags.items()))
    if data.labels is not None:
        channel.labels = dict(sorted(data.labels.items()))
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
    result = post(settings, channel, body, transport)
    record(session, delivery, result, now=now, next_retry_at=None)
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
            "tags": channel.tags or {},
            "labels": channel.labels or {},
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
    if delivery.event in (NEW_SUGGESTION, INDEX_PLAN, SUGGESTION_APPLIED):
        return shorten(f"{payload.get('instance')} · {payload.get('ddl')}", 200)
    if delivery.event == INDEX_REVIEW:
        findings = payload.get("findings")
        count = len(findings) if isinstance(findings, list) else 0
        return shorten(f"Index review of {payload.get('instance')}: {count} new findings", 200)
    if delivery.event in (REGRESSION, REGRESSION_RESOLVED):
        return shorten(f"{payload.get('instance')} · {payload.get('fingerprint')}", 200)
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


def enabled_channels(*, session: Session) -> list[Channel]:
    """Channels that receive messages, by id."""
    return repository.enabled_channels(session)


def suggestions_in_chat(
    *, session: Session, suggestion_ids: Collection[int]
) -> set[tuple[str, str]]:
    """(query_id, DDL) of the suggestions chat already received: a new_suggestion message,
    sent or inside a sent digest, that named these suggestions (a message carries a query's
    every table's DDL under its first suggestion's id)."""
    found: set[tuple[str, str]] = set()
    for payload in repository.delivered_payloads(session, suggestion_ids):
        query_id = str(payload.get("query_id", ""))
        for ddl in str(payload.get("ddl", "")).split(";\n"):
            found.add((query_id, ddl.rstrip(";")))
    return found


def suggestion_sent(*, session: Session, suggestion_id: int) -> bool:
    """Whether a suggestion went out to any channel (the closed loop answers it there)."""
    return bool(repository.channels_sent(session, suggestion_id))


def outcome_queued(*, session: Session, suggestion_id: int) -> bool:
    """Whether what an applied suggestion did was queued for chat already."""
    return repository.has_event(session, suggestion_id=suggestion_id, event=SUGGESTION_APPLIED)
