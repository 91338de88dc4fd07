"""Text pieces every chat format shares: links, numbers, shortened query text, digest lines.

Pure functions over the notices: no I/O, no settings object (the public URL is passed in).
"""

import re
from dataclasses import dataclass
from urllib.parse import quote, urlencode

from quanta.notify.events import (
    ImpactNotice,
    OutcomeNotice,
    PlanNotice,
    RegressionNotice,
    ReviewNotice,
    SuggestionNotice,
)

# A fingerprint is shown "short": enough to recognise the query, the link has the rest.
FINGERPRINT_CHARS = 300
# Plans are summaries (EXPLAIN access types, rows); longer ones are cut for the message.
PLAN_CHARS = 500
# DDL is the point of the message; it is only cut when absurdly long (many columns).
DDL_CHARS = 1500
REASON_CHARS = 500
# An impact message lists the worst regressions; the link shows all of them.
IMPACT_ROWS = 10
# A review message lists this many new findings; the link shows all of them.
REVIEW_ROWS = 15
ELLIPSIS = "…"

# Accent colours: amber for a suggestion (act on it), red for regressions, green for what got
# better or back to normal, grey for the rest.
SUGGESTION_COLOR = 0xE8A317
IMPACT_COLOR = 0xD93F0B
GOOD_COLOR = 0x2DA44E
NEUTRAL_COLOR = 0x6A737D
CAUSE_CHARS = 1000


# --- escaping ------------------------------------------------------------------------------
# Query text, table, index and instance names come from the monitored server (and annotation
# text from any token with the annotate scope): they are hostile. What they may not do in a
# chat message is link (`[click](http://evil)`, `<http://evil|click>`), mention (`@channel`,
# `<!here>`, `<@U1>`) or format the message around them.

ZERO_WIDTH_SPACE = "\u200b"
_MENTION = re.compile(r"@(?=\w)")
# Inline Markdown syntax: emphasis, code, links and images, strikethrough, tables, autolinks.
_MARKDOWN_INLINE = re.compile(r"([\\`*_\[\]~|<>])")
_MARKDOWN_INLINE_NO_ANGLES = re.compile(r"([\\`*_\[\]~|])")
# Block syntax at a line start: headings, quotes, lists, thematic breaks, setext underlines.
_MARKDOWN_LINE_START = re.compile(r"^([ \t]*)([#>+=-]|\d+(?=[.)]))", re.MULTILINE)
_BACKTICKS = re.compile(r"`+")


def break_mentions(text: str) -> str:
    """A zero-width space after every `@` that starts a word: `@channel`, `@here`, `@all`,
    `@everyone` and `@user` read the same but no longer notify anyone.

    >>> break_mentions("ping @channel, mail a@b") == "ping @\u200bchannel, mail a@\u200bb"
    True
    """
    return _MENTION.sub("@" + ZERO_WIDTH_SPACE, text)


def markdown_text(text: str, *, html_entities: bool = False) -> str:
    r"""`text` shown literally by a Markdown renderer (Mattermost, Teams, Discord).

    Inline syntax is backslash-escaped, block syntax at a line start too; `](` is also split
    by a zero-width space and `://` escaped, so no renderer, even one that ignored a
    backslash, can make a link of it; mentions are broken. With `html_entities` (Mattermost)
    `&`, `<` and `>` become entities instead, since Mattermost translates Slack's
    `<!channel>` and `<url|text>` before rendering.

    >>> markdown_text("[a](b) *x*") == r"\[a\]" + ZERO_WIDTH_SPACE + r"(b) \*x\*"
    True
    """
    if html_entities:
        text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        text = _MARKDOWN_INLINE_NO_ANGLES.sub(r"\\\1", text)
    else:
        text = _MARKDOWN_INLINE.sub(r"\\\1", text)
    text = _MARKDOWN_LINE_START.sub(_escape_line_start, text)
    text = text.replace("\\](", "\\]" + ZERO_WIDTH_SPACE + "(")
    text = text.replace("://", "\\://").replace("www.", "www\\.")
    return break_mentions(text)


