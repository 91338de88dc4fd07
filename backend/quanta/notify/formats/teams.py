"""Microsoft Teams messages: an Adaptive Card (schema 1.4) in a `message` attachment.

This is the shape Teams incoming webhooks and Workflows ("Post to a channel when a webhook
request is received") both accept. Teams caps a message at about 28 KB, which the per-field
cuts in common.py keep us far below.

TextBlocks and fact values are Markdown in Teams, monospace ones included (there is no code
block), so every value from the monitored server goes through `escape`: Markdown shown
literally, links `[text](url)` split so that no renderer links them, mentions broken.
"""

from quanta.notify.events import (
    ImpactNotice,
    OutcomeNotice,
    PlanNotice,
    RegressionNotice,
    ReviewNotice,
    SuggestionNotice,
)
from quanta.notify.formats.common import (
    CAUSE_CHARS,
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
    markdown_text,
    outcome_report,
    percent,
    plan_as_suggestion,
    regression_lines,
    regression_report,
    review_lines,
    review_summary,
    review_title,
    shorten,
    suggestion_facts,
    suggestion_title,
)

CARD_CONTENT_TYPE = "application/vnd.microsoft.card.adaptive"
CARD_SCHEMA = "http://adaptivecards.io/schemas/adaptive-card.json"
CARD_VERSION = "1.4"
MAX_DIGEST_ROWS = 50

Message = dict[str, object]


def escape(text: str) -> str:
    """Markdown shown literally, links and mentions broken."""
    return markdown_text(text)


def _text(text: str, **style: object) -> dict[str, object]:
    return {"type": "TextBlock", "text": text, "wrap": True, **style}


def _breaks(text: str) -> str:
    """Teams renders a single newline in a TextBlock as a space; it needs a blank line."""
    return text.replace("\n", "\n\n")


def _title(text: str) -> dict[str, object]:
    return _text(text, size="Medium", weight="Bolder")


def _card(body: list[object], actions: list[object]) -> Message:
    content: dict[str, object] = {
        "$schema": CARD_SCHEMA,
        "type": "AdaptiveCard",
        "version": CARD_VERSION,
        "body": body,
        "msteams": {"width": "Full"},
    }
    if actions:
        content["actions"] = actions
    return {
        "type": "message",
        "attachments": [{"contentType": CARD_CONTENT_TYPE, "contentUrl": None, "content": content}],
    }


def _open(title: str, url: str) -> dict[str, object]:
    return {"type": "Action.OpenUrl", "title": title, "url": url}


def suggestion(notice: SuggestionNotice, link: str) -> Message:
    """A suggestion: title, query, facts, DDL, reason, plans when validated, an Open action."""
    body: list[object] = [
        _title(escape(suggestion_title(notice))),
        _text(escape(shorten(notice.fingerprint, FINGERPRINT_CHARS)), fontType="Monospace"),
        {
            "type": "FactSet",
            "facts": [
                {"title": "Instance", "value": escape(notice.instance)},
                {"title": "Table", "value": escape(notice.table)},
                {"title": "Load share", "value": percent(notice.load_share)},
                {"title": "Calls", "value": calls(notice.calls)},
                *(
                    {"title": label, "value": escape(value)}
                    for label, value in suggestion_facts(notice)
                ),
            ],
        },
        _text("Suggested index", weight="Bolder"),
        _text(_breaks(escape(cut(notice.ddl, DDL_CHARS))), fontType="Monospace"),
        _text(escape(cut(notice.reason, REASON_CHARS))),
    ]
    if notice.plan_after is not None:
        if notice.plan_before is not None:
            before = _breaks(escape(cut(notice.plan_before, PLAN_CHARS)))
            body.append(_text(f"Plan before: {before}", isSubtle=True))
        after = _breaks(escape(cut(notice.plan_after, PLAN_CHARS)))
        body.append(_text(f"Plan after: {after}", isSubtle=True))
    return _card(body, [_open(link_text(notice), link)])


def plan(notice: PlanNotice, link: str) -> Message:
    """A table's index plan, laid out as a suggestion is (see common.plan_as_suggestion)."""
    return suggestion(plan_as_suggestion(notice), link)


def impact(notice: ImpactNotice, link: str) -> Message:
    """An annotation's regressions, one line each."""
    body: list[object] = [
        _title(escape(impact_title(notice))),
        _text(f"Instances: {escape(impact_scope(notice))}", isSubtle=True),
        *(_text(f"- {escape(line)}") for line in regression_lines(notice)),
    ]
    return _card(body, [_open("Open impact in Quanta", link)])


def regression(event: str, notice: RegressionNotice, link: str) -> Message:
    """A regression found, or over: see common.regression_report."""
    return _report(regression_report(event, notice), link)


def outcome(notice: OutcomeNotice, link: str) -> Message:
    """What an applied suggestion did: see common.outcome_report."""
    return _report(outcome_report(notice), link)


def _report(report: Report, link: str) -> Message:
    body: list[object] = [
        _title(escape(report.title)),
        _text(escape(shorten(report.query, FINGERPRINT_CHARS)), fontType="Monospace"),
        {
            "type": "FactSet",
            "facts": [{"title": label, "value": escape(value)} for label, value in report.facts],
        },
    ]
    if report.text:
        body.append(_text(escape(cut(report.text, CAUSE_CHARS))))
    return _card(body, [_open(report.link_text, link)])


def digest(title: str, items: list[DigestItem]) -> Message:
    """The rate limit's overflow, one line each with a markdown link."""
    body: list[object] = [_title(title)]
    body += [
        _text(f"- {escape(item.text)} [Open]({item.link})") for item in items[:MAX_DIGEST_ROWS]
    ]
    if len(items) > MAX_DIGEST_ROWS:
        body.append(_text(f"… and {len(items) - MAX_DIGEST_ROWS} more", isSubtle=True))
    return _card(body, [])


def check(text: str) -> Message:
    """The "send test message" body (the channel's name in it is escaped already)."""
    return _card([_text(text)], [])


def review(notice: ReviewNotice, link: str) -> Message:
    """An instance's new index review findings, each with its DDL in monospace."""
    lines, more = review_lines(notice)
    body: list[object] = [
        _title(escape(review_title(notice))),
        _text(escape(review_summary(notice)), isSubtle=True),
    ]
    for line in lines:
        body.append(_text(f"- {escape(line.text)}"))
        body.append(_text(escape(line.ddl), fontType="Monospace"))
    if more:
        body.append(_text(f"… and {more} more", isSubtle=True))
    return _card(body, [_open("Open index review in Quanta", link)])
