"""Delivering chat messages to a real local HTTP receiver: formats on the wire, dedupe,
filters, rate limit and digest, retries with Retry-After, permanent failures. Time is
injected, so every schedule is checked exactly and nothing sleeps."""

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from prometheus_client import REGISTRY
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from quanta.core.config import Settings
from quanta.core.db import session_scope
from quanta.notify import digests, dispatch, service
from quanta.notify import publish as pub
from quanta.notify.events import ImpactNotice, SuggestionNotice
from quanta.notify.models import Channel, Delivery, DeliveryAttempt
from quanta.notify.schemas import ChannelCreate
from tests.fixtures.servers import free_port

# A day ahead at noon UTC: after every row's created_at, and quiet hours are predictable.
T0 = (datetime.now(UTC) + timedelta(days=1)).replace(hour=12, minute=0, second=0, microsecond=0)


@dataclass
class Received:
    """One request the receiver got."""

    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class Receiver:
    """A local HTTP server standing in for a chat service.

    Records every POST and answers from a script of (status, headers, body), then with the
    default answer once the script is used up.
    """

    script: list[tuple[int, dict[str, str], str]] = field(default_factory=list)
    default: tuple[int, dict[str, str], str] = (200, {}, "ok")
    requests: list[Received] = field(default_factory=list)
    port: int = 0

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def bodies(self) -> list[Any]:
        return [r.body for r in self.requests]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A receiver on a free port, stopped after the test."""
    state = Receiver()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with lock:
                state.requests.append(Received(self.path, dict(self.headers), json.loads(raw)))
                status, headers, body = state.script.pop(0) if state.script else state.default
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            data = body.encode()
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            pass  # keep test output clean

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def notice(suggestion_id: int = 1, **changes: Any) -> SuggestionNotice:
    values: dict[str, Any] = {
        "suggestion_id": suggestion_id,
        "query_id": "A1B2C3D4E5F60718",
        "fingerprint": "select * from orders where customer_id = ?",
        "instance": "db-1",
        "table": "shop.orders",
        "load_share": 0.42,
        "calls": 1200,
        "ddl": "ALTER TABLE shop.orders ADD INDEX idx_customer_id (customer_id)",
        "reason": "customer_id is compared for equality and no index starts with it.",
        "content_hash": f"hash-{suggestion_id}",
        "plan_before": "orders: ALL, 120000 rows",
        "plan_after": "orders: ref idx_customer_id, 12 rows",
    }
    return SuggestionNotice(**{**values, **changes})


@pytest.fixture
def notify_settings(settings: Settings) -> Settings:
    """The test store's settings with small, exact notification limits."""
    return settings.model_copy(
        update={
            "public_url": "https://quanta.example.com",
            "notify_max_per_hour": 2,
            "notify_max_attempts": 3,
            "notify_backoff_base_seconds": 2.0,
            "notify_backoff_max_seconds": 60.0,
            "notify_retry_after_max_seconds": 30.0,
            "notify_timeout_seconds": 5.0,
            # The receiver listens on 127.0.0.1, which is refused by default.
            "allow_private_webhooks": True,
        }
    )


def add_channel(factory: sessionmaker[Session], settings: Settings, url: str, **fields: Any) -> int:
    data = ChannelCreate(**{"name": f"c{free_port()}", "type": "webhook", "url": url, **fields})
    with session_scope(factory) as session:
        return service.create_channel(session=session, settings=settings, data=data).id


def publish(factory: sessionmaker[Session], settings: Settings, *notices: Any) -> list[int]:
    ids: list[int] = []
    with session_scope(factory) as session:
        for item in notices:
            if isinstance(item, ImpactNotice):
                ids += pub.publish_impact(session=session, settings=settings, notice=item)
            else:
                ids += pub.publish_suggestion(session=session, settings=settings, notice=item)
    return ids


