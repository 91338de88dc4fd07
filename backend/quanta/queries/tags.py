"""Use cases of query tags: which tags a batch's buckets keep (ingest), and the tag keys and
values an instance's buckets hold (filter lists).

Agents send every tag their statements carry (quanta.analysis.tags); the server decides
what is stored, so the rule is one for every agent version and source: only the keys of
QUANTA_TAG_KEYS, and at most QUANTA_TAG_VALUES_PER_KEY distinct values per key and instance
(``instance_tag_values`` records them; later values are stored as "other"), so that a
request id in a comment cannot turn every statement into a bucket of its own. Buckets whose
tags become equal are merged, exactly. Workers processing batches of one instance at once
each read the stored values before the other commits: the cap can be passed by what those
batches add at once, never more.
"""

from dataclasses import replace
from datetime import datetime

from sqlalchemy.orm import Session

from quanta.analysis.buckets import BatchDigest, BucketKey, BucketMetrics, merged
from quanta.analysis.tags import TagCap, bounded
from quanta.core.config import Settings
from quanta.core.db import utcnow
from quanta.queries import repository

__all__ = ["bound_tags", "instance_tag_values"]


def bound_tags(
    *,
    session: Session,
    settings: Settings,
    instance_id: int,
    digest: BatchDigest,
    now: datetime | None = None,
) -> BatchDigest:
    """The batch's digest with only the configured tag keys kept and each key's values
    capped per instance; the new values are recorded."""
    tagged = {key.tags for key in digest.buckets if key.tags}
    if not tagged:
        return digest
    keys = frozenset(settings.tag_keys)
    known = repository.tag_values(session, [instance_id]).get(instance_id, {})
    cap = TagCap(known, settings.tag_values_per_key)
    # Sorted, so that which values fit the cap does not depend on a set's order.
    kept = {tags: bounded(tags, keys, cap) for tags in sorted(tagged)}
    repository.add_tag_values(session, instance_id, cap.added, now or utcnow())
    if all(kept[tags] == tags for tags in tagged):
        return digest
    parts: dict[BucketKey, list[BucketMetrics]] = {}
    for key, metrics in digest.buckets.items():
        if key.tags:
            key = replace(key, tags=kept[key.tags])
        parts.setdefault(key, []).append(metrics)
    buckets = {key: group[0] if len(group) == 1 else merged(group) for key, group in parts.items()}
    return BatchDigest(buckets=buckets, queries=digest.queries, examples=digest.examples)


def instance_tag_values(
    *, session: Session, instance_ids: list[int] | None = None
) -> dict[int, dict[str, set[str]]]:
    """The tag values stored per instance and key."""
    return repository.tag_values(session, instance_ids)
