"""Slack messages as Block Kit (incoming webhooks accept `text` + `blocks`).

Limits from Slack's Block Kit reference: header text 150 characters, section text 3000,
section fields 10 items of 2000, context 10 elements, button text 75, button url 3000,
50 blocks per message. `text` is the notification fallback shown where blocks are not.
"""

from quanta.notify.events import (
    ImpactNotice,
    OutcomeNotice,
    PlanNotice,
    RegressionNotice,
    SuggestionNotice,
)
from quanta.notify.formats.common import (
    DDL_CHARS,
    FINGERPRINT_CHARS,
    PLAN_CHARS,
    REASON_CHARS,
    DigestItem,
    Report,
    calls,
    cut,
    impact_scope,
    impact_title,
    link_text,
    outcome_report,
    percent,
    plan_as_suggestion,
    regression_lines,
    regression_report,
    shorten,
    suggestion_facts,
    suggestion_title,
)

HEADER_CHARS = 150
SECTION_CHARS = 3000
MAX_BLOCKS = 50

Message = dict[str, object]


def escape(text: str) -> str:
    """Escape the three characters mrkdwn reserves for links and mentions (`<`, `>`, `&`):
    `<http://evil|click>` and `<!channel>` are then shown, not rendered. A plain `@channel`
    notifies nobody in an incoming webhook's message (Slack only reads `<!channel>`)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _mrkdwn(text: str) -> dict[str, str]:
    return {"type": "mrkdwn", "text": text}


def _header(text: str) -> dict[str, object]:
    return {"type": "header", "text": {"type": "plain_text", "text": shorten(text, HEADER_CHARS)}}


def _button(text: str, url: str) -> dict[str, object]:
    return {
        "type": "actions",
        "elements": [
            {
                "type": "button",
                "text": {"type": "plain_text", "text": text},
                "url": url,
                "action_id": "open_in_quanta",
            }
        ],
    }


def suggestion(notice: SuggestionNotice, link: str) -> Message:
    """A suggestion: header, query, facts, DDL, reason, plans when validated, a link button."""
    fingerprint = escape(shorten(notice.fingerprint, FINGERPRINT_CHARS))
    blocks: list[object] = [
        _header(suggestion_title(notice)),
        {"type": "section", "text": _mrkdwn(f"`{fingerprint}`")},
        {
            "type": "section",
            "fields": [
                _mrkdwn(f"*Instance*\n{escape(notice.instance)}"),
                _mrkdwn(f"*Load share*\n{percent(notice.load_share)}"),
                _mrkdwn(f"*Calls*\n{calls(notice.calls)}"),
                _mrkdwn(f"*Table*\n{escape(notice.table)}"),
                *(
                    _mrkdwn(f"*{label}*\n{escape(value)}")
                    for label, value in suggestion_facts(notice)
                ),
            ],
        },
        {"type": "section", "text": _mrkdwn(f"```{escape(cut(notice.ddl, DDL_CHARS))}```")},
        {"type": "section", "text": _mrkdwn(f"*Why:* {escape(cut(notice.reason, REASON_CHARS))}")},
    ]
    if notice.plan_after is not None:
        # Only a validated suggestion (index tried on a scratch copy) has a plan after.
        elements = []
        if notice.plan_before is not None:
            elements.append(
                _mrkdwn(f"*Plan before:* {escape(cut(notice.plan_before, PLAN_CHARS))}")
            )
        elements.append(_mrkdwn(f"*Plan after:* {escape(cut(notice.plan_after, PLAN_CHARS))}"))
        blocks.append({"type": "context", "elements": elements})
    blocks.append(_button(link_text(notice), link))
    # `text` is the notification's fallback, and it is mrkdwn too.
    fallback = (
        f"{suggestion_title(notice)} ({percent(notice.load_share)} of load): "
        f"{shorten(notice.ddl, 200)}"
    )
    return {"text": escape(fallback), "blocks": blocks}


def plan(notice: PlanNotice, link: str) -> Message:
    """A table's index plan, laid out as a suggestion is (see common.plan_as_suggestion)."""
    return suggestion(plan_as_suggestion(notice), link)


def impact(notice: ImpactNotice, link: str) -> Message:
    """An annotation's regressions as a bulleted section and a link button."""
    bullets = "\n".join(f"• {escape(line)}" for line in regression_lines(notice))
    blocks: list[object] = [
        _header(impact_title(notice)),
        {"type": "context", "elements": [_mrkdwn(f"Instances: {escape(impact_scope(notice))}")]},
        {"type": "section", "text": _mrkdwn(cut(bullets, SECTION_CHARS))},
        _button("Open impact in Quanta", link),
    ]
    return {"text": escape(impact_title(notice)), "blocks": blocks}


def regression(event: str, notice: RegressionNotice, link: str) -> Message:
    """A regression found, or over: see common.regression_report."""
    return _report(regression_report(event, notice), link)


def outcome(notice: OutcomeNotice, link: str) -> Message:
    """What an applied suggestion did: see common.outcome_report."""
    return _report(outcome_report(notice), link)


def _report(report: Report, link: str) -> Message:
    blocks: list[object] = [
        _header(report.title),
        {
            "type": "section",
            "text": _mrkdwn(f"`{escape(shorten(report.query, FINGERPRINT_CHARS))}`"),
        },
        {
            "type": "section",
            "fields": [_mrkdwn(f"*{label}*\n{escape(value)}") for label, value in report.facts],
        },
    ]
    if report.text:
        blocks.append({"type": "section", "text": _mrkdwn(escape(cut(report.text, SECTION_CHARS)))})
    blocks.append(_button(report.link_text, link))
    return {"text": escape(report.title), "blocks": blocks}


def digest(title: str, items: list[DigestItem]) -> Message:
    """The rate limit's overflow: one section per item, each linking to its page."""
    blocks: list[object] = [_header(title)]
    for item in items[: MAX_BLOCKS - 2]:
        text = f"• {escape(item.text)} <{item.link}|Open>"
        blocks.append({"type": "section", "text": _mrkdwn(cut(text, SECTION_CHARS))})
    hidden = len(items) - (MAX_BLOCKS - 2)
    if hidden > 0:
        blocks.append({"type": "context", "elements": [_mrkdwn(f"… and {hidden} more")]})
    return {"text": escape(title), "blocks": blocks}


def check(text: str) -> Message:
    """The "send test message" body (the channel's name in `text` is escaped already)."""
    return {"text": text, "blocks": [{"type": "section", "text": _mrkdwn(text)}]}
