"""Slack messages as Block Kit (incoming webhooks accept `text` + `blocks`).

Limits from Slack's Block Kit reference: header text 150 characters, section text 3000,
section fields 10 items of 2000, context 10 elements, button text 75, button url 3000,
50 blocks per message. `text` is the notification fallback shown where blocks are not.

Text from outside (query text, table, index and instance names, annotation text, plans
naming them) is data, never markup. mrkdwn has no escape for `*`, `_`, `~` or a backtick,
so such text goes where mrkdwn is not read: in code (a block for query text and DDL,
inline for names), every backtick replaced by a lookalike (U+02CB MODIFIER LETTER GRAVE
ACCENT) so that none can close it, or in `plain_text` objects (the reason, plans, impact
lines), which Slack shows as they are. `&`, `<` and `>` are entities in mrkdwn
everywhere (`<!channel>`, `<url|x>`), every mrkdwn object is `verbatim` (no automatic links
or mentions), and the notification fallback `text` is sent with `mrkdwn: false`.
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
    review_lines,
    review_summary,
    review_title,
    shorten,
    suggestion_facts,
    suggestion_title,
)

HEADER_CHARS = 150
SECTION_CHARS = 3000
MAX_BLOCKS = 50
# A backtick would close Slack's inline code (three its code blocks): shown as this lookalike.
BACKTICK_LOOKALIKE = "\u02cb"
_FENCE = "```"

Message = dict[str, object]


def entities(text: str) -> str:
    """Escape the three characters mrkdwn reserves for links and mentions (`<`, `>`, `&`):
    `<http://evil|click>` and `<!channel>` are then shown, not rendered. A plain `@channel`
    notifies nobody in an incoming webhook's message (Slack only reads `<!channel>`)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def escape(text: str) -> str:
    """`text` shown literally in mrkdwn: inline code on one line, no backtick in it (each
    replaced by a lookalike), `&<>` as entities.

    >>> escape("a `*b*` <!here>") == "`a \u02cb*b*\u02cb &lt;!here&gt;`"
    True
    """
    flat = " ".join(text.split()).replace("`", BACKTICK_LOOKALIKE)
    return f"`{entities(flat)}`" if flat else ""


def code_block(text: str) -> str:
    """`text` as a code block that nothing in it closes (every backtick a lookalike, `&<>`
    entities), cut to fit a section. DDL with backticks is then not copied exactly from
    Slack: the message links to Quanta, which shows it as it is."""
    inner = cut(entities(text.replace("`", BACKTICK_LOOKALIKE)), SECTION_CHARS - 8)
    return f"{_FENCE}\n{inner}\n{_FENCE}"


def _mrkdwn(text: str) -> dict[str, object]:
    return {"type": "mrkdwn", "text": text, "verbatim": True}


def _plain(text: str) -> dict[str, object]:
    return {"type": "plain_text", "text": text}


def _fallback(text: str) -> dict[str, object]:
    """The notification text: escaped, and not read as mrkdwn."""
    return {"text": entities(text), "mrkdwn": False}


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
    ddl = code_block(cut(notice.ddl, DDL_CHARS))
    blocks: list[object] = [
        _header(suggestion_title(notice)),
        {
            "type": "section",
            "text": _mrkdwn(code_block(shorten(notice.fingerprint, FINGERPRINT_CHARS))),
        },
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
        {"type": "section", "text": _mrkdwn(ddl)},
        {"type": "section", "text": _plain(f"Why: {cut(notice.reason, REASON_CHARS)}")},
    ]
    if notice.plan_after is not None:
        # Only a validated suggestion (index tried on a scratch copy) has a plan after.
        elements = []
        if notice.plan_before is not None:
            elements.append(_plain(f"Plan before: {cut(notice.plan_before, PLAN_CHARS)}"))
        elements.append(_plain(f"Plan after: {cut(notice.plan_after, PLAN_CHARS)}"))
        blocks.append({"type": "context", "elements": elements})
    blocks.append(_button(link_text(notice), link))
    fallback = (
        f"{suggestion_title(notice)} ({percent(notice.load_share)} of load): "
        f"{shorten(notice.ddl, 200)}"
    )
    return {**_fallback(fallback), "blocks": blocks}


def plan(notice: PlanNotice, link: str) -> Message:
    """A table's index plan, laid out as a suggestion is (see common.plan_as_suggestion)."""
    return suggestion(plan_as_suggestion(notice), link)


def impact(notice: ImpactNotice, link: str) -> Message:
    """An annotation's regressions as a bulleted section and a link button."""
    bullets = "\n".join(f"• {line}" for line in regression_lines(notice))
    blocks: list[object] = [
        _header(impact_title(notice)),
        {"type": "context", "elements": [_plain(f"Instances: {impact_scope(notice)}")]},
        {"type": "section", "text": _plain(cut(bullets, SECTION_CHARS))},
        _button("Open impact in Quanta", link),
    ]
    return {**_fallback(impact_title(notice)), "blocks": blocks}


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
            "text": _mrkdwn(code_block(shorten(report.query, FINGERPRINT_CHARS))),
        },
        {
            "type": "section",
            "fields": [_mrkdwn(f"*{label}*\n{escape(value)}") for label, value in report.facts],
        },
    ]
    if report.text:
        blocks.append({"type": "section", "text": _plain(cut(report.text, SECTION_CHARS))})
    blocks.append(_button(report.link_text, link))
    return {**_fallback(report.title), "blocks": blocks}


def digest(title: str, items: list[DigestItem]) -> Message:
    """The rate limit's overflow: one section per item, each linking to its page."""
    blocks: list[object] = [_header(title)]
    for item in items[: MAX_BLOCKS - 2]:
        text = f"• {escape(cut(item.text, SECTION_CHARS // 2))} <{item.link}|Open>"
        blocks.append({"type": "section", "text": _mrkdwn(text)})
    hidden = len(items) - (MAX_BLOCKS - 2)
    if hidden > 0:
        blocks.append({"type": "context", "elements": [_mrkdwn(f"… and {hidden} more")]})
    return {**_fallback(title), "blocks": blocks}


def check(text: str) -> Message:
    """The "send test message" body (the channel's name in `text` is escaped already)."""
    return {"text": text, "mrkdwn": False, "blocks": [{"type": "section", "text": _mrkdwn(text)}]}


def review(notice: ReviewNotice, link: str) -> Message:
    """An instance's new index review findings: a section per finding with its DDL."""
    lines, more = review_lines(notice)
    blocks: list[object] = [
        _header(review_title(notice)),
        {"type": "context", "elements": [_plain(review_summary(notice))]},
    ]
    for line in lines:
        text = f"• {escape(line.text)}\n{code_block(line.ddl)}"
        blocks.append({"type": "section", "text": _mrkdwn(cut(text, SECTION_CHARS))})
    if more:
        blocks.append({"type": "context", "elements": [_plain(f"… and {more} more")]})
    blocks.append(_button("Open index review in Quanta", link))
    return {**_fallback(review_title(notice)), "blocks": blocks}
