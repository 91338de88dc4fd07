"""Mattermost messages: Slack-style `attachments` (fallback, color, title, title_link, text,
fields), the format Mattermost incoming webhooks render natively.

Mattermost posts hold up to 16383 characters; the per-field cuts in common.py keep us below.
The attachment's text, title and field values are Markdown and scanned for @mentions (and
Slack's `<!channel>`, which Mattermost translates): every value from the monitored server
goes through `escape` or into a code span/block; the fallback is plain text. Code gets its
mentions broken too (a zero-width space after `@` and in `<!`): Mattermost translates
`<!channel>` before it renders anything, code included, and whether a mention inside code
notifies is up to its server's version.
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
    IMPACT_COLOR,
    NEUTRAL_COLOR,
    PLAN_CHARS,
    REASON_CHARS,
    SUGGESTION_COLOR,
    ZERO_WIDTH_SPACE,
    DigestItem,
    Report,
    break_mentions,
    calls,
    code_block,
    code_span,
    cut,
    impact_scope,
    impact_title,
    markdown_text,
    outcome_report,
    percent,
    plain_text,
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

MAX_DIGEST_ROWS = 100

Message = dict[str, object]


def escape(text: str) -> str:
    """Markdown shown literally, mentions broken, `<` `>` `&` as entities."""
    return markdown_text(text, html_entities=True)


def _code(text: str) -> str:
    """Text for a code span or block: mentions and `<!channel>` broken (invisibly)."""
    return break_mentions(text).replace("<!", "<" + ZERO_WIDTH_SPACE + "!")


def _color(rgb: int) -> str:
    return f"#{rgb:06X}"


def _field(title: str, value: str, *, short: bool = True) -> dict[str, object]:
    return {"title": title, "value": value, "short": short}


def suggestion(notice: SuggestionNotice, link: str) -> Message:
    """A suggestion as one attachment: query and DDL in code, facts as short fields."""
    text = (
        f"{code_span(_code(shorten(notice.fingerprint, FINGERPRINT_CHARS)))}\n"
        f"{code_block(_code(cut(notice.ddl, DDL_CHARS)), 'sql')}\n"
        f"**Why:** {escape(cut(notice.reason, REASON_CHARS))}"
    )
    fields = [
        _field("Instance", escape(notice.instance)),
        _field("Table", escape(notice.table)),
        _field("Load share", percent(notice.load_share)),
        _field("Calls", calls(notice.calls)),
        *(_field(label, escape(value), short=False) for label, value in suggestion_facts(notice)),
    ]
    if notice.plan_after is not None:
        if notice.plan_before is not None:
            before = escape(cut(notice.plan_before, PLAN_CHARS))
            fields.append(_field("Plan before", before, short=False))
        fields.append(_field("Plan after", escape(cut(notice.plan_after, PLAN_CHARS)), short=False))
    attachment = {
        "fallback": plain_text(f"{suggestion_title(notice)}: {shorten(notice.ddl, 200)}"),
        "color": _color(SUGGESTION_COLOR),
        "title": escape(suggestion_title(notice)),
        "title_link": link,
        "text": text,
        "fields": fields,
    }
    return {"attachments": [attachment]}


def plan(notice: PlanNotice, link: str) -> Message:
    """A table's index plan, laid out as a suggestion is (see common.plan_as_suggestion)."""
    return suggestion(plan_as_suggestion(notice), link)


def impact(notice: ImpactNotice, link: str) -> Message:
    """An annotation's regressions as a bulleted attachment."""
    attachment = {
        "fallback": plain_text(impact_title(notice)),
        "color": _color(IMPACT_COLOR),
        "title": escape(impact_title(notice)),
        "title_link": link,
        "text": "\n".join(f"- {escape(line)}" for line in regression_lines(notice)),
        "fields": [_field("Instances", escape(impact_scope(notice)), short=False)],
    }
    return {"attachments": [attachment]}


def regression(event: str, notice: RegressionNotice, link: str) -> Message:
    """A regression found, or over: see common.regression_report."""
    return _report(regression_report(event, notice), link)


def outcome(notice: OutcomeNotice, link: str) -> Message:
    """What an applied suggestion did: see common.outcome_report."""
    return _report(outcome_report(notice), link)


def _report(report: Report, link: str) -> Message:
    text = code_span(shorten(report.query, FINGERPRINT_CHARS))
    if report.text:
        text += f"\n{escape(cut(report.text, CAUSE_CHARS))}"
    attachment = {
        "fallback": plain_text(report.title),
        "color": _color(report.color),
        "title": escape(report.title),
        "title_link": link,
        "text": text,
        "fields": [_field(label, escape(value), short=False) for label, value in report.facts],
    }
    return {"attachments": [attachment]}


def digest(title: str, items: list[DigestItem]) -> Message:
    """The rate limit's overflow as one attachment listing linked lines."""
    lines = [f"- {escape(item.text)} [Open]({item.link})" for item in items[:MAX_DIGEST_ROWS]]
    if len(items) > MAX_DIGEST_ROWS:
        lines.append(f"… and {len(items) - MAX_DIGEST_ROWS} more")
    attachment = {
        "fallback": title,
        "color": _color(NEUTRAL_COLOR),
        "title": title,
        "text": "\n".join(lines),
    }
    return {"attachments": [attachment]}


def check(text: str) -> Message:
    """The "send test message" body (the channel's name in it is escaped already)."""
    return {"text": text}


def review(notice: ReviewNotice, link: str) -> Message:
    """An instance's new index review findings as one attachment, each DDL in code."""
    lines, more = review_lines(notice)
    text = [f"- {escape(line.text)}\n  {code_span(line.ddl)}" for line in lines]
    if more:
        text.append(f"… and {more} more")
    attachment = {
        "fallback": plain_text(review_title(notice)),
        "color": _color(SUGGESTION_COLOR),
        "title": escape(review_title(notice)),
        "title_link": link,
        "text": "\n".join(text),
        "footer": escape(review_summary(notice)),
    }
    return {"attachments": [attachment]}
