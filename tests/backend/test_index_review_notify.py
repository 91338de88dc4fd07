"""The weekly index_review chat event: an instance's findings not announced before, once, to
the channels that took the event, in every service's format (delivered to a real local HTTP
receiver); a finding that goes away and comes back is announced again."""

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from quanta.core.config import Settings
from quanta.core.db import session_scope
from quanta.instances.models import Instance
from quanta.notify.formats.slack import BACKTICK_LOOKALIKE
from quanta.notify.models import Delivery
from quanta.statistics import review
from quanta.tables.models import TableSnapshot
from quanta_worker.celery_app import beat_schedule
from tests.backend.test_notify_service import (
    Receiver,
    add_channel,
    attempt,
    notify_settings,
    receiver,
)

__all__ = ["notify_settings", "receiver"]  # fixtures used by name

T0 = datetime.now(UTC).replace(microsecond=0) + timedelta(days=1)
# A name a monitored server may well hold: Markdown, a link and a mention in it.
HOSTILE = "dup_[x](http://evil.example)_@here"
ORDERS: dict[str, Any] = {
    "engine": "InnoDB",
    "columns": {name: {"type": "int", "nullable": False} for name in ("id", "a", "b")},
    "primary_key": ["id"],
    "indexes": [
        {"name": "idx_a", "columns": ["a"], "unique": False},
        {"name": HOSTILE, "columns": ["a"], "unique": False},
        {"name": "idx_b_id", "columns": ["b", "id"], "unique": False},
    ],
}


def add_instance(factory: sessionmaker[Session], name: str, document: dict[str, Any]) -> int:
    with session_scope(factory) as session:
        instance = Instance(name=name)
        session.add(instance)
        session.flush()
        session.add(
            TableSnapshot(
                instance_id=instance.id, table_name="shop.orders", taken_at=T0, changed_at=T0,
                server_flavor="mariadb", server_version="10.11", content_hash="x",
                document=document,
            )
        )  # fmt: skip
        return instance.id


def announce(factory: sessionmaker[Session], settings: Settings) -> list[int]:
    with session_scope(factory) as session:
        return review.announce_index_reviews(session=session, settings=settings, now=T0)


def payloads(factory: sessionmaker[Session]) -> list[tuple[int, str, list[str]]]:
    with session_scope(factory) as session:
        rows = session.scalars(select(Delivery).order_by(Delivery.id))
        return [
            (d.channel_id, d.event, [f"{f['kind']} {f['index']}" for f in d.payload["findings"]])
            for d in rows
        ]


def test_new_findings_are_announced_once_to_the_channels_that_take_them(
    receiver: Receiver, session_factory: sessionmaker[Session], notify_settings: Settings
) -> None:
    add_instance(session_factory, "db1", ORDERS)
    taking = add_channel(session_factory, notify_settings, receiver.url(), events=["index_review"])
    add_channel(session_factory, notify_settings, receiver.url(), events=["new_suggestion"])
    add_channel(
        session_factory, notify_settings, receiver.url(), events=["index_review"],
        instances=["other"],
    )  # fmt: skip

    [delivery_id] = announce(session_factory, notify_settings)
    expected = [f"duplicate {HOSTILE}", "primary_key_suffix idx_b_id"]
    assert payloads(session_factory) == [(taking, "index_review", expected)]
    assert announce(session_factory, notify_settings) == []  # nothing new: nothing sent

    assert attempt(session_factory, notify_settings, delivery_id, T0) is None
    [request] = receiver.requests
    body = request.body
    assert (body["event"], body["url"]) == (
        "index_review",
        "https://quanta.example.com/instances/1/index-review",
    )
    assert [f["ddl"] for f in body["review"]["findings"]] == [
        f"ALTER TABLE shop.orders DROP INDEX `{HOSTILE}`",
        "ALTER TABLE shop.orders DROP INDEX idx_b_id, ADD INDEX idx_b_id (b)",
    ]

    # The duplicate is dropped: forgotten. Added back later: announced again, alone.
    fixed = copy.deepcopy(ORDERS)
    fixed["indexes"] = [i for i in ORDERS["indexes"] if i["name"] != HOSTILE]
    set_document(session_factory, fixed)
    assert announce(session_factory, notify_settings) == []
    set_document(session_factory, ORDERS)
    announce(session_factory, notify_settings)
    assert payloads(session_factory)[-1] == (taking, "index_review", [f"duplicate {HOSTILE}"])


