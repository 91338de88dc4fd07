"""The shipper against a real local HTTP server: gzip body, retries, refusals."""

import gzip
import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from quanta.wire import IngestBatchIn, SlowLogEventIn
from quanta_agent.payload import encode_batch
from quanta_agent.shipper import ShipError, Shipper, batch_id_for


class Receiver(ThreadingHTTPServer):
    """Answers each POST with the next scripted (status, body) and keeps what it got."""

    def __init__(self, script: list[tuple[int, dict[str, Any]]]) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.script = script
        self.received: list[dict[str, Any]] = []


class Handler(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        assert self.headers["Content-Encoding"] == "gzip"
        assert self.headers["Authorization"] == "Bearer tok"
        self.server.received.append(json.loads(gzip.decompress(body)))
        status, answer = self.server.script.pop(0)
        payload = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:  # keep test output quiet
        pass


@pytest.fixture
def receiver(request: pytest.FixtureRequest) -> Iterator[Receiver]:
    server = Receiver(list(request.param))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()


def shipper_for(server: Receiver) -> Shipper:
    host, port = server.server_address[:2]
    return Shipper(server=f"http://{host!s}:{port}", token="tok", instance="db1")


EVENTS = [{"ts": "2026-11-01T00:00:00+00:00", "query": "SELECT 1", "query_time": 0.1}]
EVENT = SlowLogEventIn.model_construct(
    ts=datetime(2026, 11, 1, tzinfo=UTC), query="SELECT 1", query_time=0.1
)
CONTENT = IngestBatchIn.model_construct(batch_id="", instance="db1", events=[EVENT])
MASKED = IngestBatchIn.model_construct(
    batch_id="", instance="db1", source="slowlog", examples="masked", events=[EVENT]
)


@pytest.mark.parametrize("receiver", [[(202, {"status": "queued"})]], indirect=True)
def test_batch_carries_a_content_derived_id(receiver: Receiver) -> None:
    result = shipper_for(receiver).ship(MASKED)
    sent = receiver.received[0]
    assert (sent["instance"], sent["source"], sent["examples"]) == ("db1", "slowlog", "masked")
    assert sent["events"] == EVENTS
    expected_id = batch_id_for(
        "db1", json.dumps({"events": EVENTS}, separators=(",", ":")).encode()
    )
    assert sent["batch_id"] == result.batch_id == expected_id
    assert (result.status, result.duplicate) == ("queued", False)


@pytest.mark.parametrize(
    "receiver",
    [[(503, {"detail": "busy"}), (429, {"detail": "slow down"}), (200, {"status": "done"})]],
    indirect=True,
)
def test_transient_failures_are_retried(receiver: Receiver) -> None:
    result = shipper_for(receiver).ship(CONTENT)
    assert len(receiver.received) == 3
    assert receiver.received[0] == receiver.received[2]  # the same batch, the same id
    assert (result.status, result.duplicate) == ("done", True)


@pytest.mark.parametrize("receiver", [[(422, {"detail": "events.0.ts: bad"})]], indirect=True)
def test_refusal_stops_with_the_servers_reason(receiver: Receiver) -> None:
    with pytest.raises(ShipError, match=r"\(422\): events.0.ts: bad"):
        shipper_for(receiver).ship(CONTENT)
    assert len(receiver.received) == 1


def delivering_shipper(server: Receiver) -> Shipper:
    host, port = server.server_address[:2]
    return Shipper(server=f"http://{host!s}:{port}", token="tok", instance="db1", first_wait=0.001)


BODY = encode_batch(
    IngestBatchIn.model_construct(batch_id="b1", instance="db1", source="slowlog", events=[EVENT])
)


@pytest.mark.parametrize(
    "receiver",
    [[(503, {"detail": "busy"})] * 9 + [(401, {"detail": "no"}), (202, {"status": "queued"})]],
    indirect=True,
)
def test_deliver_retries_until_answered(receiver: Receiver) -> None:
    result = delivering_shipper(receiver).deliver(BODY, batch_id="b1", give_up=threading.Event())
    assert (len(receiver.received), result.status, result.duplicate) == (11, "queued", False)
    assert all(body["batch_id"] == "b1" for body in receiver.received)


@pytest.mark.parametrize("receiver", [[(422, {"detail": "events.0.ts: bad"})]], indirect=True)
def test_deliver_stops_at_a_refusal_for_good(receiver: Receiver) -> None:
    with pytest.raises(ShipError, match="422") as refused:
        delivering_shipper(receiver).deliver(BODY, batch_id="b1", give_up=threading.Event())
    assert (refused.value.status_code, len(receiver.received)) == (422, 1)


@pytest.mark.parametrize("receiver", [[(503, {"detail": "busy"})] * 3], indirect=True)
def test_deliver_gives_up_when_told(receiver: Receiver) -> None:
    give_up = threading.Event()
    threading.Timer(0.05, give_up.set).start()
    host, port = receiver.server_address[:2]
    shipper = Shipper(server=f"http://{host!s}:{port}", token="tok", instance="db1", first_wait=10)
    with pytest.raises(Exception, match="503"):
        shipper.deliver(BODY, batch_id="b1", give_up=give_up)
    assert len(receiver.received) <= 2
