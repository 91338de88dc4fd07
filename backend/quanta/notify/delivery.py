"""The wire: POST a message to a channel's webhook and classify what came back.

Every service is a plain JSON POST through httpx, with redirects never followed (a redirect
could lead anywhere, past the address check) and to the address quanta.notify.targets
checked. Slack used to go through slack_sdk's WebhookClient, which follows redirects
(urllib's default) and connects to whatever the name resolves to at that moment; an
incoming webhook is one JSON POST, so the library added nothing we need. Every attempt is
recorded and scheduled by quanta.notify.service, which also honours Retry-After.

What a service answers is never shown: an error is the status code and Quanta's own
sentence about it, as a webhook URL may point at something that is no chat service.
"""

import json
import time
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Protocol

import httpx

from quanta.notify.targets import RefusedTarget, Target, UnresolvableHost, check_target

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
    refused: bool = False  # the address check refused the URL: nothing was sent

    @property
    def ok(self) -> bool:
        """The service accepted the message."""
        return self.status_code is not None and 200 <= self.status_code < 300

    @property
    def retryable(self) -> bool:
        """Worth trying again: no response, a timeout, throttling or a server-side error."""
        code = self.status_code
        if self.refused:
            return False
        return code is None or code in (408, 429) or code >= 500


class Transport(Protocol):
    """Sends one message; tests and the service share this signature."""

    def __call__(
        self,
        *,
        channel_type: str,
        url: str,
        body: dict[str, object],
        timeout: float,
        allow_private: bool,
    ) -> HttpResult: ...


def post_message(
    *, channel_type: str, url: str, body: dict[str, object], timeout: float, allow_private: bool
) -> HttpResult:
    """POST `body` as JSON to `url` if its host is allowed; never raises for network, HTTP
    or address errors (a refused address is a failed, not retryable, result)."""
    started = time.monotonic()
    try:
        target = check_target(url, allow_private=allow_private)
    except UnresolvableHost as exc:  # DNS may be back for the next attempt
        return HttpResult(None, str(exc), None, "", 0)
    except RefusedTarget as exc:
        return HttpResult(None, str(exc), None, "", 0, refused=True)
    status, text, retry_after, error = post_to(target, body, timeout)
    duration_ms = int((time.monotonic() - started) * 1000)
    if error is None and status is not None and not 200 <= status < 300:
        error = f"HTTP {status}: {status_sentence(status)}"
    return HttpResult(status, error, retry_after, text, duration_ms)


def pinned_request(target: Target) -> tuple[str, dict[str, str], dict[str, str]]:
    """The URL, headers and httpx extensions that reach `target` at its checked address.

    The name stays in Host and in TLS (server name and certificate check), so a service
    behind a shared address and its certificate work as with the name itself.

    >>> from ipaddress import ip_address
    >>> pinned_request(Target("https://hooks.example:8443/T/x", "hooks.example",
    ...                       ip_address("203.0.113.9")))[0]
    'https://203.0.113.9:8443/T/x'
    """
    headers = {"User-Agent": USER_AGENT}
    if target.address is None:
        return target.url, headers, {}
    url = httpx.URL(target.url)
    headers["Host"] = url.netloc.decode("ascii").rsplit("@", 1)[-1]
    pinned = str(url.copy_with(host=str(target.address)))
    return pinned, headers, {"sni_hostname": target.host}


def post_to(
    target: Target, body: dict[str, object], timeout: float
) -> tuple[int | None, str, str | None, str | None]:
    """POST to a checked target, at its checked address, never following a redirect:
    (status, body, Retry-After, error when nothing answered)."""
    url, headers, extensions = pinned_request(target)
    try:
        with httpx.Client(timeout=timeout, follow_redirects=False) as client:
            response = client.post(url, json=body, headers=headers, extensions=extensions)
    except httpx.HTTPError as exc:
        return None, "", None, f"Could not reach the webhook: {_describe(exc)}"
    return response.status_code, response.text, response.headers.get("retry-after"), None


def _describe(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    return text[:ERROR_CHARS]


_SENTENCES = {
    400: "the service refused the message as malformed.",
    401: "the service refused the webhook's credentials; check the URL.",
    403: "the service refused the webhook's credentials; check the URL.",
    404: "no webhook at this URL (deleted, or mistyped).",
    408: "the service timed out reading the message.",
    410: "the webhook was deleted.",
    413: "the message is too large for the service.",
    429: "the service is throttling messages.",
}


def status_sentence(status: int) -> str:
    """Quanta's sentence for a status code; what the service wrote is never shown.

    >>> status_sentence(302)
    'the webhook answered with a redirect, which is not followed: use the final URL.'
    """
    if 300 <= status < 400:
        return "the webhook answered with a redirect, which is not followed: use the final URL."
    if status >= 500:
        return "the service failed to take the message (server error)."
    return _SENTENCES.get(status, "the service refused the message.")


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
