"""The review of an instance's existing indexes: duplicate, redundant and primary-key-suffix
indexes from the snapshots at once; unused ones only where the statistics cover an unbroken
window of QUANTA_INDEX_UNUSED_MIN_MINUTES; each index's reads over a range; and the weekly
chat message listing the findings not announced before."""

import dataclasses
import hashlib
import json
import logging
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from quanta.analysis import advisor
from quanta.analysis.advisor import IndexFinding
from quanta.core.config import Settings
from quanta.instances.models import Instance
from quanta.instances.service import find_instance, list_instances
from quanta.notify import publish
from quanta.notify.events import ReviewNotice
from quanta.queries.window import TimeWindow, read_plan
from quanta.statistics import repository
from quanta.statistics.counters import READ_COUNTERS, first_of
from quanta.statistics.coverage import Window
from quanta.statistics.models import AnnouncedFinding, ObjectStatistics
from quanta.statistics.schemas import (
    IndexFindingOut,
    IndexReviewOut,
    IndexUsageOut,
    ReviewedTableOut,
)
from quanta.statistics.service import instance_coverage
from quanta.statistics.workload import coverage_out
from quanta.tables import service as tables_service

log = logging.getLogger(__name__)

UNUSED = advisor.FindingKind.UNUSED
NO_INDEX = ""  # the statistics' row of reads that used no index


@dataclasses.dataclass(frozen=True, slots=True)
class _TableStatistics:
    """What the statistics say of one table: since when its reads are whole (its own last
    reset, else the instance's window), and when each index (lower case) was last read."""

    reset_at: datetime | None
    last_read: dict[str, datetime | None]


def review_indexes(
    *,
    session: Session,
    settings: Settings,
    instance_id: int,
    window: TimeWindow | None = None,
) -> IndexReviewOut:
    """Duplicate, redundant, primary-key-suffix and unused indexes of the instance's
    snapshotted tables, with each index's reads over ``window`` when given.

    An index is called unused only on a table the statistics have seen, whose reads have been
    observed without a break (server restart, FLUSH, a lost interval, or the table's own
    counters reset) for QUANTA_INDEX_UNUSED_MIN_MINUTES, and that was not read in that time.

    Raises:
        quanta.instances.service.InstanceNotFound: no such instance.
    """
    instance = find_instance(session=session, instance_id=instance_id)
    coverage = instance_coverage(session=session, instance_id=instance_id)
    document = tables_service.schema_document(session=session, instance_id=instance_id, tables=None)
    minimum = timedelta(minutes=settings.index_unused_min_minutes)
    out = IndexReviewOut(
        instance=instance.name,
        findings=[],
        tables=[],
        coverage=coverage_out(coverage),
        unused_after_minutes=settings.index_unused_min_minutes,
    )
    if not document["tables"]:
        return out
    seen = _table_statistics(session, instance_id)
    since: dict[str, datetime] = {}
    usage: dict[str, dict[str, int]] = {}
    for table in document["tables"]:
        stats = seen.get(table)
        if coverage is None or stats is None:
            continue
        since[table] = max(coverage.since, stats.reset_at or coverage.since)
        if coverage.covers(minimum, since=stats.reset_at):
            usage[table] = {
                index: int(last is not None and last > since[table])
                for index, last in stats.last_read.items()
            }
    schema = advisor.parse_schema(document)
    findings = [
        _explained(f, since[f.table], coverage) if f.kind == UNUSED and coverage else f
        for f in advisor.review_indexes(schema, usage=usage)
    ]
    out.findings = [_finding_out(f) for f in findings]
    out.tables = [
        ReviewedTableOut(table=name, statistics_since=since.get(name), unused_checked=name in usage)
        for name in sorted(document["tables"])
    ]
    if window is not None:
        out.indexes = _index_usage(session, settings, instance_id, window, schema, seen)
    return out


def _table_statistics(session: Session, instance_id: int) -> dict[str, _TableStatistics]:
    """Per table (lower-case ``db.table``) with statistics: its latest reset over its own and
    its indexes' rows, and each index's last read."""
    resets: dict[str, datetime | None] = {}
    reads: dict[str, dict[str, datetime | None]] = defaultdict(dict)
    rows: list[ObjectStatistics] = [
        *repository.of_kind(session, instance_id, "table"),
        *repository.of_kind(session, instance_id, "index"),
    ]
    for row in rows:
        table = f"{row.schema_name}.{row.object_name}".lower()
        resets[table] = _latest(resets.get(table), row.reset_at)
        if row.kind == "index" and row.index_name != NO_INDEX:
            reads[table][row.index_name.lower()] = row.last_read_at
    return {table: _TableStatistics(resets[table], dict(reads[table])) for table in resets}


