"""Bounded query classes: statement shapes past an instance's cap, folded into "other queries".

Any database user can make every statement a new query class (a table or alias name per
statement; failed statements are slow-logged too), and each class costs the store its
catalog row, buckets at three resolutions, examples and advice. The server admits a
bounded number of new classes per instance (the caller decides which, see
``quanta.queries.classes``); :func:`fold_classes` counts the rest under one "other queries"
class per schema: their buckets are merged into its buckets (counts, times and
histograms exactly, so every total stays the same), their examples are dropped.

The other-queries class is an ordinary class to the store (its query_id is its
fingerprint's); its fingerprint starts with a capital letter, which no statement's
fingerprint has (they are lower case), so :func:`is_other_queries` cannot be fooled by a
statement written to look like it.

Example:
    >>> other_queries_fingerprint("shop")
    'Other queries (over the class cap) in schema `shop`'
    >>> from quanta.analysis.fingerprint import fingerprint
    >>> is_other_queries(fingerprint(other_queries_fingerprint("shop")))
    False
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from quanta.analysis.buckets import BatchDigest, BucketKey, BucketMetrics, QuerySeen, merged
from quanta.analysis.fingerprint import query_id

__all__ = [
    "OTHER_QUERIES",
    "Folded",
    "fold_classes",
    "is_other_queries",
    "new_classes",
    "other_queries_fingerprint",
]

OTHER_QUERIES = "Other queries (over the class cap)"


def other_queries_fingerprint(schema: str) -> str:
    """The fingerprint of the class that counts a schema's statements past the cap."""
    if not schema:
        return OTHER_QUERIES
    return f"{OTHER_QUERIES} in schema `{schema.replace('`', '``')}`"


def is_other_queries(fingerprint: str) -> bool:
    """Whether a class is an other-queries class (no statement's fingerprint is)."""
    return fingerprint.startswith(OTHER_QUERIES)


def new_classes(digest: BatchDigest, known: Collection[str]) -> list[str]:
    """The batch's classes not in ``known``, the most executed first (ties by query_id):
    when only some fit under the cap, those are the ones a workload most likely needs."""
    counts: dict[str, int] = {}
    for key, metrics in digest.buckets.items():
        counts[key.query_id] = counts.get(key.query_id, 0) + metrics.count
    fresh = [
        qid
        for qid, seen in digest.queries.items()
        if qid not in known and not is_other_queries(seen.fingerprint)
    ]
    return sorted(fresh, key=lambda qid: (-counts.get(qid, 0), qid))


@dataclass(frozen=True, slots=True)
class Folded:
    """A digest after folding, and what was folded: classes and their executions."""

    digest: BatchDigest
    classes: int
    events: int


def fold_classes(digest: BatchDigest, folded: Collection[str]) -> Folded:
    """``digest`` with the classes in ``folded`` counted under the other-queries class of
    each bucket's schema (a new digest; the input is kept).

    Every metric of their buckets is merged exactly; their examples are dropped; the
    other-queries classes are seen when the classes they took in were.

    Example:
        >>> out = fold_classes(digest, new_classes(digest, known=stored)[room:])
        >>> sum(m.count for m in out.digest.buckets.values()) == sum(
        ...     m.count for m in digest.buckets.values())
        True
    """
    fold = set(folded)
    if not fold:
        return Folded(digest, 0, 0)
    parts: dict[BucketKey, list[BucketMetrics]] = {}
    queries = {qid: seen for qid, seen in digest.queries.items() if qid not in fold}
    events = 0
    for key, metrics in digest.buckets.items():
        if key.query_id not in fold:
            parts.setdefault(key, []).append(metrics)
            continue
        events += metrics.count
        other = other_queries_fingerprint(key.schema)
        other_id = query_id(other)
        parts.setdefault(
            BucketKey(other_id, key.schema, key.user, key.host, key.start, key.tags), []
        ).append(metrics)
        _widen(queries, other_id, other, digest.queries[key.query_id])
    buckets = {key: group[0] if len(group) == 1 else merged(group) for key, group in parts.items()}
    examples = {key: pick for key, pick in digest.examples.items() if key[0] not in fold}
    return Folded(BatchDigest(buckets, queries, examples), len(fold & set(digest.queries)), events)


def _widen(queries: dict[str, QuerySeen], other_id: str, other: str, seen: QuerySeen) -> None:
    known = queries.get(other_id)
    if known is None:
        # The fingerprint stands for the sample too: no statement of a folded class is kept.
        queries[other_id] = QuerySeen(other, seen.first_seen, seen.last_seen, other)
    else:
        known.first_seen = min(known.first_seen, seen.first_seen)
        known.last_seen = max(known.last_seen, seen.last_seen)
