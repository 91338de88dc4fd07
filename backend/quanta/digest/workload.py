"""A slow log's digest as the workload the index planner weighs (``quanta advise --workload``).

Each query class becomes a :class:`~quanta.analysis.advisor.workload.WorkloadQuery` (its worst
example as the statement, its calls, load and rows examined); the log's own INSERT, REPLACE,
UPDATE and DELETE classes give each table's write rate: the rows they changed
(``Rows_affected`` where the log has it, else one row per call) over the log's time span.
"""

from __future__ import annotations

from dataclasses import dataclass

from quanta.analysis.advisor.schema import Schema
from quanta.analysis.advisor.workload import TableWrites, WorkloadQuery
from quanta.analysis.digest import Digest, QueryClassDigest
from quanta.analysis.statement import written_table

__all__ = ["DigestWorkload", "workload_from_digest"]

# A log whose events all carry one time (or none) spans this long: calls become calls per
# second as if the log covered one second.
MIN_WINDOW_SECONDS = 1.0
_WRITE_KINDS = {"insert": "inserted", "replace": "inserted", "update": "updated",
                "delete": "deleted"}  # fmt: skip


@dataclass(frozen=True)
class DigestWorkload:
    """The planner's input read from a digest: queries, writes per table, the window."""

    queries: tuple[WorkloadQuery, ...]
    writes: dict[str, TableWrites]
    window_seconds: float


def workload_from_digest(digest: Digest, schema: Schema) -> DigestWorkload:
    """Turn a digest into the planner's input.

    Args:
        digest: The slow log's digest (see :func:`quanta.digest.runner.digest_files`).
        schema: The snapshot, to resolve the tables the writes name.

    Returns:
        Every class as a query (worst first), the write rate of each table written, and the
        log's time span in seconds.
    """
    window = MIN_WINDOW_SECONDS
    if digest.ts_min is not None and digest.ts_max is not None:
        window = max(window, (digest.ts_max - digest.ts_min).total_seconds())
    total = digest.query_time.sum
    queries = []
    rows_written: dict[str, dict[str, float]] = {}
    for query_class in digest.ranked():
        sql, database = _statement(query_class)
        queries.append(
            WorkloadQuery(
                query_id=query_class.query_id,
                sql=sql,
                default_db=database,
                calls=float(query_class.count),
                load=query_class.query_time.sum,
                rows_examined=(
                    query_class.rows_examined.sum if query_class.rows_examined.count else None
                ),
                load_share=query_class.query_time.sum / total if total > 0 else 0.0,
            )
        )
        kind = _WRITE_KINDS.get(query_class.fingerprint.split(" ", 1)[0].lower())
        name = written_table(sql) if kind else None
        table = schema.find_table(name, database) if kind and name else None
        if kind and table is not None:
            affected = query_class.rows_affected
            rows = affected.sum if affected.count else float(query_class.count)
            per_table = rows_written.setdefault(table.name, {})
            per_table[kind] = per_table.get(kind, 0.0) + rows
    writes = {
        name: TableWrites(
            name,
            inserted_per_s=rows.get("inserted", 0.0) / window,
            updated_per_s=rows.get("updated", 0.0) / window,
            deleted_per_s=rows.get("deleted", 0.0) / window,
        )
        for name, rows in sorted(rows_written.items())
    }
    return DigestWorkload(tuple(queries), writes, window)


def _statement(query_class: QueryClassDigest) -> tuple[str, str | None]:
    """The class's worst example (else its fingerprint) and the database it ran in."""
    example = query_class.example
    common = query_class.databases.most_common(1)
    database = common[0][0] if common and common[0][0] else None
    if example is not None:
        return example.query, example.database or database
    return query_class.fingerprint, database
