"""Request and response bodies of /api/v1/channels."""

from datetime import datetime
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from quanta.core.names import InstanceName, Labels
from quanta.notify.events import NEW_SUGGESTION, EventType
from quanta.notify.models import ChannelType, DeliveryKind

MAX_URL_CHARS = 2000


def _webhook_url(url: str) -> str:
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            "url must be the service's incoming-webhook URL, starting with https:// "
            "(e.g. https://hooks.slack.com/services/...)"
        )
    return url.strip()


WebhookUrl = Annotated[str, Field(max_length=MAX_URL_CHARS), AfterValidator(_webhook_url)]
Hour = Annotated[int, Field(ge=0, le=23, description="Hour of the day, UTC.")]
Name = Annotated[str, Field(min_length=1, max_length=100, pattern=r"\S")]
Share = Annotated[
    float, Field(ge=0, le=1, description="Only queries with at least this share of load (0..1).")
]
Events = Annotated[
    list[EventType],
    Field(min_length=1, description="Events the channel receives."),
]


def _check_quiet_hours(start: int | None, end: int | None) -> None:
    if (start is None) != (end is None):
        raise ValueError("quiet_start_hour and quiet_end_hour go together: set both or neither")
    if start is not None and start == end:
        raise ValueError("quiet_start_hour and quiet_end_hour must differ")


class ChannelCreate(BaseModel):
    """A new chat channel."""

    model_config = ConfigDict(extra="forbid")

    name: Name
    type: ChannelType
    url: WebhookUrl = Field(description="The incoming-webhook URL; stored encrypted.")
    instances: list[InstanceName] = Field(
        default_factory=list, description="Instance names to notify about; empty: all."
    )
    min_load_share: Share = 0.0
    tags: Labels = Field(
        default_factory=dict,
        description='Only queries carrying all these tags ({"team": "payments"}); empty: '
        "any. Index plans and reviews, which are not about one query, skip such a channel.",
    )
    labels: Labels = Field(
        default_factory=dict,
        description='Only instances with all these labels ({"environment": "prod"}); empty: any.',
    )
    events: Events = Field(default_factory=lambda: [NEW_SUGGESTION])
    quiet_start_hour: Hour | None = Field(
        default=None, description="Quiet hours start (UTC); messages wait until they end."
    )
    quiet_end_hour: Hour | None = None
    enabled: bool = True

    @model_validator(mode="after")
    def _quiet_hours(self) -> "ChannelCreate":
        _check_quiet_hours(self.quiet_start_hour, self.quiet_end_hour)
        return self


class ChannelUpdate(BaseModel):
    """Changes to a channel; fields left out keep their value (null clears quiet hours)."""

    model_config = ConfigDict(extra="forbid")

    name: Name | None = None
    type: ChannelType | None = None
    url: WebhookUrl | None = None
    instances: list[InstanceName] | None = None
    min_load_share: Share | None = None
    tags: Labels | None = None
    labels: Labels | None = None
    events: Events | None = None
    quiet_start_hour: Hour | None = None
    quiet_end_hour: Hour | None = None
    enabled: bool | None = None


class ChannelOut(BaseModel):
    """A channel as the API shows it: the webhook URL redacted to its host."""

    id: int
    name: str
    type: ChannelType
    url: str = Field(description="Redacted: scheme and host only; the path holds the secret.")
    instances: list[str]
    min_load_share: float
    tags: dict[str, str] = Field(default_factory=dict)
    labels: dict[str, str] = Field(default_factory=dict)
    events: list[EventType]
    quiet_start_hour: int | None
    quiet_end_hour: int | None
    enabled: bool
    created_at: datetime
    updated_at: datetime


class AttemptOut(BaseModel):
    """One HTTP request made for a delivery."""

    attempted_at: datetime
    status_code: int | None = Field(description="HTTP status; null when nothing answered.")
    error: str | None
    duration_ms: int
    next_retry_at: datetime | None = Field(description="When the next attempt is due, if any.")


class DeliveryOut(BaseModel):
    """A message queued for a channel, with every attempt to deliver it."""

    id: int
    kind: DeliveryKind = Field(description="message, digest or test.")
    event: str
    status: str = Field(
        description="pending, held (rate limit: waits for a digest), digested, sent, failed, "
        "cancelled."
    )
    summary: str
    suggestion_id: int | None
    annotation_id: int | None
    content_hash: str | None
    digest_id: int | None = Field(description="The digest delivery that carried a held one.")
    created_at: datetime
    sent_at: datetime | None
    next_attempt_at: datetime | None
    last_error: str | None
    attempts: list[AttemptOut]


class ChannelTestResult(BaseModel):
    """What the test message's one attempt produced."""

    delivered: bool
    status_code: int | None
    error: str | None
    duration_ms: int
    delivery_id: int
