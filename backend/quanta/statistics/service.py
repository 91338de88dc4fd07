"""Use cases around table, index and account statistics."""

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, Protocol

from sqlalchemy.orm import Session

from quanta.analysis import advisor
from quanta.analysis.advisor.workload import TableWrites
from quanta.instances.service import find_instance
from quanta.statistics import repository
from quanta.statistics.schemas import IndexFindingOut, IndexReviewOut, ReviewedTableOut
from quanta.tables import service as tables_service

# Fields of a delta that place it rather than count something.
_NOT_COUNTERS = frozenset(
    ("origin", "schema_name", "table_name", "index_name", "user", "interval_start",
     "interval_end", "reset")
)  # fmt: skip
# Index reads, in order of preference: userstat's rows read, then performance_schema's
# fetch and read operation counts.
_READ_COUNTERS = ("rows_read", "count_fetch", "count_read")
# performance_schema's table I/O write operations, one per row written.
_WRITE_COUNTERS = ("count_insert", "count_update", "count_delete")


class _Delta(Protocol):
    """A row of deltas over one interval, as the ingest wire format carries it
    (quanta.ingest.schemas): described structurally, so this domain does not import ingest,
    which calls it."""

    def model_dump(self, *, exclude_none: bool = ...) -> dict[str, Any]: ...


class TableDelta(_Delta, Protocol):
    """A table's deltas (TableStatIn)."""

    @property
    def schema_name(self) -> str: ...
    @property
    def table_name(self) -> str: ...


class IndexDelta(TableDelta, Protocol):
    """An index's deltas (IndexStatIn); ``index_name`` None: reads using no index."""

    @property
    def index_name(self) -> str | None: ...


class UserDelta(_Delta, Protocol):
    """An account's deltas (UserStatIn)."""

    @property
    def user(self) -> str: ...


def record_statistics(
    *,
    session: Session,
    instance_id: int,
    tables: Sequence[TableDelta],
    indexes: Sequence[IndexDelta],
    users: Sequence[UserDelta],
) -> int:
    """Add a stats batch's deltas to the instance's sums; returns the rows it carried."""
    rows = [_row(instance_id, "table", t.schema_name, t.table_name, "", t) for t in tables]
    rows += [
        _row(instance_id, "index", i.schema_name, i.table_name, i.index_name or "", i)
        for i in indexes
    ]
    rows += [_row(instance_id, "user", "", u.user, "", u) for u in users]
    # One row per key: a batch may carry two intervals of the same object.
    merged: dict[tuple[Any, ...], dict[str, Any]] = {}
    for row in rows:
        key = (row["kind"], row["schema_name"], row["object_name"], row["index_name"])
        merged[key] = _combine(merged[key], row) if key in merged else row
    repository.add(session, list(merged.values()), _combine)
    return len(rows)


def index_reads(*, session: Session, instance_id: int) -> dict[str, dict[str, int]]:
    """Reads per index name, by ``db.table`` (lower case), for the unused-index review.

    Only indexes the agent reported appear; an index of a reported table that is missing
    had no reads (userstat and performance_schema list only indexes that were used, or
    list them with zero).
    """
    usage: dict[str, dict[str, int]] = {}
    for row in repository.of_kind(session, instance_id, "index"):
        if not row.index_name:
            continue
        table = f"{row.schema_name}.{row.object_name}".lower()
        usage.setdefault(table, {})[row.index_name] = _reads(row.counters)
    return usage


def table_write_rates(*, session: Session, instance_id: int) -> dict[str, TableWrites]:
    """Rows inserted, updated and deleted per second, by ``db.table`` (lower case), over the
    period the agent's table statistics cover.

    performance_schema's table I/O counts each operation (count_insert, count_update,
    count_delete); userstat has only rows_changed, which is counted as inserted: a change of
    unknown kind is taken as one that maintains every index (an insert or delete does, an
    update only the indexes with a changed column), so the write cost is not understated.
    Tables without statistics are absent.
    """
    rates: dict[str, TableWrites] = {}
    for row in repository.of_kind(session, instance_id, "table"):
        seconds = (row.until - row.since).total_seconds()
        if seconds <= 0:
            continue
        counters = row.counters
        table = f"{row.schema_name}.{row.object_name}".lower()
        if any(counters.get(k) is not None for k in _WRITE_COUNTERS):
            rates[table] = TableWrites(
                table,
                inserted_per_s=float(counters.get("count_insert") or 0) / seconds,
                updated_per_s=float(counters.get("count_update") or 0) / seconds,
                deleted_per_s=float(counters.get("count_delete") or 0) / seconds,
            )
        elif counters.get("rows_changed") is not None:
            rates[table] = TableWrites(
                table, inserted_per_s=float(counters["rows_changed"]) / seconds
            )
    return rates


def _reads(counters: Mapping[str, Any]) -> int:
    for name in _READ_COUNTERS:
        value = counters.get(name)
        if value is not None:
            return int(value)
    return 0


def _row(
    instance_id: int, kind: str, schema: str, name: str, index: str, delta: _Delta
) -> dict[str, Any]:
    fields = delta.model_dump(exclude_none=True)
    counters = {k: v for k, v in fields.items() if k not in _NOT_COUNTERS}
    return {
        "instance_id": instance_id,
        "kind": kind,
        "schema_name": schema,
        "object_name": name,
        "index_name": index,
        "since": fields["interval_start"],
        "until": fields["interval_end"],
        "resets": int(fields.get("reset", False)),
        "counters": counters,
    }


def _combine(stored: Mapping[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    counters = dict(stored["counters"])
    for name, value in new["counters"].items():
        counters[name] = counters.get(name, 0) + value
    return {
        **new,
        "since": min(stored["since"], new["since"]),
        "until": max(stored["until"], new["until"]),
        "resets": stored["resets"] + new["resets"],
        "counters": counters,
    }


def review_indexes(
    *, session: Session, instance_id: int, min_observed: timedelta, now: datetime
) -> IndexReviewOut:
    """Duplicate, redundant and unused indexes of the instance's snapshotted tables.

    An index is called unused only on a table whose index statistics cover at least
    ``min_observed``: a week of no reads means something, an hour does not.
    """
    find_instance(session=session, instance_id=instance_id)
    document = tables_service.schema_document(session=session, instance_id=instance_id, tables=None)
    if not document["tables"]:
        return IndexReviewOut(findings=[], tables=[])
    observed = _observed_since(session, instance_id)
    reads = index_reads(session=session, instance_id=instance_id)
    usage = {
        table: counts
        for table, counts in reads.items()
        if table in observed and now - observed[table] >= min_observed
    }
    findings = advisor.review_indexes(advisor.parse_schema(document), usage=usage)
    return IndexReviewOut(
        findings=[
            IndexFindingOut(
                table=f.table, index=f.index, kind=f.kind.value, covered_by=f.covered_by or None,
                ddl=f.ddl, reason=f.reason,
            )
            for f in findings
        ],
        tables=[
            ReviewedTableOut(
                table=name, statistics_since=observed.get(name), unused_checked=name in usage
            )
            for name in sorted(document["tables"])
        ],
    )  # fmt: skip


def _observed_since(session: Session, instance_id: int) -> dict[str, datetime]:
    since: dict[str, datetime] = {}
    for row in repository.of_kind(session, instance_id, "index"):
        table = f"{row.schema_name}.{row.object_name}".lower()
        since[table] = min(row.since, since.get(table, row.since))
    return since