def _escape_line_start(match: re.Match[str]) -> str:
    indent, marker = match.group(1), match.group(2)
    return f"{indent}{marker}\\" if marker.isdigit() else f"{indent}\\{marker}"


def plain_text(text: str) -> str:
    """`text` for a field a service shows as is but still scans for mentions and Slack-style
    `<...>` markup (Mattermost's fallback): mentions broken, every `<` followed by a
    zero-width space."""
    return break_mentions(text.replace("<", "<" + ZERO_WIDTH_SPACE))


def code_span(text: str) -> str:
    """`text` as inline code that its own backticks cannot close (CommonMark: a longer fence).

    >>> code_span("select `a` from t")
    '``select `a` from t``'
    """
    fence = "`" * (_longest_backtick_run(text) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def code_block(text: str, language: str = "") -> str:
    """`text` as a fenced code block that a ``` inside it cannot close."""
    fence = "`" * max(3, _longest_backtick_run(text) + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def _longest_backtick_run(text: str) -> int:
    return max((len(run) for run in _BACKTICKS.findall(text)), default=0)


def shorten(text: str, limit: int) -> str:
    """`text` on one line, cut to at most `limit` characters with an ellipsis when cut.

    >>> shorten("select *\\n  from t", 20)
    'select * from t'
    >>> shorten("abcdef", 4)
    'abc…'
    """
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    return flat[: max(limit - 1, 0)] + ELLIPSIS


def cut(text: str, limit: int) -> str:
    """`text` (line breaks kept) cut to at most `limit` characters with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)] + ELLIPSIS


def query_link(public_url: str, query_id: str, instance: str) -> str:
    """The query's page in the UI, on the instance the notice is about."""
    return (
        f"{public_url.rstrip('/')}/queries/{quote(query_id, safe='')}?"
        f"{urlencode({'instance': instance})}"
    )


def plan_link(public_url: str, instance_id: int) -> str:
    """The instance's index plan page in the UI."""
    return f"{public_url.rstrip('/')}/instances/{instance_id}/index-plan"


def plan_as_suggestion(notice: PlanNotice) -> SuggestionNotice:
    """A table's plan in the shape the chat formats already lay out (title, facts, DDL,
    reason, plans before/after, a link): the served queries stand where one query's text
    stands, the plan's summary where a suggestion's reason does."""
    return SuggestionNotice(
        suggestion_id=notice.plan_id,
        query_id="",
        fingerprint="; ".join(notice.queries) or notice.table,
        instance=notice.instance,
        table=notice.table,
        load_share=notice.load_share,
        calls=notice.calls,
        ddl=notice.ddl,
        reason=notice.summary,
        content_hash=notice.signature,
        plan_before=notice.plan_before,
        plan_after=notice.plan_after,
        window_start=notice.window_start,
        window_end=notice.window_end,
        table_sizes=list(notice.table_sizes),
        title=plan_title(notice),
        link_text="Open index plan in Quanta",
    )


def plan_title(notice: PlanNotice) -> str:
    """One line naming the table whose plan follows."""
    return f"Index plan for {notice.table} on {notice.instance}"


def link_text(notice: SuggestionNotice) -> str:
    """The label of the message's button."""
    return notice.link_text or "Open query in Quanta"


def review_link(public_url: str, instance_id: int) -> str:
    """The instance's index review page in the UI."""
    return f"{public_url.rstrip('/')}/instances/{instance_id}/index-review"


REVIEW_KINDS = {
    "duplicate": "Duplicate",
    "redundant": "Redundant",
    "primary_key_suffix": "Primary key suffix",
    "unused": "Unused",
}


def review_title(notice: ReviewNotice) -> str:
    """One line naming the instance and how many new findings follow."""
    count = len(notice.findings)
    noun = "finding" if count == 1 else "findings"
    return f"Index review of {notice.instance}: {count} new {noun}"


@dataclass(frozen=True, slots=True)
class ReviewLine:
    """One finding as a message shows it: plain text (each format escapes it) and its DDL
    (each format puts it in code its own way)."""

    text: str
    ddl: str


def review_lines(notice: ReviewNotice) -> tuple[list[ReviewLine], int]:
    """The first REVIEW_ROWS findings as lines, and how many more there are."""
    lines = [
        ReviewLine(
            text=(
                f"{REVIEW_KINDS.get(str(f.get('kind')), str(f.get('kind')))}: "
                f"{f.get('table')} {f.get('index')}: {shorten(str(f.get('reason', '')), 200)}"
            ),
            ddl=shorten(str(f.get("ddl", "")), 300),
        )
        for f in notice.findings[:REVIEW_ROWS]
    ]
    return lines, max(len(notice.findings) - REVIEW_ROWS, 0)


def review_summary(notice: ReviewNotice) -> str:
    """What the whole review holds besides the new findings, in a sentence."""
    return (
        f"{notice.total} finding{'' if notice.total == 1 else 's'} in all on this instance; "
        "each says why the index can go and the DDL that drops it."
    )


def annotation_link(public_url: str, annotation_id: int) -> str:
    """The annotation's impact view in the UI."""
    return f"{public_url.rstrip('/')}/annotations/{annotation_id}"


def percent(share: float) -> str:
    """A 0..1 share as a percentage with one decimal: 0.4234 -> '42.3%'."""
    return f"{share * 100:.1f}%"


def calls(count: int) -> str:
    """A count with thousands separators: 12345 -> '12,345'."""
    return f"{count:,}"


def suggestion_facts(notice: SuggestionNotice) -> list[tuple[str, str]]:
    """(label, plain text) of what a team needs to act, those the notice has: the period
    the load share and calls were measured over, the cost per call now, the estimated gain
    and each table's size. Each format escapes the values its own way."""
    facts: list[tuple[str, str]] = []
    if notice.window_start and notice.window_end:
        facts.append(
            ("Measured", f"{_instant(notice.window_start)} to {_instant(notice.window_end)}")
        )
    cost = []
    if notice.rows_examined_per_call is not None:
        cost.append(f"{notice.rows_examined_per_call:,.0f} rows examined")
    if notice.latency_avg is not None:
        cost.append(f"{_duration(notice.latency_avg)} average")
    if cost:
        facts.append(("Cost per call", ", ".join(cost)))
    gain = estimated_gain(notice)
    if gain:
        facts.append(("Estimated gain", gain))
    if notice.table_sizes:
        facts.append(("Table size", "; ".join(notice.table_sizes)))
    return facts


def estimated_gain(notice: SuggestionNotice) -> str | None:
    """With the index, a call examines about the rows it returns: the rows it would stop
    examining per call, and the share of the examined rows that is."""
    examined, sent = notice.rows_examined_per_call, notice.rows_sent_per_call
    if examined is None or sent is None or examined <= max(sent, 1) * 2:
        return None
    saved = examined - max(sent, 1)
    return (
        f"about {saved:,.0f} fewer rows examined per call ({saved / examined * 100:.0f}% of "
        f"them): an estimate, until the sandbox checks it"
    )


def _instant(iso: str) -> str:
    return iso.replace("T", " ")[:16] + " UTC"


def _duration(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 0.001:
        return f"{seconds * 1000:.1f} ms"
    return f"{seconds * 1e6:.0f} µs"


def size(data_bytes: int | None) -> str:
    """Bytes as a short size: 2_200_000 -> '2.1 MB'."""
    if data_bytes is None:
        return "size unknown"
    value = float(data_bytes)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TB"


def suggestion_title(notice: SuggestionNotice) -> str:
    """One line naming what the suggestion is about."""
    return notice.title or f"Index suggestion for {notice.table} on {notice.instance}"


def impact_title(notice: ImpactNotice) -> str:
    """One line naming the annotation whose regressions (improvements) follow."""
    text = shorten(notice.text, 120)
    if notice.regressions and notice.improvements:
        return f"Regressions and improvements after “{text}”"
    if notice.improvements:
        return f"Improvements after “{text}”"
    return f"Regressions after “{text}”"


def impact_scope(notice: ImpactNotice) -> str:
    """The instances an annotation covers, for a message."""
    return ", ".join(notice.instance_names) if notice.instance_names else "all instances"


def regression_lines(notice: ImpactNotice) -> list[str]:
    """One plain line per regression, worst first as given, at most IMPACT_ROWS plus a tail.

    Each regression is a dict; the keys shown are fingerprint (or query_id), instance, metric,
    before, after and change (a ratio, 0.5 = +50%). Missing keys are left out of the line.
    """
    marked = [("Slower", r) for r in notice.regressions]
    marked += [("Faster", r) for r in notice.improvements]
    both = bool(notice.regressions and notice.improvements)
    lines = [
        f"{word}: {_regression_line(row)}" if both else _regression_line(row)
        for word, row in marked[:IMPACT_ROWS]
    ]
    hidden = len(marked) - IMPACT_ROWS
    if hidden > 0:
        lines.append(f"… and {hidden} more")
    if not lines:
        lines.append("No query regressed.")
    if notice.window_seconds:
        lines.append(f"Windows of {notice.window_seconds // 60} minutes before and after.")
    return lines


def _regression_line(row: dict[str, object]) -> str:
    query = row.get("fingerprint") or row.get("query_id") or "?"
    line = shorten(str(query), 80)
    if row.get("instance"):
        line += f" on {row['instance']}"
    metric = row.get("metric")
    before, after = row.get("before"), row.get("after")
    if metric is not None:
        line += f": {metric}"
    if before is not None and after is not None:
        line += f" {_number(before)} → {_number(after)}"
    change = row.get("change")
    if isinstance(change, int | float):
        line += f" ({change * 100:+.0f}%)"
    return line


def _number(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


# --- regressions and applied suggestions: one layout, a report ---------------------------

METRIC_NAMES = {
    "avg_latency": "average latency",
    "p95_latency": "p95 latency",
    "rows_examined_per_call": "rows examined per call",
    "load": "load",
}


@dataclass(frozen=True, slots=True)
class Report:
    """A message about one query: a title, its text (shown as code), facts as (label,
    plain value) pairs and a sentence. Each format lays it out and escapes it its own way."""

    title: str
    query: str
    facts: list[tuple[str, str]]
    text: str
    color: int
    link_text: str = "Open query in Quanta"


def metric_value(metric: str, value: object) -> str:
    """A metric's value as a person reads it: durations, rows, active sessions.

    >>> metric_value("avg_latency", 0.0351), metric_value("rows_examined_per_call", 30000.0)
    ('35.1 ms', '30,000 rows')
    """
    if not isinstance(value, int | float):
        return "unknown"
    if metric in ("avg_latency", "p95_latency"):
        return _duration(float(value))
    if metric == "load":
        return f"{value:.3g} active sessions"
    return f"{value:,.0f} rows"


def metric_change(metric: str, before: object, after: object) -> str:
    """``average latency 0.2 ms → 35.1 ms (x175)``; a fall as a percentage."""
    line = f"{METRIC_NAMES.get(metric, metric)} {metric_value(metric, before)} → "
    line += metric_value(metric, after)
    if isinstance(before, int | float) and isinstance(after, int | float) and before > 0:
        ratio = after / before
        line += f" (x{ratio:.3g})" if ratio >= 1 else f" ({(ratio - 1) * 100:+.0f}%)"
    return line


def regression_report(event: str, notice: RegressionNotice) -> Report:
    """A regression found (``event`` regression) or over (regression_resolved)."""
    since = _instant(notice.since)
    if event == "regression_resolved":
        return Report(
            title=f"Back within its baseline on {notice.instance}",
            query=notice.fingerprint,
            facts=[
                ("Now", metric_change(notice.metric, notice.before, notice.after)),
                ("Regressed since", since),
            ],
            text=f"It had regressed; likely cause: {notice.cause}",
            color=GOOD_COLOR,
        )
    title = (
        f"New heavy query on {notice.instance}"
        if notice.kind == "new"
        else f"Query slower on {notice.instance}"
    )
    return Report(
        title=title,
        query=notice.fingerprint,
        facts=[
            ("Change", metric_change(notice.metric, notice.before, notice.after)),
            ("Since", since),
            ("Load share", percent(notice.load_share)),
        ],
        text=f"Likely cause: {notice.cause}",
        color=IMPACT_COLOR,
    )


def outcome_report(notice: OutcomeNotice) -> Report:
    """What an applied suggestion did, per call."""
    facts = [
        ("Per call", metric_change(str(m["name"]), m.get("before"), m.get("after")))
        for m in notice.metrics
    ]
    facts.append(("Index", notice.ddl))
    facts.append(
        ("Measured", f"{notice.window_seconds // 60} minutes before and after "
                     f"{_instant(notice.applied_at)}")
    )  # fmt: skip
    return Report(
        title=f"Applied on {notice.instance}: the suggested index on {notice.table}",
        query=notice.fingerprint,
        facts=facts,
        text="",
        color=GOOD_COLOR,
    )


@dataclass(frozen=True, slots=True)
class DigestItem:
    """One held message as a digest shows it: a short line and where to read more."""

    event: str
    text: str
    link: str
    notice: dict[str, object]  # the held notice, whole (the JSON webhook passes it on)


def digest_item(event: str, payload: dict[str, object], public_url: str) -> DigestItem:
    """The digest line of a held delivery, from its stored notice."""
    if event == "new_suggestion":
        notice = SuggestionNotice(**payload)  # type: ignore[arg-type]
        text = (
            f"{notice.instance} · {notice.table} · {percent(notice.load_share)} of load · "
            f"{shorten(notice.ddl, 160)}"
        )
        link = query_link(public_url, notice.query_id, notice.instance)
        return DigestItem(event, text, link, payload)
    if event == "index_plan":
        plan = PlanNotice(**payload)  # type: ignore[arg-type]
        text = (
            f"{plan.instance} · {plan.table} · {percent(plan.load_share)} of load · "
            f"{shorten(plan.ddl, 160)}"
        )
        return DigestItem(event, text, plan_link(public_url, plan.instance_id), payload)
    if event == "index_review":
        review = ReviewNotice(**payload)  # type: ignore[arg-type]
        return DigestItem(
            event, review_title(review), review_link(public_url, review.instance_id), payload
        )
    if event in ("regression", "regression_resolved"):
        regression = RegressionNotice(**payload)  # type: ignore[arg-type]
        report = regression_report(event, regression)
        link = query_link(public_url, regression.query_id, regression.instance)
        return DigestItem(event, f"{report.title} · {shorten(report.query, 120)}", link, payload)
    if event == "suggestion_applied":
        outcome = OutcomeNotice(**payload)  # type: ignore[arg-type]
        link = query_link(public_url, outcome.query_id, outcome.instance)
        return DigestItem(event, outcome_report(outcome).title, link, payload)
    impact = ImpactNotice(**payload)  # type: ignore[arg-type]
    text = f"{impact_title(impact)} · {len(impact.regressions)} regressed queries"
    if impact.improvements:
        text += f", {len(impact.improvements)} improved"
    return DigestItem(event, text, annotation_link(public_url, impact.annotation_id), payload)


def digest_title(count: int, per_hour: int) -> str:
    """The digest's heading: how many messages it rolls up, and why."""
    noun = "message" if count == 1 else "messages"
    return f"Quanta digest: {count} {noun} held back (limit {per_hour} per hour)"


def check_text(channel_name: str, public_url: str) -> str:
    """The body of a "send test message"."""
    return (
        f"Quanta test message: channel “{channel_name}” is connected. Index suggestions "
        f"will link to {public_url.rstrip('/')}."
    )
