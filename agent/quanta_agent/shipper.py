"""Send batches to the Quanta server: gzip JSON, idempotent batch ids, retries.

The last stage of the agent's pipeline (read -> fold -> spool -> ship): it sends what the
spool holds (encoded bodies, :meth:`Shipper.deliver`), and for ``quanta-agent import`` the
folded batches themselves (:meth:`Shipper.ship`); it imports only the wire leaves.
"""

import hashlib
import logging
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass

import httpx
from tenacity import (
    RetryCallState,
    Retrying,
    retry,
    retry_if_exception,
    sleep_using_event,
    stop_after_attempt,
    stop_when_event_set,
    wait_exponential,
)

import quanta_agent
from quanta.analysis.sources import SourceName
from quanta.wire import AgentStatusIn, IngestBatchIn
from quanta_agent.payload import encode_batch, gzip_parts, to_json

INGEST_PATH = "/api/v1/ingest"
RETRY_ATTEMPTS = 8
RETRY_MAX_WAIT_SECONDS = 30
RETRY_FIRST_WAIT_SECONDS = 0.5
HTTP_TIMEOUT_SECONDS = 60.0
CONNECT_TIMEOUT_SECONDS = 5.0
# Answers meaning "this batch will never be accepted": bad JSON, too large, invalid.
# Anything else (unreachable, 5xx, 429, 401/403 until the token is fixed) is retried.
REFUSED_FOR_GOOD = frozenset((400, 413, 422))
# The members of a batch that say what it is, not what it holds.
HEAD_FIELDS = frozenset(("batch_id", "instance", "source", "examples"))

log = logging.getLogger(__name__)


class ShipError(Exception):
    """The server refused a batch; the message is the server's reason."""

    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class _Retryable(Exception):
    """A failure worth retrying: server overloaded or briefly broken."""


@dataclass(frozen=True, slots=True)
class ShipResult:
    """What the server answered for one batch."""

    batch_id: str
    status: str
    duplicate: bool


def batch_id_for(instance: str, content_json: bytes) -> str:
    """A batch id derived from the content, so re-sending the same rows is a no-op."""
    digest = hashlib.sha256(instance.encode() + b"\n" + content_json)
    return digest.hexdigest()[:32]


class Shipper:
    """Posts batches for one instance to one server with one token."""

    def __init__(
        self,
        *,
        server: str,
        token: str,
        instance: str,
        first_wait: float = RETRY_FIRST_WAIT_SECONDS,
        on_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        """Describe the target; ``first_wait`` seconds before the first retry, doubling;
        ``on_error`` hears of each failed attempt of :meth:`deliver` (it is retried)."""
        self.instance = instance
        self._first_wait = first_wait
        self._on_error = on_error
        self._client = httpx.Client(
            base_url=server.rstrip("/"),
            timeout=httpx.Timeout(HTTP_TIMEOUT_SECONDS, connect=CONNECT_TIMEOUT_SECONDS),
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

    def ship(self, batch: IngestBatchIn) -> ShipResult:
        """Send one batch, retrying transient failures; raise ShipError if it is refused.

        The batch id is derived from the batch's rows (``events``, or ``queries``,
        ``buckets`` and ``picks``), replacing the one it carries, so sending the same rows
        again is a no-op on the server.
        """
        content_json = to_json(batch, exclude=set(HEAD_FIELDS))
        if content_json == b"{}":
            raise ValueError("a batch has rows")
        batch_id = batch_id_for(self.instance, content_json)
        head = to_json(
            IngestBatchIn.model_construct(
                batch_id=batch_id, instance=self.instance, source=batch.source,
                examples=batch.examples,
            )
        )  # fmt: skip
        # One object, the head's members then the content's: the rows are encoded once.
        response = self._post(gzip_parts(head[:-1], b",", memoryview(content_json)[1:]))
        return _result(batch_id, response)

    def deliver(self, body: bytes, *, batch_id: str, give_up: threading.Event) -> ShipResult:
        """Send one encoded batch, retrying with exponential backoff until it is answered.

        Retries every failure except a refusal for good (ShipError with a status in
        REFUSED_FOR_GOOD) until ``give_up`` is set; then the last error is raised.
        """
        retrying = Retrying(
            retry=retry_if_exception(_worth_retrying),
            wait=wait_exponential(multiplier=self._first_wait, max=RETRY_MAX_WAIT_SECONDS),
            stop=stop_when_event_set(give_up),
            sleep=sleep_using_event(give_up),
            before_sleep=self._before_retry,
            reraise=True,
        )
        response = retrying(self._post_once, body)
        return _result(batch_id, response)

    def report(self, source: SourceName, status: AgentStatusIn) -> bool:
        """Send a status report of one source (a batch with no rows), once, without retry:
        a report is about now, and the next one follows soon. False when the server does
        not take reports (one older than this agent answers 422); other failures raise."""
        body = IngestBatchIn.model_construct(
            batch_id=f"status-{source}-{uuid.uuid4().hex}",
            instance=self.instance,
            source=source,
            agent=status,
        )
        try:
            self._post_once(encode_batch(body))
        except ShipError as exc:
            if exc.status_code == 422:
                return False
            raise
        return True

    def _before_retry(self, state: RetryCallState) -> None:
        _log_retry(state)
        error = state.outcome.exception() if state.outcome else None
        if self._on_error is not None and error is not None:
            self._on_error(error)

    @retry(
        retry=retry_if_exception(lambda e: isinstance(e, _Retryable | httpx.TransportError)),
        wait=wait_exponential(multiplier=RETRY_FIRST_WAIT_SECONDS, max=RETRY_MAX_WAIT_SECONDS),
        stop=stop_after_attempt(RETRY_ATTEMPTS),
        reraise=True,
    )
    def _post(self, body: bytes) -> httpx.Response:
        return self._post_once(body)

    def _post_once(self, body: bytes) -> httpx.Response:
        response = self._client.post(INGEST_PATH, content=body)
        if response.status_code in (429, 502, 503, 504):
            raise _Retryable(f"server answered {response.status_code}")
        if response.status_code >= 400:
            raise ShipError(
                f"server refused the batch ({response.status_code}): {_detail(response)}",
                response.status_code,
            )
        return response


def _result(batch_id: str, response: httpx.Response) -> ShipResult:
    return ShipResult(
        batch_id=batch_id, status=response.json()["status"], duplicate=response.status_code == 200
    )


def _worth_retrying(exc: BaseException) -> bool:
    if isinstance(exc, ShipError):
        return exc.status_code not in REFUSED_FOR_GOOD
    return isinstance(exc, _Retryable | httpx.TransportError)


def _log_retry(state: RetryCallState) -> None:
    error = state.outcome.exception() if state.outcome else None
    wait = state.next_action.sleep if state.next_action else 0.0
    # The first failures of an outage are worth a warning; later ones repeat it quietly.
    level = logging.WARNING if state.attempt_number in (1, 10) else logging.DEBUG
    log.log(level, "server unreachable or busy (%s); retry %d in %.1fs", error,
            state.attempt_number, wait)  # fmt: skip


def _detail(response: httpx.Response) -> str:
    try:
        return str(response.json().get("detail", response.text))
    except ValueError:
        return response.text[:500]