def attempt(
    factory: sessionmaker[Session], settings: Settings, delivery_id: int, now: datetime
) -> datetime | None:
    with session_scope(factory) as session:
        return dispatch.attempt_delivery(session, settings, delivery_id, now)


def delivery(factory: sessionmaker[Session], delivery_id: int) -> Delivery:
    with session_scope(factory) as session:
        return session.get_one(Delivery, delivery_id)


def attempts(factory: sessionmaker[Session], delivery_id: int) -> list[tuple[Any, ...]]:
    with session_scope(factory) as session:
        rows = session.scalars(
            select(DeliveryAttempt)
            .where(DeliveryAttempt.delivery_id == delivery_id)
            .order_by(DeliveryAttempt.id)
        )
        return [(a.attempted_at, a.status_code, a.next_retry_at) for a in rows]


@pytest.mark.parametrize(
    ("channel_type", "check"),
    [
        (
            "slack",
            lambda body: (
                [b["type"] for b in body["blocks"]]
                == ["header", "section", "section", "section", "section", "context", "actions"]
                and body["blocks"][6]["elements"][0]["url"]
                == "https://quanta.example.com/queries/A1B2C3D4E5F60718?instance=db-1"
            ),
        ),
        (
            "teams",
            lambda body: (
                body["type"] == "message"
                and body["attachments"][0]["contentType"]
                == "application/vnd.microsoft.card.adaptive"
                and body["attachments"][0]["content"]["version"] == "1.4"
                and body["attachments"][0]["content"]["actions"][0]["type"] == "Action.OpenUrl"
            ),
        ),
        (
            "mattermost",
            lambda body: (
                set(body["attachments"][0])
                == {"fallback", "color", "title", "title_link", "text", "fields"}
            ),
        ),
        (
            "discord",
            lambda body: (
                body["embeds"][0]["description"].startswith(
                    "```sql\nALTER TABLE shop.orders ADD INDEX idx_customer_id (customer_id)\n```"
                )
                and body["allowed_mentions"] == {"parse": []}
            ),
        ),
        ("webhook", lambda body: body["suggestion"] == notice().to_dict()),
    ],
)
def test_each_service_receives_its_format(
    channel_type: str,
    check: Any,
    receiver: Receiver,
    session_factory: sessionmaker[Session],
    notify_settings: Settings,
) -> None:
    add_channel(
        session_factory, notify_settings, receiver.url(f"/{channel_type}"), type=channel_type
    )
    [delivery_id] = publish(session_factory, notify_settings, notice())

    assert attempt(session_factory, notify_settings, delivery_id, T0) is None

    [request] = receiver.requests
    assert request.path == f"/{channel_type}"
    assert request.headers["Content-Type"].startswith("application/json")
    assert check(request.body), json.dumps(request.body, indent=1)
    sent = delivery(session_factory, delivery_id)
    assert (sent.status, sent.sent_at, sent.attempts) == ("sent", T0, 1)
    assert attempts(session_factory, delivery_id) == [(T0, 200, None)]


def test_same_suggestion_once_per_channel_unless_it_changed(
    receiver: Receiver, session_factory: sessionmaker[Session], notify_settings: Settings
) -> None:
    add_channel(session_factory, notify_settings, receiver.url())
    first = publish(session_factory, notify_settings, notice())
    assert len(first) == 1
    assert publish(session_factory, notify_settings, notice()) == []
    changed = publish(session_factory, notify_settings, notice(content_hash="hash-1-v2"))
    assert len(changed) == 1
    assert changed != first


