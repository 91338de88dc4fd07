"""Pure payload builders, one module per chat service, behind one dispatch.

Every builder takes plain values (a notice, a link, a title) and returns the JSON body to
POST; nothing here reads settings, the database or the network, so each format is tested
for its exact structure.
"""

from collections.abc import Callable
from types import ModuleType

from quanta.notify.events import (
    ANNOTATION_IMPACT,
    INDEX_PLAN,
    INDEX_REVIEW,
    NEW_SUGGESTION,
    REGRESSION,
    REGRESSION_RESOLVED,
    SUGGESTION_APPLIED,
    ImpactNotice,
    OutcomeNotice,
    PlanNotice,
    RegressionNotice,
    ReviewNotice,
    SuggestionNotice,
)
from quanta.notify.formats import common, discord, mattermost, slack, teams, webhook

Message = dict[str, object]

FORMATS: dict[str, ModuleType] = {
    "slack": slack,
    "teams": teams,
    "mattermost": mattermost,
    "discord": discord,
    "webhook": webhook,
}


def _module(channel_type: str) -> ModuleType:
    try:
        return FORMATS[channel_type]
    except KeyError:
        raise ValueError(f"unknown channel type {channel_type!r}") from None


def event_message(
    channel_type: str, event: str, notice: dict[str, object], public_url: str
) -> Message:
    """The body for one event (its notice as stored, see events.py) on a channel type."""
    module = _module(channel_type)
    if event == NEW_SUGGESTION:
        suggestion = SuggestionNotice(**notice)  # type: ignore[arg-type]
        link = common.query_link(public_url, suggestion.query_id, suggestion.instance)
        build: Callable[..., Message] = module.suggestion
        return build(suggestion, link)
    if event == INDEX_PLAN:
        plan = PlanNotice(**notice)  # type: ignore[arg-type]
        build = module.plan
        return build(plan, common.plan_link(public_url, plan.instance_id))
    if event == INDEX_REVIEW:
        review = ReviewNotice(**notice)  # type: ignore[arg-type]
        build = module.review
        return build(review, common.review_link(public_url, review.instance_id))
    if event == ANNOTATION_IMPACT:
        impact = ImpactNotice(**notice)  # type: ignore[arg-type]
        build = module.impact
        return build(impact, common.annotation_link(public_url, impact.annotation_id))
    if event in (REGRESSION, REGRESSION_RESOLVED):
        regression = RegressionNotice(**notice)  # type: ignore[arg-type]
        build = module.regression
        link = common.query_link(public_url, regression.query_id, regression.instance)
        return build(event, regression, link)
    if event == SUGGESTION_APPLIED:
        outcome = OutcomeNotice(**notice)  # type: ignore[arg-type]
        build = module.outcome
        return build(outcome, common.query_link(public_url, outcome.query_id, outcome.instance))
    raise ValueError(f"unknown event {event!r}")


def digest_message(
    channel_type: str,
    held: list[tuple[str, dict[str, object]]],
    public_url: str,
    per_hour: int,
) -> Message:
    """One body rolling up held (event, notice) pairs, oldest first."""
    items = [common.digest_item(event, notice, public_url) for event, notice in held]
    build: Callable[..., Message] = _module(channel_type).digest
    return build(common.digest_title(len(items), per_hour), items)


def check_message(channel_type: str, channel_name: str, public_url: str) -> Message:
    """The body of the "send test message" action."""
    module = _module(channel_type)
    build: Callable[..., Message] = module.check
    escape: Callable[[str], str] = module.escape  # the name is an admin's free text
    return build(common.check_text(escape(channel_name), public_url))
