"""Chat channels, the deliveries queued for them and every attempt to deliver."""

import enum
from datetime import datetime

from sqlalchemy import (
    JSON,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from quanta.core.db import Base, UTCDateTime, utcnow


class ChannelType(enum.StrEnum):
    """The chat services a channel can post to."""

    SLACK = "slack"
    TEAMS = "teams"
    MATTERMOST = "mattermost"
    DISCORD = "discord"
    WEBHOOK = "webhook"


class DeliveryKind(enum.StrEnum):
    """What a delivery carries."""

    MESSAGE = "message"  # one event (a suggestion, an annotation's impact)
    DIGEST = "digest"  # the overflow of the hourly rate limit, rolled into one message
    TEST = "test"  # the "send test message" action


class DeliveryStatus(enum.StrEnum):
    """Where a delivery stands."""

    PENDING = "pending"  # waiting for its (next) attempt at next_attempt_at
    HELD = "held"  # over the channel's hourly limit: waits to be rolled into a digest
    DIGESTED = "digested"  # went out inside the digest delivery `digest_id`
    SENT = "sent"
    FAILED = "failed"  # gave up: a permanent error, or every attempt used
    CANCELLED = "cancelled"  # its channel was disabled before it went out


class Channel(Base):
    """A chat destination: an incoming-webhook URL of one service, with its filters."""

    __tablename__ = "notify_channels"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    type: Mapped[str] = mapped_column(String(20))
    # The webhook URL embeds its credential (Slack, Discord, Teams), so it is Fernet-encrypted;
    # url_redacted (scheme://host/…) is what the API shows.
    url_encrypted: Mapped[str] = mapped_column(Text)
    url_redacted: Mapped[str] = mapped_column(String(300))
    instances: Mapped[list[str]] = mapped_column(JSON, default=list)  # names; empty: all
    min_load_share: Mapped[float] = mapped_column(Float, default=0.0)
    # Only queries with all these tags, on instances with all these labels (empty: any).
    tags: Mapped[dict[str, str]] = mapped_column(JSON, default=dict, server_default="{}")
    labels: Mapped[dict[str, str]] = mapped_column(JSON, default=dict, server_default="{}")
    events: Mapped[list[str]] = mapped_column(JSON, default=list)
    # Hours UTC, [start, end): messages due inside wait until `end` (NULL: no quiet hours).
    quiet_start_hour: Mapped[int | None] = mapped_column(Integer, default=None)
    quiet_end_hour: Mapped[int | None] = mapped_column(Integer, default=None)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Delivery(Base):
    """One message for one channel, from queued to sent or failed.

    The unique keys make publishing idempotent: a suggestion (an annotation's impact, a table's
    index plan) reaches a channel once per content hash, so only a changed one is sent again.
    """

    __tablename__ = "notify_deliveries"
    __table_args__ = (
        UniqueConstraint("channel_id", "suggestion_id", "content_hash"),
        UniqueConstraint("channel_id", "annotation_id", "content_hash"),
        UniqueConstraint("channel_id", "plan_id", "content_hash"),
        UniqueConstraint("channel_id", "regression_id", "content_hash"),
        Index("ix_notify_deliveries_status_next_attempt_at", "status", "next_attempt_at"),
        Index("ix_notify_deliveries_channel_id_sent_at", "channel_id", "sent_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("notify_channels.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(10))
    event: Mapped[str] = mapped_column(String(30))
    suggestion_id: Mapped[int | None] = mapped_column(Integer, default=None)
    annotation_id: Mapped[int | None] = mapped_column(Integer, default=None)
    # A table's index plan (quanta.indexplan); its content_hash is the plan's signature.
    plan_id: Mapped[int | None] = mapped_column(Integer, default=None)
    # A regression (quanta.regressions): announced once, resolved once per channel.
    regression_id: Mapped[int | None] = mapped_column(Integer, default=None)
    content_hash: Mapped[str | None] = mapped_column(String(64), default=None)
    # The notice as published (SuggestionNotice/ImpactNotice.to_dict()): the message is built
    # from this copy, so it says what was true when it was queued.
    payload: Mapped[dict[str, object]] = mapped_column(JSON, default=dict)
    status: Mapped[str] = mapped_column(String(10), default=DeliveryStatus.PENDING.value)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    last_error: Mapped[str | None] = mapped_column(Text, default=None)
    # Set on held deliveries once a digest carries them.
    digest_id: Mapped[int | None] = mapped_column(
        ForeignKey("notify_deliveries.id", ondelete="SET NULL"), default=None
    )


class DeliveryAttempt(Base):
    """One HTTP request made for a delivery, and what came of it."""

    __tablename__ = "notify_attempts"

    id: Mapped[int] = mapped_column(primary_key=True)
    delivery_id: Mapped[int] = mapped_column(
        ForeignKey("notify_deliveries.id", ondelete="CASCADE"), index=True
    )
    attempted_at: Mapped[datetime] = mapped_column(UTCDateTime)
    status_code: Mapped[int | None] = mapped_column(Integer, default=None)  # None: no response
    error: Mapped[str | None] = mapped_column(Text, default=None)
    duration_ms: Mapped[int] = mapped_column(Integer, default=0)
    next_retry_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
