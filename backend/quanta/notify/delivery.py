"""The wire: POST a message to a channel's webhook and classify what came back.

Slack goes through slack_sdk's WebhookClient (the library made for Slack incoming webhooks),
with its own retry handlers switched off: every attempt must be recorded and scheduled by
quanta.notify.service, which also honours Retry-After across worker restarts.
The other services are plain JSON POSTs through httpx. apprise was considered and not used:
it builds its own payloads per service (we need exact Block Kit, Adaptive Card, attachment and
embed bodies), hides the HTTP status and Retry-After, and is not installed.
"""

import json
import time
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Protocol

import httpx
from slack_sdk.webhook import WebhookClient

# An error body is shown to admins in the delivery list; this is plenty for a reason.
ERROR_CHARS = 500
USER_AGENT = "Quanta-Notify"


@dataclass(frozen=True, slots=True)
class HttpResult:
    """What one POST produced: a status (None when no response arrived) and details."""

    status_code: int | None
    error: str | None
    retry_after: str | None  # the raw Retry-After header (seconds or an HTTP date)
    body: str
    duration_ms: int

    @property
    def ok(self) -> bool:
        """The service accepted the message."""
        return self.status_code is not None and 200 <= self.status_code < 300

    @property
    def retryable(self) -> bool:
        """Worth trying again: no response, a timeout, throttling or a server-side error."""
        code = self.status_code
        return code is None or code in (408, 429) or code >= 500


class Transport(Protocol):
    """Sends one message; tests and the service share this signature."""

    def __call__(
        self, *, channel_type: str, url: str, body: dict[str, object], timeout: float
    ) -> HttpResult: ...


def post_message(
    *, channel_type: str, url: str, body: dict[str, object], timeout: float
) -> HttpResult:
    """POST `body` as JSON to `url`; never raises for network or HTTP errors."""
    started = time.monotonic()
    if channel_type == "slack":
        status, text, retry_after, error = _post_slack(url, body, timeout)
    else:
        status, text, retry_after, error = _post_httpx(url, body, timeout)
    duration_ms = int((time.monotonic() - started) * 1000)
    if error is None and status is not None and not 200 <= status < 300:
        error = f"HTTP {status}: {error_message(text) or 'no details in the response'}"
    return HttpResult(status, error, retry_after, text, duration_ms)


def _post_slack(
    url: str, body: dict[str, object], timeout: float
) -> tuple[int | None, str, str | None, str | None]:
    # retry_handlers=[]: the default handler would silently re-send on a connection error.
    client = WebhookClient(url, timeout=max(1, round(timeout)), retry_handlers=[])
    client.default_headers["User-Agent"] = USER_AGENT
    try:
        response = client.send_dict(body)
    except Exception as exc:  # urllib raises URLError, socket timeouts, SSL errors...
        return None, "", None, f"Could not reach the webhook: {_describe(exc)}"
    headers = {k.lower(): v for k, v in dict(response.headers or {}).items()}
    retry_after = headers.get("retry-after")
    if isinstance(retry_after, list):
        retry_after = retry_after[0] if retry_after else None
    return response.status_code, response.body or "", retry_after, None


def _post_httpx(
    url: str, body: dict[str, object], timeout: float
) -> tuple[int | None, str, str | None, str | None]:
    try:
        response = httpx.post(url, json=body, timeout=timeout, headers={"User-Agent": USER_AGENT})
    except httpx.HTTPError as exc:
        return None, "", None, f"Could not reach the webhook: {_describe(exc)}"
    return response.status_code, response.text, response.headers.get("retry-after"), None


def _describe(exc: Exception) -> str:
    reason = getattr(exc, "reason", None)  # urllib's URLError keeps the cause here
    text = str(reason if reason is not None else exc) or type(exc).__name__
    return text[:ERROR_CHARS]


def error_message(body: str) -> str:
    """The human part of an error body: a JSON `message`/`error`/`text` field, else the text.

    Discord answers {"message": ..., "code": ...}; Slack answers plain text (`invalid_payload`,
    `no_service`); Teams and Mattermost answer text or JSON with `message`.
    """
    text = body.strip()
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        for key in ("message", "error", "text", "detail"):
            value = parsed.get(key)
            if isinstance(value, str) and value:
                return value[:ERROR_CHARS]
    return " ".join(text.split())[:ERROR_CHARS]


def retry_after_seconds(result: HttpResult, now: datetime) -> float | None:
    """The wait a throttling service asked for, in seconds, if it asked.

    Reads Retry-After as seconds or as an HTTP date; Discord also puts `retry_after`
    (seconds) in its JSON body.
    """
    raw = result.retry_after
    if raw:
        try:
            return max(float(raw), 0.0)
        except ValueError:
            pass
        try:
            when = parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            when = None
        if when is not None and when.tzinfo is not None:
            return max((when - now).total_seconds(), 0.0)
    try:
        parsed = json.loads(result.body) if result.body else None
    except ValueError:
        return None
    if isinstance(parsed, dict) and isinstance(parsed.get("retry_after"), int | float):
        return max(float(parsed["retry_after"]), 0.0)
    return None
