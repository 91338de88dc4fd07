"""Generic JSON webhook: the whole notice as data, for scripts and other tools to consume."""

from quanta.notify.events import ImpactNotice, PlanNotice, ReviewNotice, SuggestionNotice
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


def digest(title: str, items: list[DigestItem]) -> Message:
    """{"event": "digest", "title", "items": [{"event", "text", "url", <notice key>: {...}}]}."""
    return {"event": "digest", "title": title, "items": [_item(item) for item in items]}


def _item(item: DigestItem) -> dict[str, object]:
    keys = {"new_suggestion": "suggestion", "index_plan": "plan", "index_review": "review"}
    key = keys.get(item.event, "annotation")
    return {"event": item.event, "text": item.text, "url": item.link, key: item.notice}


def check(text: str) -> Message:
    """{"event": "test", "text"}."""
    return {"event": "test", "text": text}
