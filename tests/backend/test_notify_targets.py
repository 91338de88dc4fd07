"""Channel URLs: loopback, link-local, private, multicast and unspecified addresses are
refused (at create, update and before every POST) unless QUANTA_ALLOW_PRIVATE_WEBHOOKS;
redirects are never followed; the POST goes to the address that was checked.

No test sends anything to a non-loopback address: every refusal happens before connecting,
and the only host names resolved are `localhost` (the hosts file) and IP literals.
"""

import ipaddress
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from quanta.core.config import Settings
from quanta.core.db import session_scope
from quanta.notify import dispatch, publish, service
from quanta.notify.delivery import pinned_request, post_to
from quanta.notify.models import Channel, Delivery
from quanta.notify.schemas import ChannelCreate
from quanta.notify.targets import Target, address_refusal
from tests.backend.test_notify_service import T0, Receiver, notice, receiver  # noqa: F401

REFUSED_URLS = [
    ("http://127.0.0.1:9/hook", "loopback"),
    ("http://127.8.9.10/hook", "loopback"),
    ("http://localhost:9/hook", "loopback"),  # a name that resolves to loopback
    ("http://[::1]:9/hook", "loopback"),
    ("http://[::ffff:127.0.0.1]/hook", "loopback"),
    ("http://10.0.0.1/hook", "private"),
    ("http://172.16.5.4/hook", "private"),
    ("http://192.168.1.1/hook", "private"),
    ("http://[fc00::1]/hook", "private"),
    ("http://169.254.169.254/latest/meta-data/", "link-local"),
    ("http://[fe80::1]/hook", "link-local"),
    ("http://0.0.0.0:9/hook", "unspecified"),
    ("http://[::]/hook", "unspecified"),
    ("http://224.0.0.1/hook", "multicast"),
    ("http://[ff02::1]/hook", "multicast"),
    ("http://100.64.0.1/hook", "non-public"),  # carrier-grade NAT, shared space
    # IPv6 forms carrying an IPv4 address (issue 39): refused for what that address is.
    ("http://[::127.0.0.1]:9/hook", "loopback"),  # IPv4-compatible
    ("http://[64:ff9b::7f00:1]:9/hook", "loopback"),  # NAT64
    ("http://[2002:7f00:1::1]:9/hook", "loopback"),  # 6to4
]


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("::ffff:10.1.2.3", "private"),
        ("10.255.255.255", "private"),
        ("172.31.0.1", "private"),
        ("172.32.0.1", None),  # just outside 172.16/12
        ("192.168.0.1", "private"),
        ("fd12:3456::1", "private"),
        ("169.254.0.1", "link-local"),
        ("fe80::abcd", "link-local"),
        ("0.0.0.0", "unspecified"),
        ("239.1.2.3", "multicast"),
        ("198.51.100.7", "private"),  # documentation (Python counts it private)
        ("100.100.0.1", "non-public"),
        ("8.8.8.8", None),
        ("2606:4700::1111", None),
    ],
)
def test_address_refusal(address: str, expected: str | None) -> None:
    assert address_refusal(ipaddress.ip_address(address)) == expected


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        # IPv4-mapped (::ffff:0:0/96) and IPv4-translated (::ffff:0:0:0/96, SIIT)
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:0:127.0.0.1", "loopback"),
        ("::ffff:0:10.0.0.1", "private"),
        # IPv4-compatible (::/96), :: and ::1 being what they are
        ("::127.0.0.1", "loopback"),
        ("::169.254.169.254", "link-local"),
        ("::", "unspecified"),
        ("::1", "loopback"),
        # NAT64, the well-known prefix: its IPv4 address decides; the local-use prefix is
        # refused whole (its IPv4 address sits where the site's prefix length puts it)
        ("64:ff9b::7f00:1", "loopback"),
        ("64:ff9b::a9fe:a9fe", "link-local"),
        ("64:ff9b::808:808", None),
        ("64:ff9b:1::7f00:1", "local-use NAT64"),
        ("64:ff9b:1:7f00:1::", "local-use NAT64"),
        ("64:ff9b:1::808:808", "local-use NAT64"),
        # 6to4 (2002::/16): the IPv4 address in bits 16-47
        ("2002:7f00:1::1", "loopback"),
        ("2002:c0a8:101::1", "private"),
        ("2002:808:808::1", None),
        # Teredo (2001::/32): server 65.54.227.120, client 127.0.0.1 (bits inverted);
        # with a public client the prefix itself is not a public address
        ("2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback"),
        ("2001:0:4136:e378:8000:63bf:f7f7:f7f7", "private"),
    ],
)
def test_ipv6_forms_carrying_an_ipv4_address(address: str, expected: str | None) -> None:
    assert address_refusal(ipaddress.ip_address(address)) == expected


def create(client: TestClient, url: str) -> Any:
    return client.post("/api/v1/channels", json={"name": "ops", "type": "slack", "url": url})


