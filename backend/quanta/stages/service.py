"""Use cases of the production stage profiles: store an agent's samples, answer a query's
profile over a range, rank queries by the share of one stage."""

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy.orm import Session

from quanta.analysis.resolution import Resolution, Segment, floor_to
from quanta.analysis.stages import (
    Classified,
    StageSample,
    WireSample,
    merge_samples,
    rank_profile,
)
from quanta.core.config import Settings
from quanta.core.db import utcnow
from quanta.instances.service import find_instance_by_name
from quanta.queries.service import find_query, fingerprints, own_queries
from quanta.queries.window import TimeWindow, read_plan, retained_since
from quanta.stages import repository
from quanta.stages.models import SAMPLES, STAGE_ONLY, STAGE_TABLES, TIMES
from quanta.stages.schemas import (
    CollectionOut,
    QueryStagesOut,
    StageOut,
    StageQueriesOut,
    StageQueryOut,
    StageTotalOut,
    WaitOut,
)

Samples = dict[tuple[datetime, str], StageSample]
ROLLED_UP = (Resolution.HOUR, Resolution.DAY)
CONSUMERS_HINT = (
    "turn them on with UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' WHERE "
    "NAME LIKE 'events_statements%' OR NAME LIKE 'events_stages%' (quanta-agent check "
    "gives every statement and what it costs)"
)


class ConsumerReport(Protocol):
    """What an agent says of the consumers (quanta.ingest.schemas.StageCollectionIn)."""

    @property
    def stages(self) -> bool: ...
    @property
    def waits(self) -> bool: ...


def record_stage_samples(
    *,
    session: Session,
    instance_id: int,
    samples: Iterable[WireSample],
    collection: ConsumerReport | None,
    classify: Callable[[str], Classified],
) -> int:
    """Add a batch's stage samples to every resolution, with the query ids the server's
    grouping rules give; store the consumers' state it reports. Returns the executions
    sampled."""
    if collection is not None:
        repository.save_collection(
            session,
            {
                "instance_id": instance_id,
                "stages": collection.stages,
                "waits": collection.waits,
                "reported_at": utcnow(),
            },
        )
    minutes = merge_samples(samples, classify)
    if not minutes:
        return 0
    by_resolution = {Resolution.MINUTE: minutes, **_rollups(minutes)}
    for table, to_rows in ((SAMPLES, _sample_rows), (TIMES, _time_rows)):
        repository.add_rows(
            session,
            table,
            {
                resolution: to_rows(instance_id, merged)
                for resolution, merged in by_resolution.items()
            },
        )
    return sum(sample.executions_sampled for sample in minutes.values())


def _rollups(minutes: Samples) -> dict[Resolution, Samples]:
    """The samples of every coarser resolution, each from the finest at hand."""
    out: dict[Resolution, Samples] = {}
    finer = minutes
    for resolution in ROLLED_UP:
        rolled: Samples = {}
        for (start, query_id), sample in finer.items():
            key = (floor_to(start, resolution), query_id)
            known = rolled.get(key)
            if known is None:
                rolled[key] = _copy(sample)
            else:
                known.merge(sample)
        out[resolution] = finer = rolled
    return out


def _copy(sample: StageSample) -> StageSample:
    copy = StageSample(sample.fingerprint)
    copy.merge(sample)
    return copy


def _sample_rows(instance_id: int, samples: Samples) -> list[dict[str, Any]]:
    return [
        {
            "instance_id": instance_id,
            "bucket_start": start,
            "query_id": query_id,
            "executions_sampled": sample.executions_sampled,
            "executions_total": sample.executions_total,
            "response_sum": float(sample.response),
            "waits_sampled": sample.waits_sampled,
        }
        for (start, query_id), sample in samples.items()
    ]


def _time_rows(instance_id: int, samples: Samples) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for (start, query_id), sample in samples.items():
        entries = [((stage, STAGE_ONLY), sums) for stage, sums in sample.stages.items()]
        entries += list(sample.waits.items())
        rows.extend(
            {
                "instance_id": instance_id,
                "bucket_start": start,
                "query_id": query_id,
                "stage": stage,
                "wait_event": event,
                "time_sum": float(time),
                "count": int(count),
            }
            for (stage, event), (time, count) in entries
        )
    return rows


def query_stages(
    *, session: Session, settings: Settings, query_id: str, instance: str, window: TimeWindow
) -> QueryStagesOut:
    """A query's production profile on one instance over ``window``; when nothing was
    sampled, ``reason`` says why.

    Raises:
        QueryNotFound: no such query class.
        InstanceNotFound: no such instance.
    """
    find_query(session=session, query_id=query_id)
    found = find_instance_by_name(session=session, name=instance)
    segments = read_plan(settings=settings, window=window)
    sample = _summed_sample(session, segments, instance_id=found.id, query_id=query_id)
    profile = rank_profile(sample)
    collection = repository.collections(session, [found.id]).get(found.id)
    return QueryStagesOut(
        instance=found.name,
        from_=window.start,
        to=window.end,
        executions_sampled=profile.executions_sampled,
        executions_total=profile.executions_total,
        response_s=profile.response,
        stages=[
            StageOut(
                stage=s.stage, time_s=s.time, share=s.share, calls=s.calls, per_call_s=s.per_call
            )
            for s in profile.stages
        ],
        lost_time_s=profile.lost_time,
        waits_sampled=profile.waits_sampled,
        waits=[
            WaitOut(stage=w.stage, event=w.event, time_s=w.time, count=w.count)
            for w in profile.waits
        ],
        collection=None
        if collection is None
        else CollectionOut(
            stages=collection.stages,
            waits=collection.waits,
            reported_at=collection.reported_at,
        ),
        reason=None if profile.executions_sampled else _why_nothing(found.name, sample, collection),
    )


