"""Folding classes past the cap: every count, time and histogram kept exactly, per schema."""

from datetime import UTC, datetime, timedelta

from quanta.analysis.aggregate import digest_events
from quanta.analysis.buckets import merged
from quanta.analysis.class_cap import (
    OTHER_QUERIES,
    fold_classes,
    is_other_queries,
    new_classes,
    other_queries_fingerprint,
)
from quanta.analysis.fingerprint import fingerprint, query_id
from quanta.analysis.slowlog import SlowLogEvent

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def event(sql: str, seconds: float, minute: int, db: str, user: str = "app") -> SlowLogEvent:
    return SlowLogEvent(
        ts=T0 + timedelta(minutes=minute, seconds=5), query=sql, query_time=seconds,
        lock_time=0.001, rows_sent=1, rows_examined=10 * minute + 1, rows_affected=None,
        db=db, user=user, host="web1", line=None, attributes={},
    )  # fmt: skip


def flood() -> list[SlowLogEvent]:
    """A hot ordinary class (3 executions), then 5 junk shapes in two schemas."""
    hot = [event("SELECT * FROM orders WHERE id = 1", 0.5, minute, "shop") for minute in range(3)]
    junk = [
        event(f"SELECT c FROM tenant_{n}_orders WHERE id = {n}", 0.1 * (n + 1), n % 2,
              "shop" if n < 3 else "crm")
        for n in range(5)
    ]  # fmt: skip
    return hot + junk


def test_new_classes_come_most_executed_first() -> None:
    digest = digest_events(flood())
    hot = query_id(fingerprint("SELECT * FROM orders WHERE id = 1"))
    order = new_classes(digest, known=())
    assert order[0] == hot
    assert len(order) == 6
    assert order[1:] == sorted(order[1:])  # ties (one execution each) by query_id
    assert new_classes(digest, known={hot}) == order[1:]


def test_folding_keeps_every_figure_and_drops_examples() -> None:
    digest = digest_events(flood())
    hot = query_id(fingerprint("SELECT * FROM orders WHERE id = 1"))
    junk = [qid for qid in digest.queries if qid != hot]
    out = fold_classes(digest, junk)
    assert (out.classes, out.events) == (5, 5)
    shop, crm = (query_id(other_queries_fingerprint(s)) for s in ("shop", "crm"))
    assert set(out.digest.queries) == {hot, shop, crm}
    assert (
        out.digest.queries[shop].fingerprint
        == "Other queries (over the class cap) in schema `shop`"
    )
    assert out.digest.queries[shop].sample == out.digest.queries[shop].fingerprint
    # Per query and schema, the folded buckets add up exactly: every metric, the histogram.
    for schema, other in (("shop", shop), ("crm", crm)):
        before = merged(
            [m for k, m in digest.buckets.items() if k.query_id in junk and k.schema == schema]
        )
        after = merged([m for k, m in out.digest.buckets.items() if k.query_id == other])
        assert (after.count, after.query_time_sum, after.query_time_min, after.query_time_max) == (
            before.count, before.query_time_sum, before.query_time_min, before.query_time_max,
        )  # fmt: skip
        assert after.sums == before.sums
        assert after.histogram is not None
        assert before.histogram is not None
        assert after.histogram.to_bytes() == before.histogram.to_bytes()
    assert merged(list(out.digest.buckets.values())).count == len(flood())
    # The folded buckets keep their minute, user and host: one per key, merged within it.
    assert sorted((k.schema, k.start.minute) for k in out.digest.buckets if k.query_id != hot) == [
        ("crm", 0), ("crm", 1), ("shop", 0), ("shop", 1),
    ]  # fmt: skip
    assert {qid for qid, _ in out.digest.examples} == {hot}
    # First and last seen of each other-queries class span the shapes it took in.
    assert out.digest.queries[shop].first_seen == T0 + timedelta(seconds=5)
    assert out.digest.queries[shop].last_seen == T0 + timedelta(minutes=1, seconds=5)
    # The input is kept.
    assert len(digest.queries) == 6


def test_nothing_to_fold_is_the_same_digest() -> None:
    digest = digest_events(flood())
    out = fold_classes(digest, [])
    assert out.digest is digest
    assert (out.classes, out.events) == (0, 0)


def test_no_statement_is_taken_for_an_other_queries_class() -> None:
    # Fingerprints are lower case: a statement spelled like the class's fingerprint is not it.
    for text in (OTHER_QUERIES, other_queries_fingerprint("shop"), other_queries_fingerprint("")):
        assert is_other_queries(text)
        assert not is_other_queries(fingerprint(text))
    assert other_queries_fingerprint("a`b") == "Other queries (over the class cap) in schema `a``b`"
    digest = digest_events([event(other_queries_fingerprint("shop"), 1.0, 0, "shop")])
    assert new_classes(digest, known=()) == list(digest.queries)  # an ordinary new class