def test_channel_filters(
    receiver: Receiver, session_factory: sessionmaker[Session], notify_settings: Settings
) -> None:
    everything = add_channel(session_factory, notify_settings, receiver.url())
    db2_only = add_channel(session_factory, notify_settings, receiver.url(), instances=["db-2"])
    heavy_only = add_channel(session_factory, notify_settings, receiver.url(), min_load_share=0.5)
    impacts_only = add_channel(
        session_factory, notify_settings, receiver.url(), events=["annotation_impact"]
    )
    off = add_channel(session_factory, notify_settings, receiver.url(), enabled=False)

    def channels_for(item: Any) -> set[int]:
        ids = publish(session_factory, notify_settings, item)
        return {delivery(session_factory, i).channel_id for i in ids}

    assert channels_for(notice(1, load_share=0.42)) == {everything}
    assert channels_for(notice(2, instance="db-2", load_share=0.6)) == {
        everything,
        db2_only,
        heavy_only,
    }
    assert channels_for(notice(3, load_share=0.5)) == {everything, heavy_only}
    impact = ImpactNotice(3, "deploy", ["db-2"], [{"query_id": "A1", "metric": "load"}])
    assert channels_for(impact) == {impacts_only}
    assert channels_for(ImpactNotice(4, "no regressions", [], [])) == set()
    assert off not in channels_for(notice(5, load_share=0.9))


def test_rate_limit_rolls_the_overflow_into_one_digest(
    receiver: Receiver, session_factory: sessionmaker[Session], notify_settings: Settings
) -> None:
    add_channel(session_factory, notify_settings, receiver.url(), type="discord")
    ids = publish(session_factory, notify_settings, *(notice(i) for i in range(1, 6)))

    for minute, delivery_id in enumerate(ids):
        assert (
            attempt(session_factory, notify_settings, delivery_id, T0 + timedelta(minutes=minute))
            is None
        )
    assert [delivery(session_factory, i).status for i in ids] == [
        "sent",
        "sent",
        "held",
        "held",
        "held",
    ]
    assert len(receiver.requests) == 2  # at most notify_max_per_hour=2 in the hour

    with session_scope(session_factory) as session:
        # Both sent messages are younger than an hour until T0 + 61 min.
        assert (
            digests.notify_tick(
                session=session, settings=notify_settings, now=T0 + timedelta(minutes=30)
            )
            == []
        )
    with session_scope(session_factory) as session:
        [digest_id] = digests.flush_digests(
            session=session, settings=notify_settings, now=T0 + timedelta(minutes=60)
        )
    assert [delivery(session_factory, i).digest_id for i in ids[2:]] == [digest_id] * 3
    assert {delivery(session_factory, i).status for i in ids[2:]} == {"digested"}

    assert attempt(session_factory, notify_settings, digest_id, T0 + timedelta(minutes=60)) is None
    embed = receiver.requests[2].body["embeds"][0]
    assert embed["title"] == "Quanta digest: 3 messages held back (limit 2 per hour)"
    assert embed["description"].count("\n- [db-1 · shop.orders · 42.0% of load") == 2
    assert delivery(session_factory, digest_id).status == "sent"

    # A new suggestion now: the digest and the second message fill the hour until T0+61.
    [late] = publish(session_factory, notify_settings, notice(6))
    assert (
        attempt(session_factory, notify_settings, late, T0 + timedelta(minutes=60, seconds=30))
        is None
    )
    assert delivery(session_factory, late).status == "held"
    with session_scope(session_factory) as session:
        # One held message goes out as itself, not as a digest of one.
        assert digests.flush_digests(
            session=session, settings=notify_settings, now=T0 + timedelta(minutes=61)
        ) == [late]
    assert attempt(session_factory, notify_settings, late, T0 + timedelta(minutes=61)) is None
    assert receiver.requests[3].body["embeds"][0]["title"].startswith("Index suggestion")