def _summed_sample(
    session: Session, segments: Sequence[Segment], *, instance_id: int, query_id: str
) -> StageSample:
    """A query's samples on one instance summed over the segments (seconds)."""
    sums = repository.sample_sums(
        session, SAMPLES, segments, instance_ids=[instance_id], query_id=query_id
    )
    if not sums:
        return StageSample("")
    row = sums[0]
    sample = StageSample(
        "",
        int(row["executions_sampled"]),
        int(row["executions_total"]),
        float(row["response_sum"]),
        int(row["waits_sampled"]),
    )
    times = repository.time_sums(
        session, TIMES, segments, instance_ids=[instance_id], query_id=query_id
    )
    for time in times:
        sums_of = [float(time["time_sum"]), int(time["count"])]
        if time["wait_event"] == STAGE_ONLY:
            sample.stages[time["stage"]] = sums_of
        else:
            sample.waits[(time["stage"], time["wait_event"])] = sums_of
    return sample


def _why_nothing(instance: str, sample: StageSample, collection: Any) -> str:
    """Why a query has no production profile in a range, in the words a user acts on."""
    if collection is None:
        return (
            f"No stage profiles from {instance}: its agent does not poll performance_schema "
            "(the perfschema source) or is older than stage profiles."
        )
    if not collection.stages:
        return f"The stage consumers are off on {instance}: {CONSUMERS_HINT}."
    if sample.executions_total:
        return (
            f"None of the {sample.executions_total} executions in the range was sampled: "
            "performance_schema's history overwrote them before the agent read it (a larger "
            "performance_schema_events_stages_history_long_size keeps more)."
        )
    return "No execution of this query was sampled in the range."


def stage_queries(
    *,
    session: Session,
    settings: Settings,
    instances: Sequence[str],
    window: TimeWindow,
    stage: str | None,
    min_share: float,
    sort: str,
    limit: int,
) -> StageQueriesOut:
    """The stages of every sampled execution in scope (worst first), and with ``stage`` the
    queries ranked by the share of their sampled time spent in it (``sort`` ``share`` or
    ``time``), those under ``min_share`` left out, and Quanta's own statements too.

    Raises:
        InstanceNotFound: an instance name is unknown.
    """
    ids = [find_instance_by_name(session=session, name=name).id for name in instances] or None
    segments = read_plan(settings=settings, window=window)
    samples = {
        row["query_id"]: row
        for row in repository.sample_sums(session, SAMPLES, segments, instance_ids=ids)
    }
    own = own_queries(session=session, query_ids=list(samples))
    visible = {qid: row for qid, row in samples.items() if qid not in own}
    times = [
        row
        for row in repository.time_sums(
            session, TIMES, segments, instance_ids=ids, stages_only=True
        )
        if row["query_id"] in visible
    ]
    response = sum(float(row["response_sum"]) for row in visible.values())
    per_stage: dict[str, float] = defaultdict(float)
    for row in times:
        per_stage[row["stage"]] += float(row["time_sum"])
    menu = [
        StageTotalOut(stage=name, time_s=time, share=time / response if response else 0.0)
        for name, time in sorted(per_stage.items(), key=lambda item: (-item[1], item[0]))
    ]
    ranked = _ranked(visible, [r for r in times if r["stage"] == stage], min_share, sort)[:limit]
    names = fingerprints(session=session, query_ids=[entry.query_id for entry in ranked])
    for entry in ranked:
        entry.fingerprint = names.get(entry.query_id)
    return StageQueriesOut(from_=window.start, to=window.end, stage=stage, stages=menu, rows=ranked)


def _ranked(
    samples: dict[str, dict[str, Any]],
    times: Iterable[dict[str, Any]],
    min_share: float,
    sort: str,
) -> list[StageQueryOut]:
    rows = []
    for time in times:
        sample = samples[time["query_id"]]
        response = float(sample["response_sum"])
        sampled = int(sample["executions_sampled"])
        spent = float(time["time_sum"])
        share = spent / response if response else 0.0
        if share < min_share:
            continue
        rows.append(
            StageQueryOut(
                query_id=time["query_id"],
                fingerprint=None,
                executions_sampled=sampled,
                executions_total=int(sample["executions_total"]),
                response_s=response,
                time_s=spent,
                share=share,
                per_execution_s=spent / sampled if sampled else 0.0,
            )
        )
    field = "time_s" if sort == "time" else "share"
    return sorted(rows, key=lambda row: (-getattr(row, field), row.query_id))


def apply_retention(*, session: Session, settings: Settings, now: datetime) -> int:
    """Delete the stage rows older than the metric store keeps their resolution; how many."""
    kept = retained_since(settings=settings, now=now)
    return sum(
        repository.delete_before(session, table.models[resolution], before)
        for table in STAGE_TABLES
        for resolution, before in kept.items()
    )
