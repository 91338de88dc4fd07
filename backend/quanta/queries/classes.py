"""Use cases of the query-class caps: which new classes a batch may add to its instance, and
where each instance stands.

An instance may have QUANTA_MAX_CLASSES_PER_INSTANCE query classes and add
QUANTA_MAX_NEW_CLASSES_PER_HOUR of them per wall-clock hour. :func:`admit_classes` runs on
a batch's digest before it is written (ingest): the new classes that fit are kept, the
most executed first; the rest are folded into the "other queries" class of their schema
(quanta.analysis.class_cap), so the write path only ever sees ordinary query ids and every
count and time stays exact. A folded statement shape gets no catalog row, no example and
no advice; it is counted, in ``class_admissions`` and in the
``quanta_query_classes_folded`` / ``quanta_query_events_folded`` metrics.

Workers processing batches of one instance at the same time each read the count before
the other commits: the cap can be passed by what those batches add at once (a few batches'
worth), never more.
"""

import logging
from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from quanta.analysis.buckets import BatchDigest
from quanta.analysis.class_cap import fold_classes, new_classes
from quanta.analysis.resolution import Resolution, floor_to
from quanta.core.config import Settings
from quanta.core.db import run_after_commit, utcnow
from quanta.core.observability import record_classes_folded
from quanta.instances import service as instances_service
from quanta.queries import repository
from quanta.queries.schemas import ClassCap

__all__ = ["ADMISSIONS_KEPT", "STATUS_WINDOW", "admit_classes", "class_caps"]

log = logging.getLogger(__name__)

# What the status reports on, and how long the hourly counts are kept.
STATUS_WINDOW = timedelta(hours=24)
ADMISSIONS_KEPT = timedelta(days=7)


def admit_classes(
    *,
    session: Session,
    settings: Settings,
    instance_id: int,
    instance: str,
    digest: BatchDigest,
    now: datetime | None = None,
) -> BatchDigest:
    """The batch's digest with the new classes its instance may not add folded into
    "other queries"; the hour's counts are added to."""
    candidates = list(digest.queries)
    known = repository.instance_query_ids(session, instance_id, candidates)
    fresh = new_classes(digest, known)
    if not fresh:
        return digest
    hour = floor_to(now or utcnow(), Resolution.HOUR)
    stored = repository.count_instance_classes(session, instance_id).get(instance_id, 0)
    added = repository.admitted_in_hour(session, instance_id, hour)
    room = max(
        0,
        min(
            settings.max_classes_per_instance - stored,
            settings.max_new_classes_per_hour - added,
        ),
    )
    out = fold_classes(digest, fresh[room:])
    if added == 0:
        repository.delete_admissions_before(session, instance_id, hour - ADMISSIONS_KEPT)
    repository.add_admissions(
        session,
        instance_id,
        hour,
        admitted=min(room, len(fresh)),
        folded=out.classes,
        folded_events=out.events,
    )
    if out.classes:
        log.warning(
            "instance %s: %d new statement shapes (%d executions) counted under 'other "
            "queries': %d classes stored of %d, %d added this hour of %d",
            instance, out.classes, out.events, stored, settings.max_classes_per_instance,
            added, settings.max_new_classes_per_hour,
        )  # fmt: skip
        run_after_commit(
            session,
            lambda: record_classes_folded(
                instance=instance, classes=out.classes, events=out.events
            ),
        )
    return out.digest


def class_caps(
    *, session: Session, settings: Settings, now: datetime | None = None
) -> list[ClassCap]:
    """Every instance against the caps: classes stored, added this hour, and the statement
    shapes folded into "other queries" over the last day."""
    now = now or utcnow()
    hour = floor_to(now, Resolution.HOUR)
    stored = repository.count_instance_classes(session)
    rows = repository.admissions_since(session, hour - STATUS_WINDOW + timedelta(hours=1))
    caps = {
        instance_id: ClassCap(
            instance=name,
            classes=stored.get(instance_id, 0),
            max_classes=settings.max_classes_per_instance,
            added_this_hour=0,
            max_new_per_hour=settings.max_new_classes_per_hour,
            folded_classes=0,
            folded_events=0,
            last_folded=None,
        )
        for instance_id, name in instances_service.instance_names_by_id(session=session).items()
    }
    for row in rows:
        cap = caps.get(row.instance_id)
        if cap is None:
            continue  # the instance was deleted
        if row.hour_start == hour:
            cap.added_this_hour = row.admitted
        if row.folded:
            cap.folded_classes += row.folded
            cap.folded_events += row.folded_events
            cap.last_folded = row.hour_start
    return sorted(caps.values(), key=lambda cap: cap.instance)