def test_digest_waits_for_a_free_slot(
    receiver: Receiver, session_factory: sessionmaker[Session], notify_settings: Settings
) -> None:
    add_channel(session_factory, notify_settings, receiver.url())
    ids = publish(session_factory, notify_settings, *(notice(i) for i in range(1, 5)))
    for delivery_id in ids:
        attempt(session_factory, notify_settings, delivery_id, T0)
    with session_scope(session_factory) as session:
        [digest_id] = digests.flush_digests(
            session=session, settings=notify_settings, now=T0 + timedelta(hours=1)
        )
    # Two more messages went out meanwhile (say, a burst right at the hour): the digest waits.
    [a, b] = publish(session_factory, notify_settings, notice(10), notice(11))
    with session_scope(session_factory) as session:
        for delivery_id in (a, b):  # not held: pretend they were sent before the digest
            row = session.get_one(Delivery, delivery_id)
            row.status, row.sent_at = "sent", T0 + timedelta(minutes=61)
    free = attempt(session_factory, notify_settings, digest_id, T0 + timedelta(minutes=62))
    assert free == T0 + timedelta(minutes=121)
    assert len(receiver.requests) == 2


def test_429_with_retry_after_then_success(
    receiver: Receiver, session_factory: sessionmaker[Session], notify_settings: Settings
) -> None:
    receiver.script = [(429, {"Retry-After": "7"}, "rate limited")]
    add_channel(session_factory, notify_settings, receiver.url(), type="slack")
    [delivery_id] = publish(session_factory, notify_settings, notice())
    counted_before = {outcome: attempts_counted(outcome) for outcome in ("retry", "sent")}

    retry_at = attempt(session_factory, notify_settings, delivery_id, T0)
    assert retry_at == T0 + timedelta(seconds=7)  # Retry-After, not the 2 s backoff
    waiting = delivery(session_factory, delivery_id)
    assert (waiting.status, waiting.next_attempt_at) == ("pending", retry_at)
    assert waiting.last_error == "HTTP 429: the service is throttling messages."
    # A duplicate task arriving early sends nothing and schedules nothing more.
    assert attempt(session_factory, notify_settings, delivery_id, T0 + timedelta(seconds=3)) is None
    assert len(receiver.requests) == 1

    assert attempt(session_factory, notify_settings, delivery_id, retry_at) is None
    assert delivery(session_factory, delivery_id).status == "sent"
    assert attempts(session_factory, delivery_id) == [(T0, 429, retry_at), (retry_at, 200, None)]
    assert receiver.bodies()[0] == receiver.bodies()[1]
    # /metrics counts each attempt by outcome.
    assert {o: attempts_counted(o) - counted_before[o] for o in counted_before} == {
        "retry": 1,
        "sent": 1,
    }


def attempts_counted(outcome: str) -> float:
    labels = {"channel_type": "slack", "outcome": outcome}
    return REGISTRY.get_sample_value("quanta_notification_attempts_total", labels) or 0.0


def test_retry_after_is_capped(
    receiver: Receiver, session_factory: sessionmaker[Session], notify_settings: Settings
) -> None:
    receiver.script = [(429, {}, json.dumps({"message": "slow down", "retry_after": 4000}))]
    add_channel(session_factory, notify_settings, receiver.url(), type="discord")
    [delivery_id] = publish(session_factory, notify_settings, notice())
    # Discord's JSON retry_after is read; 4000 s is capped at notify_retry_after_max_seconds.
    assert attempt(session_factory, notify_settings, delivery_id, T0) == T0 + timedelta(seconds=30)


def test_server_error_forever_fails_after_max_attempts(
    receiver: Receiver, session_factory: sessionmaker[Session], notify_settings: Settings
) -> None:
    receiver.default = (503, {}, "upstream down")
    add_channel(session_factory, notify_settings, receiver.url(), type="teams")
    [delivery_id] = publish(session_factory, notify_settings, notice())

    second = attempt(session_factory, notify_settings, delivery_id, T0)
    assert second == T0 + timedelta(seconds=2)
    third = attempt(session_factory, notify_settings, delivery_id, second)
    assert third == second + timedelta(seconds=4)  # exponential: 2, 4, ...
    assert attempt(session_factory, notify_settings, delivery_id, third) is None

    failed = delivery(session_factory, delivery_id)
    assert (failed.status, failed.attempts, failed.next_attempt_at) == ("failed", 3, None)
    assert failed.last_error == (
        "Gave up after 3 attempts; last: HTTP 503: the service failed to take the message "
        "(server error)."
    )
    assert attempts(session_factory, delivery_id) == [
        (T0, 503, second),
        (second, 503, third),
        (third, 503, None),
    ]
    assert (
        attempt(session_factory, notify_settings, delivery_id, third + timedelta(hours=1)) is None
    )
    assert len(receiver.requests) == 3


