"""Use cases of regressions: find them, name their likely cause, announce them once and their
resolution once; list them.

The statistics are `quanta.analysis.regression`'s (pure); this module reads what they need
from the metric store (through `quanta.queries.service`), gathers the clues of a cause from
what Quanta already knows (schema statements on the query's tables, annotations, a fresh
EXPLAIN against the last stored one, rows examined and calls), and publishes to chat.
"""

import logging
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from quanta.advice import service as advice_service
from quanta.analysis.impact import Slot
from quanta.analysis.regression import (
    Assessment,
    Clues,
    Kind,
    Rules,
    Windows,
    assess,
    baseline_resolution,
    likely_cause,
    per_call,
    recovered,
)
from quanta.analysis.resolution import Resolution, floor_to
from quanta.annotations import service as annotations_service
from quanta.core import errors
from quanta.core.config import Settings
from quanta.core.db import utcnow
from quanta.diagnostics import service as diagnostics_service
from quanta.instances import service as instances_service
from quanta.instances.models import Instance
from quanta.notify import service as notify_service
from quanta.notify.events import (
    REGRESSION,
    REGRESSION_RESOLVED,
    OutcomeNotice,
    RegressionNotice,
)
from quanta.notify.publish import publish_outcome, publish_regression
from quanta.queries import service as queries_service
from quanta.queries.window import TimeWindow, retained_since
from quanta.regressions import repository
from quanta.regressions.models import Regression, RegressionStatus
from quanta.regressions.schemas import RegressionOut, RegressionsOut

log = logging.getLogger(__name__)

__all__ = ["CheckResult", "RegressionNotFound", "check_regressions", "list_regressions"]

# A regression waits this long for its fresh EXPLAIN before it is announced without it.
PLAN_WAIT = timedelta(minutes=2)
# Applied suggestions measured for this long after they were applied, over windows up to
# OUTCOME_MINUTES either side.
OUTCOME_LOOKBACK = timedelta(days=1)
OUTCOME_MINUTES = 60
# Queries per instance read per check: the heaviest of the recent window (at most 100 can
# carry 1% of the load each; more carry 0.1 active sessions only on a saturated server).
MAX_CANDIDATES = 200
_MINUTE = timedelta(minutes=1)


class RegressionNotFound(errors.NotFound):
    """No regression has this id."""


@dataclass(slots=True)
class CheckResult:
    """What one check did, by regression id."""

    found: list[int] = field(default_factory=list)
    announced: list[int] = field(default_factory=list)
    resolved: list[int] = field(default_factory=list)
    outcomes: list[int] = field(default_factory=list)  # applied suggestions posted


def rules(settings: Settings) -> Rules:
    """The detector's thresholds from the settings."""
    return Rules(
        min_ratio=settings.regression_min_ratio,
        min_latency_change=settings.regression_min_latency_change,
        alpha=settings.regression_alpha,
        min_load_share=settings.regression_min_load_share,
        min_active_sessions=settings.regression_min_active_sessions,
    )


def check_regressions(
    *, session: Session, settings: Settings, now: datetime | None = None
) -> CheckResult:
    """Beat's check, per instance: resolve the open regressions back within their baseline,
    announce the pending ones whose EXPLAIN ended, and find new ones (queueing an EXPLAIN of
    each on an instance with a DSN)."""
    now = now or utcnow()
    result = CheckResult()
    for instance in instances_service.all_instances(session=session):
        _check_instance(session, settings, instance, now, result)
    result.outcomes = announce_outcomes(session=session, settings=settings, now=now)
    return result


def _windows(
    session: Session, settings: Settings, instance: Instance, now: datetime
) -> Windows | None:
    """The instance's windows: the recent one ends with the newest minute it reported (so a
    delayed agent or ingest shifts the window instead of showing empty minutes)."""
    latest = queries_service.latest_minute(session=session, instance_id=instance.id)
    if latest is None:
        return None
    end = min(floor_to(now, Resolution.MINUTE), latest + _MINUTE)
    span = (settings.regression_min_minutes + settings.regression_baseline_minutes) * _MINUTE
    resolution = baseline_resolution(
        settings.regression_baseline_minutes,
        oldest_kept=retained_since(settings=settings, now=now),
        start=end - span,
        max_slots=settings.annotation_impact_max_slots,
    )
    return Windows.ending(
        end,
        recent_minutes=settings.regression_min_minutes,
        baseline_minutes=settings.regression_baseline_minutes,
        baseline_resolution=resolution,
    )


