"""Discord messages: one embed per message (title, url, description, fields, color).

Limits from Discord's embed reference: title 256 characters, description 4096, 25 fields,
field name 256 and value 1024, 6000 characters over the whole embed. `allowed_mentions`
is emptied so query text such as `@everyone` can never ping anyone; on top of that, every
value from the monitored server goes through `escape` (Markdown shown literally, masked links
`[text](url)` and mentions broken) or into a code span/block.
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
    DigestItem,
    Report,
    calls,
    code_block,
    code_span,
    cut,
    impact_scope,
    impact_title,
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

TITLE_CHARS = 256
DESCRIPTION_CHARS = 4096
FIELD_VALUE_CHARS = 1024
NO_MENTIONS: dict[str, list[str]] = {"parse": []}

Message = dict[str, object]


def escape(text: str) -> str:
    """Markdown shown literally, masked links and mentions broken."""
    return markdown_text(text)


def _field(name: str, value: str, *, inline: bool) -> dict[str, object]:
    return {"name": name, "value": cut(value, FIELD_VALUE_CHARS), "inline": inline}


def _message(embed: dict[str, object]) -> Message:
    return {"embeds": [embed], "allowed_mentions": NO_MENTIONS}


def suggestion(notice: SuggestionNotice, link: str) -> Message:
    """A suggestion: the DDL as an sql block in the description, facts as fields."""
    ddl = code_block(cut(notice.ddl, DDL_CHARS), "sql")
    description = f"{ddl}\n{escape(cut(notice.reason, REASON_CHARS))}"
    fields = [
        _field("Query", code_span(shorten(notice.fingerprint, FINGERPRINT_CHARS)), inline=False),
        _field("Instance", escape(notice.instance), inline=True),
        _field("Load share", percent(notice.load_share), inline=True),
        _field("Calls", calls(notice.calls), inline=True),
        *(_field(label, escape(value), inline=False) for label, value in suggestion_facts(notice)),
    ]
    if notice.plan_after is not None:
        if notice.plan_before is not None:
            before = escape(cut(notice.plan_before, PLAN_CHARS))
            fields.append(_field("Plan before", before, inline=False))
        after = escape(cut(notice.plan_after, PLAN_CHARS))
        fields.append(_field("Plan after", after, inline=False))
    return _message(
        {
            "title": escape(shorten(suggestion_title(notice), TITLE_CHARS)),
            "url": link,
            "description": cut(description, DESCRIPTION_CHARS),
            "color": SUGGESTION_COLOR,
            "fields": fields,
        }
    )


def plan(notice: PlanNotice, link: str) -> Message:
    """A table's index plan, laid out as a suggestion is (see common.plan_as_suggestion)."""
    return suggestion(plan_as_suggestion(notice), link)


def impact(notice: ImpactNotice, link: str) -> Message:
    """An annotation's regressions as a bulleted description."""
    lines = "\n".join(f"- {escape(line)}" for line in regression_lines(notice))
    return _message(
        {
            "title": escape(shorten(impact_title(notice), TITLE_CHARS)),
            "url": link,
            "description": cut(lines, DESCRIPTION_CHARS),
            "color": IMPACT_COLOR,
            "fields": [_field("Instances", escape(impact_scope(notice)), inline=False)],
        }
    )


def regression(event: str, notice: RegressionNotice, link: str) -> Message:
    """A regression found, or over: see common.regression_report."""
    return _report(regression_report(event, notice), link)


def outcome(notice: OutcomeNotice, link: str) -> Message:
    """What an applied suggestion did: see common.outcome_report."""
    return _report(outcome_report(notice), link)


def _report(report: Report, link: str) -> Message:
    description = code_span(shorten(report.query, FINGERPRINT_CHARS))
    if report.text:
        description += f"\n{escape(cut(report.text, CAUSE_CHARS))}"
    return _message(
        {
            "title": escape(shorten(report.title, TITLE_CHARS)),
            "url": link,
            "description": cut(description, DESCRIPTION_CHARS),
            "color": report.color,
            "fields": [_field(label, escape(value), inline=False) for label, value in report.facts],
        }
    )


def digest(title: str, items: list[DigestItem]) -> Message:
    """The rate limit's overflow: linked lines in the description, cut at Discord's limit."""
    lines = "\n".join(f"- [{escape(item.text)}]({item.link})" for item in items)
    return _message(
        {
            "title": shorten(title, TITLE_CHARS),
            "description": cut(lines, DESCRIPTION_CHARS),
            "color": NEUTRAL_COLOR,
        }
    )


def check(text: str) -> Message:
    """The "send test message" body (the channel's name in it is escaped already)."""
    return {"content": text, "allowed_mentions": NO_MENTIONS}


def review(notice: ReviewNotice, link: str) -> Message:
    """An instance's new index review findings in the description, each DDL in code."""
    lines, more = review_lines(notice)
    text = [f"- {escape(line.text)}\n{code_span(line.ddl)}" for line in lines]
    if more:
        text.append(f"… and {more} more")
    return _message(
        {
            "title": escape(shorten(review_title(notice), TITLE_CHARS)),
            "url": link,
            "description": cut("\n".join(text), DESCRIPTION_CHARS),
            "color": SUGGESTION_COLOR,
            "footer": {"text": review_summary(notice)},
        }
    )
