"""The pure payload builders: the exact JSON each chat service receives."""

from dataclasses import replace
from typing import Any

import pytest

from quanta.notify import formats
from quanta.notify.events import ImpactNotice, SuggestionNotice
from quanta.notify.formats import common, discord, slack

PUBLIC_URL = "https://quanta.example.com/"
LINK = "https://quanta.example.com/queries/A1B2C3D4E5F60718?instance=db-1"
FINGERPRINT = "select * from orders where customer_id = ? and status = ? order by created_at"
DDL = (
    "ALTER TABLE shop.orders ADD INDEX idx_customer_id_status_created_at "
    "(customer_id, status, created_at)"
)
REASON = "customer_id and status are equalities, then created_at serves the ORDER BY."
BEFORE = "orders: ALL, 1,200,000 rows, filesort"
AFTER = "orders: ref idx_customer_id_status_created_at, 40 rows"
# The same as Markdown formats carry them: underscores and asterisks escaped (see
# test_notify_escaping.py for every rule).
FINGERPRINT_MD = r"select \* from orders where customer\_id = ? and status = ? order by created\_at"
DDL_MD = (
    r"ALTER TABLE shop.orders ADD INDEX idx\_customer\_id\_status\_created\_at "
    r"(customer\_id, status, created\_at)"
)
REASON_MD = r"customer\_id and status are equalities, then created\_at serves the ORDER BY."
AFTER_MD = r"orders: ref idx\_customer\_id\_status\_created\_at, 40 rows"

NOTICE = SuggestionNotice(
    suggestion_id=7,
    query_id="A1B2C3D4E5F60718",
    fingerprint=FINGERPRINT,
    instance="db-1",
    table="shop.orders",
    load_share=0.4234,
    calls=12345,
    ddl=DDL,
    reason=REASON,
    content_hash="h1",
    plan_before=BEFORE,
    plan_after=AFTER,
)
UNVALIDATED = replace(NOTICE, plan_after=None)
IMPACT = ImpactNotice(
    annotation_id=3,
    text="Deploy 2026.11.22 (orders service)",
    instance_names=["db-1"],
    regressions=[
        {
            "query_id": "A1B2C3D4E5F60718",
            "fingerprint": "select * from orders where id = ?",
            "instance": "db-1",
            "metric": "load",
            "before": 0.25,
            "after": 1.5,
            "change": 5.0,
        },
        {"query_id": "0011223344556677"},
    ],
)


def message(channel_type: str, notice: SuggestionNotice = NOTICE) -> dict[str, Any]:
    return formats.event_message(channel_type, "new_suggestion", notice.to_dict(), PUBLIC_URL)


def test_slack_block_kit() -> None:
    assert message("slack") == {
        "text": f"Index suggestion for shop.orders on db-1 (42.3% of load): {DDL}",
        "mrkdwn": False,
        "blocks": [
            {
                "type": "header",
                "text": {"type": "plain_text", "text": "Index suggestion for shop.orders on db-1"},
            },
            {"type": "section", "text": mrkdwn(f"```\n{FINGERPRINT}\n```")},
            {
                "type": "section",
                "fields": [
                    mrkdwn("*Instance*\n`db-1`"),
                    mrkdwn("*Load share*\n42.3%"),
                    mrkdwn("*Calls*\n12,345"),
                    mrkdwn("*Table*\n`shop.orders`"),
                ],
            },
            {"type": "section", "text": mrkdwn(f"```\n{DDL}\n```")},
            {"type": "section", "text": {"type": "plain_text", "text": f"Why: {REASON}"}},
            {
                "type": "context",
                "elements": [
                    {"type": "plain_text", "text": f"Plan before: {BEFORE}"},
                    {"type": "plain_text", "text": f"Plan after: {AFTER}"},
                ],
            },
            {
                "type": "actions",
                "elements": [
                    {
                        "type": "button",
                        "text": {"type": "plain_text", "text": "Open query in Quanta"},
                        "url": LINK,
                        "action_id": "open_in_quanta",
                    }
                ],
            },
        ],
    }


