"""A suggestion reaches a chat service through the real worker: `quanta run` (API, Celery
worker on the notify queue, beat) posts it to a local receiver, honouring Retry-After."""

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from quanta.core.config import Settings
from quanta.core.db import create_db_engine, create_session_factory, session_scope
from quanta.notify import publish
from tests.backend.test_notify_service import Receiver, notice, receiver  # noqa: F401
from tests.fixtures.quanta import quanta_run
from tests.fixtures.servers import PostgresServer, RedisServer
from tests.helpers import HTTP

pytestmark = pytest.mark.long(seconds=30)


def test_worker_delivers_with_retry_after(tmp_path: Path, receiver: Receiver) -> None:  # noqa: F811
    check_delivery(tmp_path / "data", receiver)


@pytest.mark.services
def test_postgresql_and_redis(
    tmp_path: Path,
    receiver: Receiver,  # noqa: F811
    postgres_server: PostgresServer,
    redis_server: RedisServer,
) -> None:
    database_url = postgres_server.create_database("notify")
    check_delivery(
        tmp_path / "data", receiver, database_url=database_url, redis_url=redis_server.url
    )


def check_delivery(
    data_dir: Path,
    hook: Receiver,
    database_url: str | None = None,
    redis_url: str | None = None,
) -> None:
    """Create a channel over HTTP, publish a suggestion in-process, see the worker deliver it."""
    hook.script = [(429, {"Retry-After": "1"}, "slow down")]
    # The receiver listens on 127.0.0.1: a private address, refused unless allowed.
    private_ok = {"QUANTA_ALLOW_PRIVATE_WEBHOOKS": "true"}
    with quanta_run(
        data_dir, database_url=database_url, redis_url=redis_url, settings=private_ok
    ) as server:
        headers = {"Authorization": f"Bearer {server.token}"}
        created = HTTP.post(
            f"{server.url}/api/v1/channels",
            json={"name": "ops", "type": "slack", "url": hook.url("/services/T/B/x")},
            headers=headers,
            timeout=30,
        )
        assert created.status_code == 201, created.text
        channel_id = created.json()["id"]

        # The advisor's side: publish in a transaction on the same store; the delivery task is
        # enqueued on the broker after the commit and the running worker picks it up.
        settings = Settings(
            env="test", data_dir=data_dir, database_url=database_url, redis_url=redis_url
        )
        engine = create_db_engine(settings)
        try:
            with session_scope(create_session_factory(engine)) as session:
                [delivery_id] = publish.publish_suggestion(
                    session=session, settings=settings, notice=notice()
                )
        finally:
            engine.dispose()

        def sent() -> Any:
            rows = server.get(f"/api/v1/channels/{channel_id}/deliveries").json()
            return rows[0] if rows and rows[0]["status"] == "sent" else None

        delivery = server.wait_for(sent, timeout=60, what="the delivery to be sent")
    assert delivery["id"] == delivery_id
    assert [a["status_code"] for a in delivery["attempts"]] == [429, 200]
    assert len(hook.requests) == 2
    blocks = hook.requests[1].body["blocks"]
    assert blocks[0]["text"]["text"] == "Index suggestion for shop.orders on db-1"
    first, second = (datetime.fromisoformat(a["attempted_at"]) for a in delivery["attempts"])
    assert second - first >= timedelta(seconds=1)  # Retry-After: 1 was honoured
