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
from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from quanta.analysis.buckets import BatchDigest, BucketKey, BucketMetrics, merged
from quanta.analysis.tags import TagCap, bounded, from_canonical
from quanta.core.config import Settings
from quanta.core.db import utcnow
from quanta.queries import repository

__all__ = ["ROUTING_WINDOW", "bound_tags", "instance_tag_values", "query_tags"]

# A query carries the tags its buckets had this far back (chat routing).
ROUTING_WINDOW = timedelta(days=7)


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


def query_tags(
    *,
    session: Session,
    query_ids: list[str],
    instance_ids: list[int],
    now: datetime | None = None,
) -> dict[tuple[str, int], dict[str, set[str]]]:
    """Per (query_id, instance_id), the values of each tag key its statements carried over
    the last ROUTING_WINDOW (untagged pairs are left out)."""
    since = (now or utcnow()) - ROUTING_WINDOW
    out: dict[tuple[str, int], dict[str, set[str]]] = {}
    for query_id, instance_id, tags in repository.query_tag_strings(
        session, query_ids, instance_ids, since
    ):
        values = out.setdefault((query_id, instance_id), {})
        for key, value in from_canonical(tags).items():
            values.setdefault(key, set()).add(value)
    return out