def mrkdwn(text: str) -> dict[str, object]:
    return {"type": "mrkdwn", "text": text, "verbatim": True}


def test_slack_without_validation_has_no_plan_context() -> None:
    types = [block["type"] for block in message("slack", UNVALIDATED)["blocks"]]
    assert types == ["header", "section", "section", "section", "section", "actions"]


def test_slack_escapes_mrkdwn_control_characters() -> None:
    notice = replace(NOTICE, fingerprint="select * from t where a < ? and b > ? & c")
    assert message("slack", notice)["blocks"][1]["text"]["text"] == (
        "```\nselect * from t where a &lt; ? and b &gt; ? &amp; c\n```"
    )


def test_teams_adaptive_card() -> None:
    assert message("teams") == {
        "type": "message",
        "attachments": [
            {
                "contentType": "application/vnd.microsoft.card.adaptive",
                "contentUrl": None,
                "content": {
                    "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
                    "type": "AdaptiveCard",
                    "version": "1.4",
                    "body": [
                        {
                            "type": "TextBlock",
                            "text": "Index suggestion for shop.orders on db-1",
                            "wrap": True,
                            "size": "Medium",
                            "weight": "Bolder",
                        },
                        {
                            "type": "TextBlock",
                            "text": FINGERPRINT_MD,
                            "wrap": True,
                            "fontType": "Monospace",
                        },
                        {
                            "type": "FactSet",
                            "facts": [
                                {"title": "Instance", "value": "db-1"},
                                {"title": "Table", "value": "shop.orders"},
                                {"title": "Load share", "value": "42.3%"},
                                {"title": "Calls", "value": "12,345"},
                            ],
                        },
                        {
                            "type": "TextBlock",
                            "text": "Suggested index",
                            "wrap": True,
                            "weight": "Bolder",
                        },
                        {
                            "type": "TextBlock",
                            "text": DDL_MD,
                            "wrap": True,
                            "fontType": "Monospace",
                        },
                        {"type": "TextBlock", "text": REASON_MD, "wrap": True},
                        {
                            "type": "TextBlock",
                            "text": f"Plan before: {BEFORE}",
                            "wrap": True,
                            "isSubtle": True,
                        },
                        {
                            "type": "TextBlock",
                            "text": f"Plan after: {AFTER_MD}",
                            "wrap": True,
                            "isSubtle": True,
                        },
                    ],
                    "msteams": {"width": "Full"},
                    "actions": [
                        {"type": "Action.OpenUrl", "title": "Open query in Quanta", "url": LINK}
                    ],
                },
            }
        ],
    }


def test_mattermost_attachment() -> None:
    assert message("mattermost") == {
        "attachments": [
            {
                "fallback": f"Index suggestion for shop.orders on db-1: {DDL}",
                "color": "#E8A317",
                "title": "Index suggestion for shop.orders on db-1",
                "title_link": LINK,
                "text": f"`{FINGERPRINT}`\n```sql\n{DDL}\n```\n**Why:** {REASON_MD}",
                "fields": [
                    {"title": "Instance", "value": "db-1", "short": True},
                    {"title": "Table", "value": "shop.orders", "short": True},
                    {"title": "Load share", "value": "42.3%", "short": True},
                    {"title": "Calls", "value": "12,345", "short": True},
                    {"title": "Plan before", "value": BEFORE, "short": False},
                    {"title": "Plan after", "value": AFTER_MD, "short": False},
                ],
            }
        ]
    }


