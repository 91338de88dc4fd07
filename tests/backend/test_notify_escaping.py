"""Hostile text in chat messages: query text, names and annotation text come from the
monitored server (or any annotate token) and must not link, mention or format.

data/chat_escaping.json holds, per input, what each chat format's `escape` makes of it
(reviewed by hand: backslash escapes, entities, a zero-width space after `@` and in `](`).
The whole-message tests then put an injection in every field of every event and check that
no format lets it through anywhere outside a code span or block.
"""

import json
import re
from pathlib import Path
from typing import Any

import pytest

from quanta.notify import formats
from quanta.notify.events import ImpactNotice, OutcomeNotice, RegressionNotice, SuggestionNotice
from quanta.notify.formats import common

CASES = json.loads((Path(__file__).parent / "data" / "chat_escaping.json").read_text())
CHAT_TYPES = ["slack", "mattermost", "teams", "discord"]
PUBLIC_URL = "https://quanta.example.com"
INJECTION = "x [click](http://evil) @channel <!channel> <http://evil|y> `z` ``` w"


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
@pytest.mark.parametrize("channel_type", CHAT_TYPES)
def test_escape(case: dict[str, str], channel_type: str) -> None:
    assert formats.FORMATS[channel_type].escape(case["input"]) == case[channel_type]


@pytest.mark.parametrize(
    ("text", "span", "block"),
    [
        ("select 1", "`select 1`", "```\nselect 1\n```"),
        ("a `b` c", "``a `b` c``", "```\na `b` c\n```"),
        ("`x`", "`` `x` ``", "```\n`x`\n```"),
        ("end ``` [a](b)", "````end ``` [a](b)````", "````\nend ``` [a](b)\n````"),
    ],
)
def test_code_cannot_be_closed_by_its_content(text: str, span: str, block: str) -> None:
    assert common.code_span(text) == span
    assert common.code_block(text) == block


def hostile_messages(channel_type: str) -> list[Any]:
    """Every event's body with the injection in every field that comes from outside."""
    suggestion = SuggestionNotice(
        suggestion_id=1,
        query_id="A1B2C3D4E5F60718",
        fingerprint=INJECTION,
        instance=INJECTION,
        table=INJECTION,
        load_share=0.5,
        calls=3,
        ddl=f"ALTER TABLE t ADD INDEX i (c) -- ```\n{INJECTION}",  # a fence inside
        reason=f"{INJECTION}\n{INJECTION}",
        content_hash="h",
        plan_before=INJECTION,
        plan_after=f"{INJECTION}\n- {INJECTION}",
    )
    impact = ImpactNotice(
        annotation_id=2,
        text=INJECTION,
        instance_names=[INJECTION],
        regressions=[{"fingerprint": INJECTION, "instance": INJECTION, "metric": INJECTION}],
    )
    regression = RegressionNotice(
        regression_id=3,
        instance=INJECTION,
        query_id="A1B2C3D4E5F60718",
        fingerprint=INJECTION,
        metric=INJECTION,
        before=0.001,
        after=0.5,
        since="2026-03-10T14:03:00+00:00",
        cause=f"{INJECTION}\n{INJECTION}",
    )
    outcome = OutcomeNotice(
        suggestion_id=1,
        instance=INJECTION,
        query_id="A1B2C3D4E5F60718",
        fingerprint=INJECTION,
        table=INJECTION,
        ddl=INJECTION,
        applied_at="2026-03-10T14:03:00+00:00",
        window_seconds=900,
        metrics=[{"name": INJECTION, "before": 1.0, "after": 0.5}],
    )
    held = [
        ("new_suggestion", suggestion.to_dict()),
        ("annotation_impact", impact.to_dict()),
        ("regression", regression.to_dict()),
        ("suggestion_applied", outcome.to_dict()),
    ]
    return [
        formats.event_message(channel_type, "new_suggestion", suggestion.to_dict(), PUBLIC_URL),
        formats.event_message(channel_type, "annotation_impact", impact.to_dict(), PUBLIC_URL),
        *(
            formats.event_message(channel_type, event, regression.to_dict(), PUBLIC_URL)
            for event in ("regression", "regression_resolved")
        ),
        formats.event_message(channel_type, "suggestion_applied", outcome.to_dict(), PUBLIC_URL),
        formats.digest_message(channel_type, held, PUBLIC_URL, per_hour=1),
        formats.check_message(channel_type, INJECTION, PUBLIC_URL),
    ]


# Shown as is, never parsed for links or mentions: Mattermost's `fallback` (the notification
# text, "plain-text summary") and Slack's plain_text objects (the header, button labels).
PLAIN_KEYS = {"fallback"}


