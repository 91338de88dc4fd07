"""Index advisor: the composite index a statement needs, from its SQL and a schema snapshot.

Per table the statement reads (joins, subqueries and derived tables included) the advisor
suggests at most one index, following how the server uses a B-tree:

1. equality columns (``=``, ``<=>``, ``IS NULL``, one-value ``IN``; an inner table's join
   column), an existing index's leading columns first so it can be replaced, then the most
   selective first;
2. then at most one range column (``<``, ``>``, ``BETWEEN``, ``LIKE 'x%'``, a several-value
   ``IN`` before a sort), the most selective; or instead the ORDER BY / GROUP BY columns,
   since an index is in order only after equalities: when a range and a sort compete, both
   candidates are offered; an IN list before a sort with a LIMIT is weighed, (equalities,
   IN, sort) against (equalities, sort), by the rows each reads;
3. then the other columns the query reads, only when covering pays: the query reads enough
   rows per call through the index for the saved primary-key lookups to matter, and the
   added columns are few and narrow next to the row, never the whole row (the policy and
   its thresholds are in :mod:`.cost`; the InnoDB primary key is in every secondary index
   already). A declined covering says why in one sentence.

GROUP BY / DISTINCT with only MIN()/MAX() of one column gets the index a loose index scan
reads one entry per group of ("Using index for group-by"): the group columns, the columns
fixed by equalities, then the MIN()/MAX() column; when the server cannot use one, a note
says why. A range on the first ORDER BY column returns the rows in order, so it is no
competing sort. Every suggestion carries the estimated rows examined per call with the
best existing index and with the new one, and the new index's width in bytes per row.

Nothing is suggested that an existing index serves as a left-most prefix; a table joined on
its primary key needs nothing; a suggested index never ends with the primary key InnoDB
appends; an OR across columns gets one index per branch; UPDATE and DELETE are advised as
their SELECT, never indexing a SET column (unless an equality on it must lead an ORDER BY
... LIMIT). When no index can help, or none pays, the reason says why: a function on the
column, a leading wildcard, a string compared to a number, a column with two values, an
index that would still read more than the scan share of the table (a full scan is
cheaper), a change that saves fewer than 100 rows per call where an existing index already
narrows (see :mod:`.cost`).

Example:
    >>> schema = parse_schema({"server": {"flavor": "mysql", "version": "8.0.36"},
    ...     "tables": {"shop.orders": {"rows": 1000000, "primary_key": ["id"],
    ...         "columns": {"id": {"type": "int"}, "customer_id": {"type": "int"},
    ...                     "created_at": {"type": "datetime"}}}}})
    >>> sql = "select id from orders where customer_id = ? order by created_at desc"
    >>> print(advise(sql, schema, "shop")[0].ddl)
    ALTER TABLE shop.orders ADD INDEX idx_orders_customer_id_created_at (customer_id, created_at)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from quanta.analysis.advisor import cost
from quanta.analysis.advisor.engine import access_rows, advise_access
from quanta.analysis.advisor.existing import FindingKind, IndexFinding, review_table
from quanta.analysis.advisor.model import (
    Action,
    AdviceColumn,
    AdviceError,
    Role,
    Rule,
    TableAccess,
    TableAdvice,
)
from quanta.analysis.advisor.schema import Schema, SchemaError, Table, parse_schema
from quanta.analysis.advisor.statement import normalise_fingerprint, table_accesses

__all__ = [
    "Action",
    "AdviceColumn",
    "AdviceError",
    "FindingKind",
    "IndexFinding",
    "Rule",
    "Schema",
    "SchemaError",
    "TableAdvice",
    "WeighedAccess",
    "advise",
    "normalise_fingerprint",
    "parse_schema",
    "review_indexes",
    "weigh_accesses",
]


def advise(
    sql: str,
    schema: Schema,
    default_db: str | None = None,
    *,
    measured_rows: float | None = None,
) -> list[TableAdvice]:
    """Advise indexes for one statement.

    Args:
        sql: A SELECT, UPDATE, DELETE or INSERT ... SELECT; a real example or a fingerprint.
        schema: The snapshot of the tables it reads (see :func:`parse_schema`).
        default_db: The database of unqualified table names.
        measured_rows: The rows examined per call the server measured for the statement, if
            it did: each advice's ``rows_measured`` is its access's share of them.

    Returns:
        One advice per table access, in the order the tables are written (an OR across
        columns gives one per branch); the same advice twice is given once.

    Raises:
        AdviceError: the statement cannot be parsed or names what the snapshot lacks.

    Example:
        >>> schema = parse_schema({"server": {"flavor": "mariadb", "version": "10.11.6"},
        ...     "tables": {"db.t": {"primary_key": ["id"],
        ...         "columns": {"id": {"type": "int"}, "a": {"type": "int"}}}}})
        >>> sql = "select * from t where a in(?+)"
        >>> [(a.action.value, a.ddl) for a in advise(sql, schema, "db")]
        [('add', 'ALTER TABLE db.t ADD INDEX idx_t_a (a)')]
    """
    advice: list[TableAdvice] = []
    for weighed in weigh_accesses(sql, schema, default_db, measured_rows):
        item = replace(weighed.advice, rows_measured=weighed.measured)
        # The same advice twice (a self-join, a subquery) is given once, with both shares.
        same = next((n for n, a in enumerate(advice) if _unmeasured(a) == _unmeasured(item)), None)
        if same is None:
            advice.append(item)
        elif item.rows_measured is not None:
            found = advice[same]
            total = (found.rows_measured or 0.0) + item.rows_measured
            advice[same] = replace(found, rows_measured=total)
    return advice


def _unmeasured(item: TableAdvice) -> TableAdvice:
    return replace(item, rows_measured=None)


@dataclass(frozen=True)
class WeighedAccess:
    """One table access of a statement (one OR branch of it) with its advice and its rows
    examined per call: the estimate with the existing indexes, and its share of the measured
    rows when the server measured them (the workload planner's unit, and each suggestion's)."""

    access: TableAccess
    table: Table
    advice: TableAdvice
    estimated: int
    measured: float | None


def weigh_accesses(
    sql: str, schema: Schema, default_db: str | None = None, measured_rows: float | None = None
) -> list[WeighedAccess]:
    """The statement's table accesses, each with its advice and rows per call; an OR across
    columns gives one per branch (each its own access, as the advice treats it).

    ``measured_rows`` (rows examined per call the server measured) is split across them by
    their estimates (:func:`quanta.analysis.advisor.cost.split_measured`).

    Raises:
        AdviceError: as :func:`advise`.
    """
    found: list[WeighedAccess] = []
    for access in table_accesses(sql, schema, default_db):
        table = schema.tables[access.table]
        advice = advise_access(access, table, schema.server)
        branches = _or_branches(access) if len(advice) > 1 else [access]
        for branch, item in zip(branches, advice, strict=False):
            estimate = access_rows(branch, table, schema.server)
            found.append(WeighedAccess(branch, table, item, estimate, None))
    if measured_rows is None or not found:
        return found
    parts = cost.split_measured(
        measured_rows, [(w.estimated, w.access.role is Role.DRIVING) for w in found]
    )
    return [replace(w, measured=part) for w, part in zip(found, parts, strict=True)]


def _or_branches(access: TableAccess) -> list[TableAccess]:
    """The accesses the engine advises an OR across columns as: one per branch."""
    return [
        replace(access, predicates=branch, or_branches=(), dml=True)
        for branch in access.or_branches
    ]


def review_indexes(
    schema: Schema,
    tables: Iterable[str] | None = None,
    usage: Mapping[str, Mapping[str, int]] | None = None,
) -> list[IndexFinding]:
    """Find duplicate, redundant and unused existing indexes.

    Args:
        schema: The snapshot.
        tables: The ``db.table`` names to review; default all.
        usage: Index read counts by table then index name (from INDEX_STATISTICS or
            performance_schema); tables without counts get no unused findings.

    Returns:
        The findings, table by table.

    Example:
        >>> schema = parse_schema({"server": {"flavor": "mysql", "version": "8.0.36"},
        ...     "tables": {"db.t": {"primary_key": ["id"], "columns": {
        ...         "id": {"type": "int"}, "a": {"type": "int"}, "b": {"type": "int"}},
        ...         "indexes": [{"name": "ia", "columns": ["a"]},
        ...                     {"name": "iab", "columns": ["a", "b"]}]}}})
        >>> [(f.index, f.kind.value) for f in review_indexes(schema)]
        [('ia', 'redundant')]
    """
    names = list(schema.tables) if tables is None else [t.lower() for t in tables]
    usage = usage or {}
    findings: list[IndexFinding] = []
    for name in names:
        table = schema.tables[name]
        findings += review_table(table, usage.get(name))
    return findings
