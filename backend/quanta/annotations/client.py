"""The HTTP client behind `quanta annotate`: one POST, bounded in time, with a few retries.

Only httpx and tenacity: the CLI command stays quick to start from a CI step.
"""

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

ANNOTATIONS_PATH = "/api/v1/annotations"
DEFAULT_TIMEOUT_SECONDS = 10.0
CONNECT_TIMEOUT_SECONDS = 3.0
ATTEMPTS = 3
FIRST_RETRY_WAIT_SECONDS = 0.5
MAX_RETRY_WAIT_SECONDS = 4.0
SHOWN_TEXT_CHARS = 80
_RELATIVE = re.compile(r"now(?:(?P<sign>[-+])(?P<amount>\d+)(?P<unit>[smhdw]))?")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
# Failures before the request reached the server: retrying cannot store it twice.
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout)


class AnnotateError(Exception):
    """The annotation was not stored; the message says why."""


class _ServerBusy(Exception):
    """A 5xx answer: the request was not stored, worth another try."""

    def __init__(self, response: httpx.Response) -> None:
        super().__init__(f"server answered {response.status_code}")
        self.response = response


def parse_when(text: str, *, now: datetime | None = None) -> str:
    """An ISO 8601 time (naive is UTC) or ``now``, ``now-5m``, ``now+1h``, as UTC ISO 8601.

    Raises:
        ValueError: the text is neither.
    """
    value = text.strip()
    match = _RELATIVE.fullmatch(value)
    if match:
        seconds = int(match["amount"] or 0) * _UNITS[match["unit"] or "s"]
        delta = timedelta(seconds=-seconds if match["sign"] == "-" else seconds)
        return ((now or datetime.now(UTC)) + delta).isoformat()
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"cannot read time {text!r}: use ISO 8601 (2026-01-31T12:00:00Z) or now, now-5m"
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC).isoformat()


def post_annotation(
    *,
    server: str,
    token: str,
    body: dict[str, Any],
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    attempts: int = ATTEMPTS,
    first_wait: float = FIRST_RETRY_WAIT_SECONDS,
) -> dict[str, Any]:
    """POST an annotation and return the stored one.

    Connection failures and 5xx answers are retried (``attempts`` in all, waits doubling from
    ``first_wait``): neither stored anything. A request that got no answer within ``timeout``
    is not retried, since the server may have stored it.

    Raises:
        AnnotateError: the server refused it, or could not be reached.
    """
    base = server.rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise AnnotateError(f"server {server!r} is not an http:// or https:// URL")
    retrying = Retrying(
        retry=retry_if_exception(lambda e: isinstance(e, (*_NOT_SENT, _ServerBusy))),
        wait=wait_exponential(multiplier=first_wait, max=MAX_RETRY_WAIT_SECONDS),
        stop=stop_after_attempt(attempts),
        reraise=True,
    )
    url = base + ANNOTATIONS_PATH
    with httpx.Client(
        timeout=httpx.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT_SECONDS)),
        headers={"Authorization": f"Bearer {token}"},
    ) as client:
        try:
            response = retrying(_post_once, client, url, body)
        except _ServerBusy as exc:
            response = exc.response
        except _NOT_SENT as exc:
            raise AnnotateError(
                f"cannot reach {base} ({_reason(exc)}) after {attempts} attempts"
            ) from None
        except httpx.TimeoutException:
            raise AnnotateError(
                f"no answer from {base} within {timeout:g} s; the annotation may or may not "
                "have been stored"
            ) from None
        except httpx.TransportError as exc:
            raise AnnotateError(f"request to {base} failed: {_reason(exc)}") from None
    if response.status_code != httpx.codes.CREATED:
        raise AnnotateError(
            f"server refused the annotation ({response.status_code}): {_detail(response)}"
        )
    stored: dict[str, Any] = response.json()
    return stored


def confirmation(annotation: dict[str, Any]) -> str:
    """The one line `quanta annotate` prints, e.g. ``annotation 12 at 2026-...Z: Started ...``."""
    text = str(annotation["text"]).splitlines()[0] if annotation["text"] else ""
    if len(text) > SHOWN_TEXT_CHARS:
        text = text[: SHOWN_TEXT_CHARS - 3] + "..."
    when = _utc(annotation["time"])
    if annotation.get("end_time"):
        when += f" to {_utc(annotation['end_time'])}"
    return f"annotation {annotation['id']} at {when}: {text}"


def _post_once(client: httpx.Client, url: str, body: dict[str, Any]) -> httpx.Response:
    response = client.post(url, json=body)
    if response.status_code >= httpx.codes.INTERNAL_SERVER_ERROR:
        raise _ServerBusy(response)
    return response


def _utc(value: str) -> str:
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(UTC)
    except ValueError:
        return value
    return parsed.isoformat().replace("+00:00", "Z")


def _reason(exc: httpx.TransportError) -> str:
    text = str(exc)
    if "refused" in text.lower():
        return "connection refused"
    if isinstance(exc, httpx.ConnectTimeout):
        return "connect timeout"
    return text or type(exc).__name__


def _detail(response: httpx.Response) -> str:
    try:
        detail = response.json().get("detail")
    except (ValueError, AttributeError):
        return response.text[:200] or response.reason_phrase
    if isinstance(detail, list):  # FastAPI validation errors
        return "; ".join(
            f"{'.'.join(str(p) for p in e.get('loc', [])[1:])}: {e.get('msg')}" for e in detail
        )
    return str(detail)