@pytest.mark.parametrize(("url", "kind"), REFUSED_URLS)
def test_create_refuses_non_public_addresses(
    client: TestClient, session_factory: sessionmaker[Session], url: str, kind: str
) -> None:
    response = create(client, url)
    assert response.status_code == 422, response.text
    detail = response.json()["detail"]
    assert f"points at a {kind} address" in detail
    assert "QUANTA_ALLOW_PRIVATE_WEBHOOKS" in detail
    with session_scope(session_factory) as session:
        assert session.scalar(select(func.count()).select_from(Channel)) == 0


def test_update_refuses_them_too(client: TestClient, receiver: Receiver) -> None:  # noqa: F811
    settings: Settings = client.app.state.settings  # type: ignore[attr-defined]
    allowed = settings.model_copy(update={"allow_private_webhooks": True})
    factory = client.app.state.session_factory  # type: ignore[attr-defined]
    with session_scope(factory) as session:
        data = ChannelCreate(name="ops", type="slack", url=receiver.url())
        channel_id = service.create_channel(session=session, settings=allowed, data=data).id
    patched = client.patch(f"/api/v1/channels/{channel_id}", json={"url": "http://10.0.0.1/x"})
    assert patched.status_code == 422
    assert "points at a private address, 10.0.0.1" in patched.json()["detail"]
    assert client.get(f"/api/v1/channels/{channel_id}").json()["url"].startswith("http://127.0.0.1")


@pytest.fixture
def allowed_settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"allow_private_webhooks": True})


def add_local_channel(
    factory: sessionmaker[Session], settings: Settings, url: str, channel_type: str = "slack"
) -> int:
    """A channel saved while private targets were allowed (or before this check existed)."""
    with session_scope(factory) as session:
        data = ChannelCreate(name=f"c-{channel_type}", type=channel_type, url=url)  # type: ignore[arg-type]
        return service.create_channel(session=session, settings=settings, data=data).id


def test_each_post_checks_the_address_again(
    receiver: Receiver,  # noqa: F811
    session_factory: sessionmaker[Session],
    settings: Settings,
    allowed_settings: Settings,
) -> None:
    channel_id = add_local_channel(session_factory, allowed_settings, receiver.url())
    assert not settings.allow_private_webhooks
    with session_scope(session_factory) as session:
        tried = service.send_test(session=session, settings=settings, channel_id=channel_id)
        [delivery_id] = publish.publish_suggestion(
            session=session, settings=settings, notice=notice()
        )
    assert (tried.delivered, tried.status_code) == (False, None)
    assert tried.error is not None
    assert tried.error.startswith("The webhook URL points at a loopback address, 127.0.0.1")
    with session_scope(session_factory) as session:
        # Refused for good: not retried, whatever notify_max_attempts says.
        assert dispatch.attempt_delivery(session, settings, delivery_id, T0) is None
    with session_scope(session_factory) as session:
        row = session.get_one(Delivery, delivery_id)
        assert (row.status, row.attempts) == ("failed", 1)
        assert "loopback address" in str(row.last_error)
    assert receiver.requests == []  # nothing was sent


@pytest.mark.parametrize("channel_type", ["slack", "teams", "mattermost", "discord", "webhook"])
def test_redirects_are_not_followed(
    channel_type: str,
    receiver: Receiver,  # noqa: F811
    session_factory: sessionmaker[Session],
    allowed_settings: Settings,
) -> None:
    receiver.default = (302, {"Location": receiver.url("/elsewhere")}, "moved: <secret page>")
    channel_id = add_local_channel(session_factory, allowed_settings, receiver.url(), channel_type)
    with session_scope(session_factory) as session:
        tried = service.send_test(session=session, settings=allowed_settings, channel_id=channel_id)
    assert [r.path for r in receiver.requests] == ["/hook"]  # /elsewhere never asked
    assert (tried.delivered, tried.status_code) == (False, 302)
    assert tried.error == (
        "HTTP 302: the webhook answered with a redirect, which is not followed: use the final URL."
    )


def test_the_post_goes_to_the_checked_address(receiver: Receiver) -> None:  # noqa: F811
    # hooks.quanta.test does not resolve: reaching the receiver proves the POST went to the
    # checked address, with the name kept as the Host header.
    name = f"hooks.quanta.test:{receiver.port}"
    target = Target(f"http://{name}/T/x", "hooks.quanta.test", ipaddress.ip_address("127.0.0.1"))
    url, headers, extensions = pinned_request(target)
    assert (url, headers["Host"], extensions) == (
        f"http://127.0.0.1:{receiver.port}/T/x",
        name,
        {"sni_hostname": "hooks.quanta.test"},
    )
    status, _body, _retry_after, error = post_to(target, {"text": "hi"}, timeout=5)
    assert (status, error) == (200, None)
    [request] = receiver.requests
    assert (request.path, request.headers["Host"], request.body) == ("/T/x", name, {"text": "hi"})


def test_ipv6_targets_are_bracketed() -> None:
    target = Target("https://hooks.example/x", "hooks.example", ipaddress.ip_address("2001:db8::5"))
    assert pinned_request(target)[0] == "https://[2001:db8::5]/x"