def _check_instance(
    session: Session, settings: Settings, instance: Instance, now: datetime, result: CheckResult
) -> None:
    windows = _windows(session, settings, instance, now)
    if windows is None:
        return
    the_rules = rules(settings)
    top = queries_service.instance_load(
        session=session,
        settings=settings,
        instance=instance.name,
        window=TimeWindow(windows.recent_start, windows.recent_end),
        limit=MAX_CANDIDATES,
    )
    instance_time = top.query_time
    # Schema statements (a CREATE INDEX of a minute) are causes, not workload.
    heavy = [
        row.query_id
        for row in top.rows
        if (row.share >= the_rules.min_load_share or row.load >= the_rules.min_active_sessions)
        and row.statement_type not in queries_service.SCHEMA_CHANGE_TYPES
    ]
    unresolved = repository.unresolved(session, instance.id)
    ids = sorted(set(heavy) | {row.query_id for row in unresolved})
    recent = _slots(
        session, instance, Resolution.MINUTE, windows.recent_start, windows.recent_end, ids
    )
    for row in unresolved:
        back = recovered(
            recent.get(row.query_id, {}),
            windows=windows,
            kind=Kind(row.kind),
            metric=row.metric,
            baseline_values=row.evidence.get("baseline", {}),
            instance_query_time=instance_time,
            rules=the_rules,
        )
        if back:
            _resolve(session, settings, instance, row, windows, recent.get(row.query_id, {}), now)
            result.resolved.append(row.id)
        elif row.status == RegressionStatus.PENDING.value and _announce(
            session, settings, instance, row, now
        ):
            result.announced.append(row.id)
    watched = {row.query_id for row in unresolved}
    fresh = [query_id for query_id in heavy if query_id not in watched]
    if not fresh:
        return
    width = windows.baseline_width
    resolution = next(r for r in Resolution if r.width == width)
    baseline = _slots(
        session, instance, resolution, windows.baseline_start, windows.baseline_end, fresh
    )
    observed = queries_service.instance_first_seen(session=session, instance_id=instance.id)
    for query_id in fresh:
        found = assess(
            baseline.get(query_id, {}),
            recent.get(query_id, {}),
            windows=windows,
            instance_query_time=instance_time,
            rules=the_rules,
            observed_since=observed,
        )
        if found.kind is None:
            continue
        opened = _open(session, settings, instance, query_id, found, windows, now)
        if opened is None:
            continue
        result.found.append(opened.id)
        if opened.explain_run_id is None and _announce(session, settings, instance, opened, now):
            result.announced.append(opened.id)  # no plan to wait for: at once


def _slots(
    session: Session,
    instance: Instance,
    resolution: Resolution,
    start: datetime,
    end: datetime,
    query_ids: list[str],
) -> dict[str, dict[datetime, Slot]]:
    if not query_ids:
        return {}
    return queries_service.query_slots(
        session=session,
        instance=instance.name,
        resolution=resolution,
        start=start,
        end=end,
        query_ids=query_ids,
    )


def _open(
    session: Session,
    settings: Settings,
    instance: Instance,
    query_id: str,
    found: Assessment,
    windows: Windows,
    now: datetime,
) -> Regression | None:
    """Store a regression found now (pending) and queue an EXPLAIN of its query."""
    assert found.kind is not None
    assert found.metric is not None
    assert found.since is not None
    metric = found.metrics.get(found.metric)
    row = Regression(
        instance_id=instance.id,
        query_id=query_id,
        kind=found.kind.value,
        metric=found.metric,
        before=metric.before if metric else 0.0,
        after=metric.after if metric else found.load,
        since=found.since,
        detected_at=now,
        window_start=windows.recent_start,
        window_end=windows.recent_end,
        baseline_start=windows.baseline_start,
        baseline_end=windows.baseline_end,
        seasonal=found.seasonal,
        load=found.load,
        load_share=found.load_share,
        evidence=_evidence(found, windows),
        status=RegressionStatus.PENDING.value,
    )
    if not repository.add(session, row):
        return None
    if instance.dsn_encrypted is not None:
        # On the guarded diagnostics path (audited as beat): did the plan change?
        (row.explain_run_id,) = diagnostics_service.explain_now(
            session=session, settings=settings, instance=instance, query_ids=[query_id]
        )
    row.cause = likely_cause(
        _clues(session, settings, instance, row, None), min_ratio=settings.regression_min_ratio
    )
    session.flush()
    log.info("regression of %s on %s since %s: %s", query_id, instance.name, row.since, row.metric)
    return row