def test_client_error_fails_at_once_without_the_services_text(
    receiver: Receiver, session_factory: sessionmaker[Session], notify_settings: Settings
) -> None:
    receiver.default = (401, {}, json.dumps({"message": "Invalid Webhook Token", "code": 50027}))
    add_channel(session_factory, notify_settings, receiver.url(), type="discord")
    [delivery_id] = publish(session_factory, notify_settings, notice())

    assert attempt(session_factory, notify_settings, delivery_id, T0) is None
    failed = delivery(session_factory, delivery_id)
    assert (failed.status, failed.attempts) == ("failed", 1)
    # What the target answered is never shown: the URL may point at no chat service at all.
    assert failed.last_error == (
        "HTTP 401: the service refused the webhook's credentials; check the URL."
    )


def test_slack_plain_text_error(
    receiver: Receiver, session_factory: sessionmaker[Session], notify_settings: Settings
) -> None:
    receiver.default = (404, {}, "no_service")
    add_channel(session_factory, notify_settings, receiver.url(), type="slack")
    [delivery_id] = publish(session_factory, notify_settings, notice())
    assert attempt(session_factory, notify_settings, delivery_id, T0) is None
    assert delivery(session_factory, delivery_id).last_error == (
        "HTTP 404: no webhook at this URL (deleted, or mistyped)."
    )


@pytest.mark.parametrize("channel_type", ["slack", "webhook"])
def test_unreachable_service_is_retried(
    channel_type: str, session_factory: sessionmaker[Session], notify_settings: Settings
) -> None:
    add_channel(
        session_factory, notify_settings, f"http://127.0.0.1:{free_port()}/x", type=channel_type
    )
    [delivery_id] = publish(session_factory, notify_settings, notice())
    assert attempt(session_factory, notify_settings, delivery_id, T0) == T0 + timedelta(seconds=2)
    row = delivery(session_factory, delivery_id)
    assert row.status == "pending"
    assert row.last_error is not None
    assert row.last_error.startswith("Could not reach the webhook")
    assert attempts(session_factory, delivery_id) == [(T0, None, T0 + timedelta(seconds=2))]


def test_quiet_hours_hold_messages_until_they_end(
    receiver: Receiver, session_factory: sessionmaker[Session], notify_settings: Settings
) -> None:
    add_channel(
        session_factory, notify_settings, receiver.url(), quiet_start_hour=22, quiet_end_hour=6
    )
    [delivery_id] = publish(session_factory, notify_settings, notice())
    late_evening = T0.replace(hour=23, minute=15)
    morning = (T0 + timedelta(days=1)).replace(hour=6)
    assert attempt(session_factory, notify_settings, delivery_id, late_evening) == morning
    assert receiver.requests == []
    assert attempt(session_factory, notify_settings, delivery_id, morning) is None
    assert delivery(session_factory, delivery_id).status == "sent"


