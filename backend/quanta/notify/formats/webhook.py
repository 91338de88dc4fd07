"""Generic JSON webhook: the whole notice as data, for scripts and other tools to consume."""

from quanta.notify.events import (
    ImpactNotice,
    OutcomeNotice,
    PlanNotice,
    RegressionNotice,
    ReviewNotice,
    SuggestionNotice,
)
from quanta.notify.formats.common import DigestItem

Message = dict[str, object]


def escape(text: str) -> str:
    """JSON data, not a chat message: nothing to escape."""
    return text


def suggestion(notice: SuggestionNotice, link: str) -> Message:
    """{"event", "url", "suggestion": every field of the notice}."""
    return {"event": "new_suggestion", "url": link, "suggestion": notice.to_dict()}


def plan(notice: PlanNotice, link: str) -> Message:
    """{"event", "url", "plan": every field of the notice}."""
    return {"event": "index_plan", "url": link, "plan": notice.to_dict()}


def impact(notice: ImpactNotice, link: str) -> Message:
    """{"event", "url", "annotation": every field of the notice}."""
    return {"event": "annotation_impact", "url": link, "annotation": notice.to_dict()}


def review(notice: ReviewNotice, link: str) -> Message:
    """{"event", "url", "review": every field of the notice}."""
    return {"event": "index_review", "url": link, "review": notice.to_dict()}


def regression(event: str, notice: RegressionNotice, link: str) -> Message:
    """Exactly {"event", "instance", "query_id", "fingerprint", "metric", "before", "after",
    "since", "cause"}: the contract scripts consume (the link is the query's, by its id)."""
    return {
        "event": event,
        "instance": notice.instance,
        "query_id": notice.query_id,
        "fingerprint": notice.fingerprint,
        "metric": notice.metric,
        "before": notice.before,
        "after": notice.after,
        "since": notice.since,
        "cause": notice.cause,
    }


def outcome(notice: OutcomeNotice, link: str) -> Message:
    """{"event": "suggestion_applied", "url", "outcome": every field of the notice}."""
    return {"event": "suggestion_applied", "url": link, "outcome": notice.to_dict()}


def digest(title: str, items: list[DigestItem]) -> Message:
    """{"event": "digest", "title", "items": [{"event", "text", "url", <notice key>: {...}}]}."""
    return {"event": "digest", "title": title, "items": [_item(item) for item in items]}


def _item(item: DigestItem) -> dict[str, object]:
    keys = {
        "new_suggestion": "suggestion",
        "index_plan": "plan",
        "regression": "regression",
        "regression_resolved": "regression",
        "suggestion_applied": "outcome",
        "index_review": "review",
    }
    key = keys.get(item.event, "annotation")
    return {"event": item.event, "text": item.text, "url": item.link, key: item.notice}


def check(text: str) -> Message:
    """{"event": "test", "text"}."""
    return {"event": "test", "text": text}