def _evidence(found: Assessment, windows: Windows) -> dict[str, Any]:
    """What was compared and measured, as JSON."""
    return {
        "baseline": found.baseline_values(),
        "baseline_resolution": next(
            r for r in Resolution if r.width == windows.baseline_width
        ).value,
        "baseline_slots": found.baseline_slots,
        "observed_minutes": found.observed_minutes,
        "calls_per_minute": [found.calls_per_minute_before, found.calls_per_minute_after],
        "metrics": {
            name: {**asdict(m), "since": m.since.isoformat() if m.since else None}
            for name, m in found.metrics.items()
        },
    }


def _clues(
    session: Session,
    settings: Settings,
    instance: Instance,
    row: Regression,
    plan: diagnostics_service.PlanComparison | None,
) -> Clues:
    """What Quanta knows around the regression's start (see analysis.regression.Clues)."""
    query = queries_service.find_query(session=session, query_id=row.query_id)
    since = row.since - settings.regression_cause_minutes * _MINUTE
    statements = queries_service.schema_statements(
        session=session,
        instance=instance.name,
        tables=list(query.tables or []),
        since=since,
        until=row.detected_at,
    )
    marked = annotations_service.list_annotations(
        session=session, window=TimeWindow(since, row.detected_at), instance=instance.name, tags=[]
    )
    row.evidence = {
        **row.evidence,
        "schema_statements": [
            {"query_id": s.query_id, "statement": s.fingerprint, "seen_at": s.seen_at.isoformat()}
            for s in statements
        ],
        "annotations": [{"id": a.id, "text": a.text, "time": a.time.isoformat()} for a in marked],
        "plan": asdict(plan) if plan is not None else None,
    }
    rows = row.evidence.get("metrics", {}).get("rows_examined_per_call", {})
    calls = row.evidence.get("calls_per_minute", [None, None])
    return Clues(
        schema_statements=[(s.fingerprint, s.seen_at) for s in statements],
        annotations=[(a.text, a.time) for a in marked],
        plan_before=plan.before if plan else None,
        plan_after=plan.after if plan else None,
        rows_before=rows.get("before"),
        rows_after=rows.get("after"),
        calls_before=calls[0],
        calls_after=calls[1],
        new_query=row.kind == Kind.NEW.value,
    )


def _announce(
    session: Session, settings: Settings, instance: Instance, row: Regression, now: datetime
) -> bool:
    """Announce a pending regression once its EXPLAIN ended (or PLAN_WAIT passed): the
    cause is named again with the plan comparison, and the message goes out."""
    plan = None
    if row.explain_run_id is not None:
        plan = diagnostics_service.compare_plan(
            session=session, run_id=row.explain_run_id, before=row.since
        )
        if not plan.finished and now - row.detected_at < PLAN_WAIT:
            return False
    row.cause = likely_cause(
        _clues(session, settings, instance, row, plan), min_ratio=settings.regression_min_ratio
    )
    row.status = RegressionStatus.OPEN.value
    row.announced_at = now
    publish_regression(
        session=session,
        settings=settings,
        notice=_notice(session, instance, row, row.after),
        event=REGRESSION,
    )
    return True


def _resolve(
    session: Session,
    settings: Settings,
    instance: Instance,
    row: Regression,
    windows: Windows,
    recent: dict[datetime, Slot],
    now: datetime,
) -> None:
    """Close a regression back within its baseline; its end goes to chat only when its
    start did."""
    after = _metric_now(row, recent, windows)
    row.status = RegressionStatus.RESOLVED.value
    row.resolved_at = now
    row.resolution = {
        "window_start": windows.recent_start.isoformat(),
        "window_end": windows.recent_end.isoformat(),
        "after": after,
    }
    if row.announced_at is not None:
        notice = _notice(session, instance, row, after)
        publish_regression(
            session=session, settings=settings, notice=notice, event=REGRESSION_RESOLVED
        )


def _metric_now(row: Regression, recent: dict[datetime, Slot], windows: Windows) -> float | None:
    """The regressed metric in the window that resolved it (load for a new heavy query)."""
    slots = [s for at, s in recent.items() if s.count and windows.recent_start <= at]
    if row.kind == Kind.NEW.value:
        return sum(s.query_time for s in slots) / (windows.recent_minutes * 60)
    return per_call(slots).get(row.metric)


def _notice(
    session: Session, instance: Instance, row: Regression, after: float | None
) -> RegressionNotice:
    query = queries_service.find_query(session=session, query_id=row.query_id)
    return RegressionNotice(
        regression_id=row.id,
        instance=instance.name,
        query_id=row.query_id,
        fingerprint=query.fingerprint,
        metric=row.metric,
        before=row.before,
        after=after,
        since=row.since.isoformat(),
        cause=row.cause,
        load_share=row.load_share,
        kind=row.kind,
    )