def test_annotation_impact_is_delivered(
    receiver: Receiver, session_factory: sessionmaker[Session], notify_settings: Settings
) -> None:
    add_channel(
        session_factory,
        notify_settings,
        receiver.url(),
        type="mattermost",
        events=["new_suggestion", "annotation_impact"],
    )
    impact = ImpactNotice(
        9,
        "ALTER TABLE orders DROP INDEX idx_status",
        ["db-1"],
        [{"fingerprint": "select * from orders where status = ?", "metric": "load", "change": 2.5}],
    )
    [delivery_id] = publish(session_factory, notify_settings, impact)
    assert publish(session_factory, notify_settings, impact) == []  # same impact: once
    assert attempt(session_factory, notify_settings, delivery_id, T0) is None
    [attachment] = receiver.requests[0].body["attachments"]
    # Markdown in Mattermost's title: the annotation's text is escaped.
    assert attachment["title"] == r"Regressions after “ALTER TABLE orders DROP INDEX idx\_status”"
    assert attachment["title_link"] == "https://quanta.example.com/annotations/9"
    assert attachment["text"] == r"- select \* from orders where status = ?: load (+250%)"


def test_disabled_channel_cancels_its_pending_messages(
    receiver: Receiver, session_factory: sessionmaker[Session], notify_settings: Settings
) -> None:
    channel_id = add_channel(session_factory, notify_settings, receiver.url())
    [delivery_id] = publish(session_factory, notify_settings, notice())
    with session_scope(session_factory) as session:
        service.update_channel(
            session=session,
            settings=notify_settings,
            channel_id=channel_id,
            data=service.ChannelUpdate(enabled=False),
        )
    assert attempt(session_factory, notify_settings, delivery_id, T0) is None
    assert delivery(session_factory, delivery_id).status == "cancelled"
    assert receiver.requests == []


def test_tick_requeues_lost_deliveries(
    receiver: Receiver, session_factory: sessionmaker[Session], notify_settings: Settings
) -> None:
    add_channel(session_factory, notify_settings, receiver.url())
    [delivery_id] = publish(session_factory, notify_settings, notice())
    with session_scope(session_factory) as session:
        now = datetime.now(UTC)
        assert digests.notify_tick(session=session, settings=notify_settings, now=now) == []
        later = now + timedelta(seconds=notify_settings.notify_requeue_after_seconds + 1)
        assert digests.notify_tick(session=session, settings=notify_settings, now=later) == [
            delivery_id
        ]


def test_backoff_doubles_up_to_the_cap(notify_settings: Settings) -> None:
    delays = [dispatch.backoff_seconds(notify_settings, n) for n in range(1, 9)]
    assert delays == [2, 4, 8, 16, 32, 60, 60, 60]


@pytest.mark.parametrize(
    ("start", "end", "hour", "minute", "expected"),
    [
        (22, 6, 23, 15, (1, 6)),  # spans midnight: ends tomorrow at 06:00
        (22, 6, 3, 0, (0, 6)),  # after midnight: ends today at 06:00
        (22, 6, 6, 0, None),  # the end hour is not quiet
        (22, 6, 12, 0, None),
        (9, 17, 9, 0, (0, 17)),  # a daytime window
        (9, 17, 17, 30, None),
    ],
)
def test_quiet_until(
    start: int, end: int, hour: int, minute: int, expected: tuple[int, int] | None
) -> None:
    channel = Channel(quiet_start_hour=start, quiet_end_hour=end)
    now = T0.replace(hour=hour, minute=minute)
    until = dispatch.quiet_until(channel, now)
    if expected is None:
        assert until is None
    else:
        days, end_hour = expected
        assert until == (now + timedelta(days=days)).replace(hour=end_hour, minute=0)


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "http://127.0.0.1:8000"),
        ({"port": 9123}, "http://127.0.0.1:9123"),  # the port Quanta serves, not 8000
        ({"host": "0.0.0.0", "port": 8080}, "http://127.0.0.1:8080"),
        ({"host": "::1", "port": 8080}, "http://[::1]:8080"),
        ({"public_url": "https://quanta.example.com/", "port": 9123}, "https://quanta.example.com"),
    ],
)
def test_links_default_to_the_address_served(env: dict[str, Any], expected: str) -> None:
    assert Settings(env="test", **env).link_base == expected