def _explained(finding: IndexFinding, since: datetime, coverage: Window) -> IndexFinding:
    """An unused finding that says over which window it holds."""
    reason = (
        f"{finding.index} was not read in {_span(coverage.until - since)} of unbroken "
        f"statistics (since {since:%Y-%m-%d %H:%M} UTC); check replicas and rare jobs "
        "(monthly reports) before dropping it."
    )
    return dataclasses.replace(finding, reason=reason)


def _span(length: timedelta) -> str:
    """A duration in the unit that reads best: 40 seconds, 45 minutes, 5.5 hours, 7.0 days."""
    minutes = length.total_seconds() / 60
    if minutes < 2:
        return f"{length.total_seconds():.0f} seconds"
    if minutes < 120:
        return f"{minutes:.0f} minutes"
    return f"{minutes / 60:.1f} hours" if minutes < 48 * 60 else f"{minutes / 1440:.1f} days"


def _finding_out(finding: IndexFinding) -> IndexFindingOut:
    return IndexFindingOut(
        table=finding.table,
        index=finding.index,
        kind=finding.kind.value,
        covered_by=finding.covered_by or None,
        ddl=finding.ddl,
        reason=finding.reason,
    )


def _index_usage(
    session: Session,
    settings: Settings,
    instance_id: int,
    window: TimeWindow,
    schema: advisor.Schema,
    seen: dict[str, _TableStatistics],
) -> list[IndexUsageOut]:
    """Every index of the snapshotted tables with its reads in the window (0 where the
    statistics see the table but not the index: both sources list only indexes read), and
    the table's reads that used no index."""
    reads: dict[tuple[str, str], int | None] = {}
    for row in repository.sums(
        session, instance_id, "index", read_plan(settings=settings, window=window)
    ):
        key = (f"{row['schema_name']}.{row['object_name']}".lower(), row["index_name"].lower())
        value = first_of(row, READ_COUNTERS)
        reads[key] = None if value is None else int(value)
    out = []
    for name, table in sorted(schema.tables.items()):
        stats = seen.get(name)
        known = 0 if stats is not None else None
        for index in (*([table.primary] if table.primary else []), *table.indexes):
            out.append(
                IndexUsageOut(
                    table=name,
                    index=index.name,
                    columns=list(index.columns),
                    unique=index.unique,
                    reads=reads.get((name, index.name), known),
                    last_read_at=stats.last_read.get(index.name) if stats else None,
                )
            )
        if (name, NO_INDEX) in reads:
            out.append(
                IndexUsageOut(
                    table=name, index=NO_INDEX, columns=[], unique=False,
                    reads=reads[(name, NO_INDEX)], last_read_at=None,
                )
            )  # fmt: skip
    return out


def _latest(a: datetime | None, b: datetime | None) -> datetime | None:
    return b if a is None else a if b is None else max(a, b)


def announce_index_reviews(*, session: Session, settings: Settings, now: datetime) -> list[int]:
    """Beat's weekly pass: every instance's new findings to chat (announce_index_review),
    each instance in a savepoint so one failure holds back no other; the delivery ids."""
    created: list[int] = []
    for listed in list_instances(session=session, settings=settings):
        instance = find_instance(session=session, instance_id=listed.id)
        try:
            with session.begin_nested():
                created += announce_index_review(
                    session=session, settings=settings, instance=instance, now=now
                )
        except Exception:
            log.exception("index review of %s: not announced", instance.name)
    return created


def announce_index_review(
    *, session: Session, settings: Settings, instance: Instance, now: datetime
) -> list[int]:
    """Post the instance's findings not announced before to the channels taking
    ``index_review``; the delivery ids. A finding is announced once; one that went away is
    forgotten, so it is announced again if it comes back."""
    review = review_indexes(session=session, settings=settings, instance_id=instance.id)
    current = {(f.table, f.index, f.kind): f for f in review.findings}
    known = repository.announced(session, instance.id)
    for key, row in known.items():
        if key not in current:
            session.delete(row)
    new = [finding for key, finding in sorted(current.items()) if key not in known]
    if not new:
        session.flush()
        return []
    for finding in new:
        session.add(
            AnnouncedFinding(
                instance_id=instance.id, table_name=finding.table, index_name=finding.index,
                kind=finding.kind, announced_at=now,
            )
        )  # fmt: skip
    session.flush()
    notice = ReviewNotice(
        instance_id=instance.id,
        instance=instance.name,
        findings=[finding.model_dump() for finding in new],
        total=len(current),
        content_hash=_findings_hash(instance.id, new),
    )
    return publish.publish_review(session=session, settings=settings, notice=notice)


def _findings_hash(instance_id: int, findings: Iterable[IndexFindingOut]) -> str:
    content = json.dumps([instance_id, sorted((f.table, f.index, f.kind) for f in findings)])
    return hashlib.sha256(content.encode()).hexdigest()