def set_document(factory: sessionmaker[Session], document: dict[str, Any]) -> None:
    with session_scope(factory) as session:
        session.scalars(select(TableSnapshot)).one().document = document


ESCAPED = "dup\\_\\[x\\]\u200b(http\\://evil.example)\\_@\u200bhere"  # Markdown shown as is
DDL = f"ALTER TABLE shop.orders DROP INDEX `{HOSTILE}`"
LINK = "https://quanta.example.com/instances/1/index-review"
TITLE = "Index review of db1: 2 new findings"
FIRST_LINE = f"Duplicate: shop.orders {ESCAPED}: {ESCAPED} holds the same columns as idx\\_a"


SLACK_DDL = DDL.replace("`", BACKTICK_LOOKALIKE)


def slack_ok(body: dict[str, Any]) -> bool:
    blocks = body["blocks"]
    return (
        [b["type"] for b in blocks] == ["header", "context", "section", "section", "actions"]
        and blocks[0]["text"]["text"] == TITLE
        # mrkdwn links are <url|text>: the Markdown stays text; the DDL in a block of its own.
        # Names in inline code, the DDL in a code block: a backtick in them is a lookalike.
        and blocks[2]["text"]["text"].startswith(f"• `Duplicate: shop.orders {HOSTILE}: ")
        and blocks[2]["text"]["text"].endswith(
            f"\n```\n{DDL.replace('`', BACKTICK_LOOKALIKE)}\n```"
        )
        and blocks[4]["elements"][0]["url"] == LINK
    )


def teams_ok(body: dict[str, Any]) -> bool:
    content = body["attachments"][0]["content"]
    finding, ddl = content["body"][2:4]
    return (
        content["body"][0]["text"] == TITLE
        and finding["text"].startswith(f"- {FIRST_LINE}")
        and ddl
        == {
            "type": "TextBlock",
            "text": f"ALTER TABLE shop.orders DROP INDEX \\`{ESCAPED}\\`",
            "wrap": True,
            "fontType": "Monospace",
        }
        and content["actions"]
        == [{"type": "Action.OpenUrl", "title": "Open index review in Quanta", "url": LINK}]
    )


def mattermost_ok(body: dict[str, Any]) -> bool:
    (attachment,) = body["attachments"]
    lines = attachment["text"].split("\n")
    return (
        (attachment["title"], attachment["title_link"]) == (TITLE, LINK)
        and lines[0].startswith(f"- {FIRST_LINE}")
        and lines[1] == f"  `` {DDL} ``"  # a code span its own backticks cannot close
    )


def discord_ok(body: dict[str, Any]) -> bool:
    (embed,) = body["embeds"]
    lines = embed["description"].split("\n")
    return (
        (embed["title"], embed["url"]) == (TITLE, LINK)
        and lines[0].startswith(f"- {FIRST_LINE}")
        and lines[1] == f"`` {DDL} ``"
        and body["allowed_mentions"] == {"parse": []}
    )


@pytest.mark.parametrize(
    ("channel_type", "check"),
    [("slack", slack_ok), ("teams", teams_ok), ("mattermost", mattermost_ok),
     ("discord", discord_ok)],
)  # fmt: skip
def test_each_service_lays_out_the_review(
    channel_type: str,
    check: Any,
    receiver: Receiver,
    session_factory: sessionmaker[Session],
    notify_settings: Settings,
) -> None:
    add_instance(session_factory, "db1", ORDERS)
    add_channel(
        session_factory, notify_settings, receiver.url(), type=channel_type,
        events=["index_review"],
    )  # fmt: skip
    [delivery_id] = announce(session_factory, notify_settings)
    assert attempt(session_factory, notify_settings, delivery_id, T0) is None
    [request] = receiver.requests
    assert check(request.body), request.body


def test_the_review_is_announced_weekly(settings: Settings) -> None:
    job = beat_schedule(settings)["announce-index-reviews"]
    assert (job["task"], job["schedule"]) == (
        "quanta.statistics.announce_index_reviews",
        7 * 24 * 3600.0,
    )