# ------------------------------------------------------------------ applied suggestions


def announce_outcomes(*, session: Session, settings: Settings, now: datetime) -> list[int]:
    """The closed loop: for each suggestion applied in the last day and sent to chat, once
    its query has run QUANTA_REGRESSION_MIN_MINUTES on the new index, post its cost per call
    before and after (equal windows, up to an hour) where the suggestion was posted. Returns
    the suggestion ids posted now."""
    posted = []
    for suggestion in advice_service.applied_since(session=session, since=now - OUTCOME_LOOKBACK):
        if not notify_service.suggestion_sent(session=session, suggestion_id=suggestion.id):
            continue
        if notify_service.outcome_queued(session=session, suggestion_id=suggestion.id):
            continue
        notice = _outcome(session, suggestion, settings, now)
        if notice is not None:
            publish_outcome(session=session, settings=settings, notice=notice)
            posted.append(suggestion.id)
    return posted


def _outcome(
    session: Session, suggestion: Any, settings: Settings, now: datetime
) -> OutcomeNotice | None:
    """Per-call figures of the suggestion's query in the minutes before and after its index
    appeared; None until the query ran in enough minutes on both sides."""
    applied = floor_to(suggestion.updated_at, Resolution.MINUTE)
    after_start = applied + _MINUTE  # the minute of the change is neither before nor after
    minutes = min((floor_to(now, Resolution.MINUTE) - after_start) // _MINUTE, OUTCOME_MINUTES)
    if minutes < settings.regression_min_minutes:
        return None
    instance = instances_service.find_instance(session=session, instance_id=suggestion.instance_id)
    ids = [suggestion.query_id]
    span = minutes * _MINUTE
    before = _slots(session, instance, Resolution.MINUTE, applied - span, applied, ids)
    after = _slots(session, instance, Resolution.MINUTE, after_start, after_start + span, ids)
    before_slots = list(before.get(suggestion.query_id, {}).values())
    after_slots = list(after.get(suggestion.query_id, {}).values())
    if not before_slots or not after_slots:
        return None
    was, now_is = per_call(before_slots), per_call(after_slots)
    query = queries_service.find_query(session=session, query_id=suggestion.query_id)
    return OutcomeNotice(
        suggestion_id=suggestion.id,
        instance=instance.name,
        query_id=suggestion.query_id,
        fingerprint=query.fingerprint,
        table=suggestion.table_name,
        ddl=suggestion.ddl,
        applied_at=suggestion.updated_at.isoformat(),
        window_seconds=minutes * 60,
        metrics=[
            {"name": name, "before": was[name], "after": now_is[name]}
            for name in was
            if was[name] is not None and now_is[name] is not None
        ],
    )


# --------------------------------------------------------------------------------- reads


def list_regressions(
    *,
    session: Session,
    instance: str | None,
    status: list[str],
    query_id: str | None,
    since: datetime | None,
    limit: int,
) -> RegressionsOut:
    """Regressions, newest first, by instance, status, query and time found."""
    rows = repository.listed(
        session, instance=instance, status=status, query_id=query_id, since=since, limit=limit
    )
    fingerprints = queries_service.fingerprints(
        session=session, query_ids=[r.query_id for r, _ in rows]
    )
    return RegressionsOut(
        regressions=[_out(row, name, fingerprints.get(row.query_id, "")) for row, name in rows]
    )


def get_regression(*, session: Session, regression_id: int) -> RegressionOut:
    """One regression with its evidence."""
    row = repository.get(session, regression_id)
    if row is None:
        raise RegressionNotFound(f"No regression with id {regression_id}.")
    instance = instances_service.find_instance(session=session, instance_id=row.instance_id)
    query = queries_service.find_query(session=session, query_id=row.query_id)
    return _out(row, instance.name, query.fingerprint)


def _out(row: Regression, instance: str, fingerprint: str) -> RegressionOut:
    return RegressionOut(
        id=row.id,
        instance=instance,
        query_id=row.query_id,
        fingerprint=fingerprint,
        kind=row.kind,
        metric=row.metric,
        before=row.before,
        after=row.after,
        since=row.since,
        detected_at=row.detected_at,
        window_start=row.window_start,
        window_end=row.window_end,
        baseline_start=row.baseline_start,
        baseline_end=row.baseline_end,
        seasonal=row.seasonal,
        load=row.load,
        load_share=row.load_share,
        cause=row.cause,
        status=row.status,
        announced_at=row.announced_at,
        resolved_at=row.resolved_at,
        explain_run_id=row.explain_run_id,
        evidence=row.evidence,
        resolution=row.resolution,
    )
