"""Send event batches to the Quanta server: gzip JSON, idempotent batch ids, retries."""

import gzip
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx
from tenacity import (
    retry,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
)

import quanta_agent

INGEST_PATH = "/api/v1/ingest"
RETRY_ATTEMPTS = 8
RETRY_MAX_WAIT_SECONDS = 30
HTTP_TIMEOUT_SECONDS = 60.0


class ShipError(Exception):
    """The server refused a batch; the message is the server's reason."""


class _Retryable(Exception):
    """A failure worth retrying: server overloaded or briefly broken."""


@dataclass(frozen=True, slots=True)
class ShipResult:
    """What the server answered for one batch."""

    batch_id: str
    status: str
    duplicate: bool


def batch_id_for(instance: str, events_json: bytes) -> str:
    """A batch id derived from the content, so re-sending the same events is a no-op."""
    digest = hashlib.sha256(instance.encode() + b"\n" + events_json)
    return digest.hexdigest()[:32]


class Shipper:
    """Posts batches for one instance to one server with one token."""

    def __init__(self, *, server: str, token: str, instance: str) -> None:
        self.instance = instance
        self._client = httpx.Client(
            base_url=server.rstrip("/"),
            timeout=HTTP_TIMEOUT_SECONDS,
            headers={
                "Authorization": f"Bearer {token}",
                "Content-Type": "application/json",
                "Content-Encoding": "gzip",
                "User-Agent": f"quanta-agent/{quanta_agent.__version__}",
            },
        )

    def close(self) -> None:
        """Release the connection pool."""
        self._client.close()

    def ship(self, events: Sequence[dict[str, Any]], source: str = "slowlog") -> ShipResult:
        """Send one batch, retrying transient failures; raise ShipError if it is refused."""
        events_json = json.dumps(events, separators=(",", ":")).encode()
        batch_id = batch_id_for(self.instance, events_json)
        body = b'{"batch_id":%s,"instance":%s,"source":%s,"events":%s}' % (
            json.dumps(batch_id).encode(),
            json.dumps(self.instance).encode(),
            json.dumps(source).encode(),
            events_json,
        )
        response = self._post(gzip.compress(body, compresslevel=5))
        answer = response.json()
        return ShipResult(
            batch_id=batch_id, status=answer["status"], duplicate=response.status_code == 200
        )

    @retry(
        retry=retry_if_exception(lambda e: isinstance(e, _Retryable | httpx.TransportError)),
        wait=wait_exponential(multiplier=0.5, max=RETRY_MAX_WAIT_SECONDS),
        stop=stop_after_attempt(RETRY_ATTEMPTS),
        reraise=True,
    )
    def _post(self, body: bytes) -> httpx.Response:
        response = self._client.post(INGEST_PATH, content=body)
        if response.status_code in (429, 502, 503, 504):
            raise _Retryable(f"server answered {response.status_code}")
        if response.status_code >= 400:
            raise ShipError(
                f"server refused the batch ({response.status_code}): {_detail(response)}"
            )
        return response


def _detail(response: httpx.Response) -> str:
    try:
        return str(response.json().get("detail", response.text))
    except ValueError:
        return response.text[:500]