def test_discord_embed() -> None:
    assert message("discord") == {
        "embeds": [
            {
                "title": "Index suggestion for shop.orders on db-1",
                "url": LINK,
                "description": f"```sql\n{DDL}\n```\n{REASON_MD}",
                "color": 0xE8A317,
                "fields": [
                    {"name": "Query", "value": f"`{FINGERPRINT}`", "inline": False},
                    {"name": "Instance", "value": "db-1", "inline": True},
                    {"name": "Load share", "value": "42.3%", "inline": True},
                    {"name": "Calls", "value": "12,345", "inline": True},
                    {"name": "Plan before", "value": BEFORE, "inline": False},
                    {"name": "Plan after", "value": AFTER_MD, "inline": False},
                ],
            }
        ],
        "allowed_mentions": {"parse": []},
    }


def test_webhook_carries_the_whole_suggestion() -> None:
    assert message("webhook") == {
        "event": "new_suggestion",
        "url": LINK,
        "suggestion": NOTICE.to_dict(),
    }


def test_link_quotes_the_instance_name() -> None:
    assert common.query_link("http://q:8000", "ABC", "db 1&x") == (
        "http://q:8000/queries/ABC?instance=db+1%26x"
    )


def test_long_text_stays_within_documented_limits() -> None:
    huge = replace(
        NOTICE,
        fingerprint="select " + ", ".join(f"c{i}" for i in range(3000)) + " from t",
        table="t" * 400,
        ddl="ALTER TABLE t ADD INDEX i (" + ", ".join(f"c{i}" for i in range(2000)) + ")",
        plan_before="x" * 5000,
        plan_after="y" * 5000,
    )
    blocks = message("slack", huge)["blocks"]
    assert len(blocks[0]["text"]["text"]) <= slack.HEADER_CHARS
    fingerprint = blocks[1]["text"]["text"]
    assert len(fingerprint) == common.FINGERPRINT_CHARS + 8  # the ellipsis, inside a block
    assert fingerprint.endswith("…\n```")
    assert all(len(block["text"]["text"]) <= slack.SECTION_CHARS for block in blocks[1:5:2])
    embed = message("discord", huge)["embeds"][0]
    assert len(embed["title"]) <= discord.TITLE_CHARS
    assert len(embed["description"]) <= discord.DESCRIPTION_CHARS
    assert all(len(f["value"]) <= discord.FIELD_VALUE_CHARS for f in embed["fields"])
    total = len(embed["title"]) + len(embed["description"])
    total += sum(len(f["name"]) + len(f["value"]) for f in embed["fields"])
    assert total <= 6000  # Discord's limit over the whole embed


def test_impact_lines() -> None:
    assert common.regression_lines(IMPACT) == [
        "select * from orders where id = ? on db-1: load 0.25 → 1.5 (+500%)",
        "0011223344556677",
    ]
    body = formats.event_message("slack", "annotation_impact", IMPACT.to_dict(), PUBLIC_URL)
    assert body["blocks"][0]["text"]["text"] == (
        "Regressions after “Deploy 2026.11.22 (orders service)”"
    )
    assert body["blocks"][2]["text"]["text"] == (
        "• select * from orders where id = ? on db-1: load 0.25 → 1.5 (+500%)\n• 0011223344556677"
    )
    assert body["blocks"][3]["elements"][0]["url"] == "https://quanta.example.com/annotations/3"
    hook = formats.event_message("webhook", "annotation_impact", IMPACT.to_dict(), PUBLIC_URL)
    assert hook == {
        "event": "annotation_impact",
        "url": "https://quanta.example.com/annotations/3",
        "annotation": IMPACT.to_dict(),
    }


@pytest.mark.parametrize("channel_type", ["slack", "teams", "mattermost", "discord"])
def test_impact_renders_for_every_chat_type(channel_type: str) -> None:
    body = formats.event_message(channel_type, "annotation_impact", IMPACT.to_dict(), PUBLIC_URL)
    assert "load 0.25 → 1.5 (+500%)" in str(body)