def strings(value: Any) -> list[str]:
    """Every string a service renders as markup in a message body."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        if value.get("type") == "plain_text":
            return []
        return [s for key, item in value.items() if key not in PLAIN_KEYS for s in strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in strings(item)]
    return []


# A code span or fenced block; a backslash-escaped backtick opens neither.
CODE = re.compile(r"(?<!\\)(`{3,})[\s\S]*?\1|(?<!\\)(`+)[\s\S]*?\2")


def outside_code(text: str) -> str:
    """The text a Markdown renderer formats: fenced blocks and code spans removed."""
    return CODE.sub("", text)


@pytest.mark.parametrize("channel_type", ["mattermost", "teams", "discord"])
def test_markdown_formats_render_no_link_or_mention(channel_type: str) -> None:
    messages = hostile_messages(channel_type)
    rendered = "\n".join(outside_code(s) for message in messages for s in strings(message))
    assert rendered.count("x \\[click\\]") >= 10  # the injection is there, escaped
    assert "](http://evil" not in rendered  # no markdown link
    assert "@channel" not in rendered  # no mention (a zero-width space follows the @)
    assert "<!channel>" not in rendered  # no Slack-style mention (Mattermost translates it)
    assert "<http://evil" not in rendered
    assert "http://evil" not in rendered  # not even autolinked


def test_slack_renders_no_link_or_mention() -> None:
    rendered = "\n".join(s for message in hostile_messages("slack") for s in strings(message))
    assert "x [click]" in rendered  # not a link in mrkdwn: only <url|text> is
    assert rendered.count("&lt;!channel&gt;") >= 10
    assert "<!channel>" not in rendered
    assert "<http://evil" not in rendered


def test_discord_never_parses_mentions() -> None:
    for message in hostile_messages("discord"):
        assert message["allowed_mentions"] == {"parse": []}


# Slack code: a fenced block (``` ... ```) or an inline span (`...`); mrkdwn formats the rest.
SLACK_CODE = re.compile(r"```[\s\S]*?```|`[^`\n]*`")
OWN_LINK = re.compile(r"<https://quanta\.example\.com/[^|>\s]*\|Open>")


def mrkdwn_texts(value: Any) -> list[str]:
    """The text of every Slack mrkdwn object (plain_text ones are shown as they are)."""
    if isinstance(value, dict):
        own = [value["text"]] if value.get("type") == "mrkdwn" else []
        return own + [t for item in value.values() for t in mrkdwn_texts(item)]
    if isinstance(value, list):
        return [t for item in value for t in mrkdwn_texts(item)]
    return []


def test_slack_keeps_outside_text_in_code_or_plain_text() -> None:
    # mrkdwn has no escape for * _ ~ or a backtick: outside text is either in code that
    # nothing in it closes (no backtick left in it) or in a plain_text object.
    for message in hostile_messages("slack"):
        # The notification fallback is not mrkdwn (mrkdwn: false); its < > & are entities.
        assert message["mrkdwn"] is False
        assert "<!channel>" not in message["text"]
        for text in mrkdwn_texts(message["blocks"]):
            # Quanta's own links: the URL quotes the instance name (no | or > in it).
            outside = SLACK_CODE.sub("", OWN_LINK.sub("", text))
            assert "`" not in outside, text  # nothing closed a code span early
            for piece in ("[click]", "evil", "@channel", "&lt;!channel"):
                assert piece not in outside, text


# The injection (an alias in backticks closing Slack's inline code early) and
# hostile names, annotation text and reason: the exact payload of every event, for every
# provider, is in data/chat_hostile_payloads.json (reviewed by hand: Slack fences and
# uses plain_text, the Markdown formats escape, the webhook passes data).
SLACK_INJECTION = (
    "select x.amount as `https://evil.example/reset *URGENT* <!channel>` from orders x where x.id=?"
)
HOSTILE_NAME = "shop.`*URGENT*`_<!here>_@channel [x](https://evil.example) ~y~"
HOSTILE_TEXT = "deploy *URGENT* <!channel> ``` <https://evil.example|click> @here _i_ #1"
PAYLOADS = json.loads((Path(__file__).parent / "data" / "chat_hostile_payloads.json").read_text())


def hostile_payloads(channel_type: str) -> dict[str, Any]:
    suggestion = SuggestionNotice(
        suggestion_id=1,
        query_id="A1B2C3D4E5F60718",
        fingerprint=SLACK_INJECTION,
        instance=HOSTILE_NAME,
        table=HOSTILE_NAME,
        load_share=0.5,
        calls=3,
        ddl=f"ALTER TABLE `{HOSTILE_NAME}` ADD INDEX i (c)",
        reason=f"The index finds the rows of {HOSTILE_NAME} by c.",
        content_hash="h",
        plan_before=HOSTILE_TEXT,
        plan_after=HOSTILE_TEXT,
        table_sizes=[f"{HOSTILE_NAME} 2.1 MB"],
    )
    impact = ImpactNotice(
        annotation_id=2,
        text=HOSTILE_TEXT,
        instance_names=[HOSTILE_NAME],
        regressions=[{"fingerprint": SLACK_INJECTION, "instance": HOSTILE_NAME, "metric": "load",
                      "before": 1.0, "after": 2.0, "change": 1.0}],
    )  # fmt: skip
    held = [("new_suggestion", suggestion.to_dict()), ("annotation_impact", impact.to_dict())]
    return {
        "suggestion": formats.event_message(
            channel_type, "new_suggestion", suggestion.to_dict(), PUBLIC_URL
        ),
        "impact": formats.event_message(
            channel_type, "annotation_impact", impact.to_dict(), PUBLIC_URL
        ),
        "digest": formats.digest_message(channel_type, held, PUBLIC_URL, per_hour=1),
        "check": formats.check_message(channel_type, HOSTILE_TEXT, PUBLIC_URL),
    }


@pytest.mark.parametrize("channel_type", ["slack", "mattermost", "teams", "discord", "webhook"])
def test_hostile_text_gives_the_reviewed_payload(channel_type: str) -> None:
    assert hostile_payloads(channel_type) == PAYLOADS[channel_type]


def test_the_slack_injection_stays_in_its_code_block() -> None:
    block = PAYLOADS["slack"]["suggestion"]["blocks"][1]["text"]
    assert block == {
        "type": "mrkdwn",
        "text": "```\nselect x.amount as \u02cbhttps://evil.example/reset *URGENT* "
        "&lt;!channel&gt;\u02cb from orders x where x.id=?\n```",
        "verbatim": True,
    }