def test_digest_lists_every_held_message() -> None:
    held = [("new_suggestion", NOTICE.to_dict()), ("annotation_impact", IMPACT.to_dict())]
    body = formats.digest_message("discord", held, PUBLIC_URL, per_hour=5)
    embed = body["embeds"][0]
    assert embed["title"] == "Quanta digest: 2 messages held back (limit 5 per hour)"
    assert embed["description"] == (
        f"- [db-1 · shop.orders · 42.3% of load · {DDL_MD}]({LINK})\n"
        "- [Regressions after “Deploy 2026.11.22 (orders service)” · 2 regressed queries]"
        "(https://quanta.example.com/annotations/3)"
    )
    hook = formats.digest_message("webhook", held, PUBLIC_URL, per_hour=5)
    assert [item["event"] for item in hook["items"]] == ["new_suggestion", "annotation_impact"]
    assert hook["items"][0]["suggestion"] == NOTICE.to_dict()
    assert hook["items"][1]["annotation"] == IMPACT.to_dict()
    slack_body = formats.digest_message("slack", held, PUBLIC_URL, per_hour=5)
    assert [b["type"] for b in slack_body["blocks"]] == ["header", "section", "section"]
    assert slack_body["blocks"][1]["text"]["text"].endswith(f"<{LINK}|Open>")


def test_check_messages() -> None:
    text = (
        "Quanta test message: channel “ops” is connected. Index suggestions will link to "
        "https://quanta.example.com."
    )
    assert formats.check_message("mattermost", "ops", PUBLIC_URL) == {"text": text}
    assert formats.check_message("discord", "ops", PUBLIC_URL) == {
        "content": text,
        "allowed_mentions": {"parse": []},
    }
    assert formats.check_message("webhook", "ops", PUBLIC_URL) == {"event": "test", "text": text}


def test_unknown_type_or_event_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown channel type"):
        formats.check_message("irc", "ops", PUBLIC_URL)
    with pytest.raises(ValueError, match="unknown event"):
        formats.event_message("slack", "deploy", {}, PUBLIC_URL)


def test_teams_keeps_line_breaks_of_multi_table_plans() -> None:
    notice = replace(
        NOTICE, plan_after="orders: ref idx_c, 4 rows\ncustomers: eq_ref PRIMARY, 1 rows"
    )
    body = message("teams", notice)["attachments"][0]["content"]["body"]
    assert body[-1]["text"] == (
        r"Plan after: orders: ref idx\_c, 4 rows" "\n\n" r"customers: eq\_ref PRIMARY, 1 rows"
    )


ACTIONABLE = replace(
    UNVALIDATED,
    window_start="2026-11-24T19:51:00+00:00",
    window_end="2026-11-25T19:51:00+00:00",
    rows_examined_per_call=200_000.0,
    rows_sent_per_call=2.0,
    latency_avg=0.0703,
    table_sizes=["shop.orders: 1,200,000 rows, 181.4 MB"],
)
FACTS = [
    ("Measured", "2026-11-24 19:51 UTC to 2026-11-25 19:51 UTC"),
    ("Cost per call", "200,000 rows examined, 70.3 ms average"),
    (
        "Estimated gain",
        "about 199,998 fewer rows examined per call (100% of them): an estimate, until the "
        "sandbox checks it",
    ),
    ("Table size", "shop.orders: 1,200,000 rows, 181.4 MB"),
]


def test_the_facts_a_team_needs_to_act() -> None:
    assert common.suggestion_facts(ACTIONABLE) == FACTS
    assert common.suggestion_facts(UNVALIDATED) == []  # a notice stored before they existed
    # An index cannot save much when a call already returns most of what it reads.
    assert common.estimated_gain(replace(ACTIONABLE, rows_sent_per_call=150_000.0)) is None
    assert common.size(2_200_000) == "2.1 MB"


@pytest.mark.parametrize("channel_type", ["slack", "teams", "mattermost", "discord"])
def test_every_format_shows_the_facts(channel_type: str) -> None:
    message = str(
        formats.event_message(channel_type, "new_suggestion", ACTIONABLE.to_dict(), PUBLIC_URL)
    )
    for label, value in FACTS:
        assert label in message
        assert value.split(",")[0] in message
